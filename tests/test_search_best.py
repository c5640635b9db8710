"""A lexical search's cheaper statement (``lexical.best``: the candidates ranked by seq and score,
then the best joined to their facts and tags) gives the very hits of the full one
(``lexical.search``, then the tags read apart), field for field."""

import pytest

from slotmem.search import Query, lexical, run

WORDS = ["deploy", "friday", "standup", "python", "postgres", "release", "notes", "train"]


def _fill(store, clock):
    for i in range(60):
        words = [WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5)]
        tags = [["ops", "alpha"], ["zeta", "beta", "ops"], [], ["ops"]][i % 4]
        store.upsert(
            ["project", "user", "agent"][i % 3],
            f"note.{i}" if i % 5 else f"{words[0]}.{i}",
            " ".join(words) + f" number {i}" + " deploy" * (i % 3),
            confidence=0.3 + (i % 7) / 10,
            tags=tags,
            ttl="1h" if i % 11 == 0 else None,
        )
        clock.advance(ms=1000)
    store.rate("project", "note.3", 2)
    clock.advance(ms=2 * 3_600_000)  # the facts with a ttl have expired


QUERIES = [
    "deploy friday",
    "standup notes release",
    "python postgres train deploy",
    "number 7",
    "zzz nothing",
]
OPTIONS = [
    {},
    {"min_relevance": 0.003},
    {"min_score": 5.0},
    {"tags": ("ops",)},
    {"slots": ("project", "user")},
    {"limit": 3},
]


@pytest.mark.parametrize("options", OPTIONS, ids=range(len(OPTIONS)))
def test_best_gives_the_hits_of_the_full_statement(store, clock, options):
    _fill(store, clock)
    for text in QUERIES:
        found = store.query_facts(text, semantic=False, track_access=False, **options)
        query = Query.parse(text, **{"limit": 10, **options})
        full = store._tagged(
            run(store.conn, query, ranking=store.ranking, now=store.clock(), freqs=None)
        )
        assert found == full
        assert [hit.relevance for hit in found] == [hit.relevance for hit in full]


def test_best_reads_each_facts_tags_sorted(store, clock):
    _fill(store, clock)
    hits = store.query_facts("deploy", semantic=False, track_access=False, limit=50)
    tagged = {hit.fact.key: hit.fact.tags for hit in hits}
    assert ("alpha", "ops") in tagged.values()
    assert ("beta", "ops", "zeta") in tagged.values()
    assert () in tagged.values()
    for hit in hits:
        assert hit.fact.tags == store.get(hit.fact.slot, hit.fact.key).tags


def test_best_rows_are_the_full_rows_ordered_alike(store, clock):
    _fill(store, clock)
    query = Query.parse("deploy friday standup")
    from slotmem.search import plan

    chosen = plan.plan(store.conn, query.terms)
    now = store.clock()
    full = lexical.search(store.conn, chosen, store.ranking, slots=None, limit=20, now=now)
    best = lexical.best(store.conn, chosen, store.ranking, slots=None, limit=20, now=now)
    assert [row["seq"] for row in full] and len(full) == len(best)
    assert [row["id"] for row in full] == [row[0] for row in best]
    assert [row["score"] for row in full] == [row[-2] for row in best]
