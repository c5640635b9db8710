"""The contract of slotmem.pg's lexical score: on the same facts, a search on PostgreSQL returns
the file's top 10, the same facts in the same order with the same scores (after the statistics
are refreshed, as prune does)."""

import random

import pytest

from slotmem import Store

TOPICS = (
    "marta jonas lisbon porto berlin coffee tea python rust postgres sqlite memory agent "
    "project deadline friday meeting budget design review garden piano running marathon "
    "vegetarian allergy peanuts daughter school teacher flight hotel invoice server deploy "
    "kubernetes docker release bug ticket customer contract lawyer doctor dentist birthday "
    "anniversary gift book novel chess football guitar painting camera lens hiking trail"
)
FILLERS = "the and with for likes prefers works lives uses"  # in most facts
WORDS, COMMON = TOPICS.split(), FILLERS.split()
SLOTS = ["user", "project", "agent.notes", "friends"]


def corpus(n=320, seed=7):
    rng = random.Random(seed)
    facts = []
    for i in range(n):
        topic = rng.sample(WORDS, rng.randint(1, 3))
        common = rng.sample(COMMON, rng.randint(1, 4))
        words = topic + common + rng.sample(WORDS, rng.randint(0, 6))
        rng.shuffle(words)
        if rng.random() < 0.2:  # repeated words: term frequencies above 1
            words += topic[:1] * rng.randint(1, 3)
        key = f"{'.'.join(topic[:2])}.{i}" if rng.random() < 0.7 else f"note {i}"
        facts.append(
            {
                "slot": rng.choice(SLOTS),
                "key": key,
                "value": " ".join(words).capitalize() + ".",
                "confidence": rng.choice([1.0, 1.0, 0.9, 0.6]),
            }
        )
    return facts


def queries(seed=11):
    rng = random.Random(seed)
    found = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(30)]
    found += [f"what {c} {w}?" for c, w in zip(COMMON, rng.sample(WORDS, len(COMMON)))]
    found += ["the", "likes and prefers", "Marta", "Where does Marta live?", "piano lessons"]
    found += ["kubernetes deploy friday", "who is the dentist", "nothing-matches-this", "xyzzy"]
    found += ["LISBON café", "running runs ran", "Jonas's birthday gift"]
    return found


@pytest.fixture
def both(tmp_path, pg_url, clock):
    facts = corpus()
    with (
        Store(tmp_path / "m.db", create=True, clock=clock) as file,
        Store(pg_url, create=True, clock=clock) as server,
    ):
        file.upsert_many(facts)
        server.upsert_many(facts)
        for i, item in enumerate(facts[:40]):  # feedback moves scores: the same on both
            for store in (file, server):
                store.rate(item["slot"], item["key"], (i % 7) - 3)
        for item in facts[::5]:  # a tag on a fifth of them: the filter is the same on both
            for store in (file, server):
                store.tag(item["slot"], item["key"], "fifth")
        server.refresh_statistics()
        yield file, server


def ranked(store, text, **options):
    return [
        (hit.fact.slot, hit.fact.key, round(hit.score, 9), round(hit.relevance, 9))
        for hit in store.query_facts(text, track_access=False, **options)
    ]


def test_top_10s_are_the_files(both):
    file, server = both
    asked = queries()
    assert len(asked) >= 50
    answered = 0
    for text in asked:
        expected = ranked(file, text)
        assert ranked(server, text) == expected, text
        answered += bool(expected)
    assert answered >= 45  # the corpus answers most of them: the comparison is not vacuous


def test_top_10s_with_slots_floors_and_presence(both):
    file, server = both
    for text in queries()[:20]:
        for options in (
            {"slots": ["user", "friends"]},
            {"slots": "agent.*"},
            {"min_relevance": 0.3},
            {"limit": 3},
            {"tags": ["fifth"]},
        ):
            assert ranked(server, text, **options) == ranked(file, text, **options), (text, options)


CAPPED = ["likes prefers works", "coffee tea python rust", "the and with for"]


@pytest.mark.parametrize("every", [True, False], ids=["every-posting", "newest-postings"])
def test_capped_common_terms_score_as_the_file(both, monkeypatch, every):
    """With a tiny postings budget the plan (slotmem.search.plan, shared) drops or caps common
    terms. Both stores then score every posting of every word, the best candidates by presence
    exactly (slotmem/search/common.py, slotmem/pg/common.py), or, with that path off, the
    same newest postings of the capped terms."""
    from slotmem.search import common, plan
    from slotmem.search.terms import parse

    file, server = both
    monkeypatch.setattr(plan, "POSTINGS_BUDGET", 40)
    monkeypatch.setattr(common, "CANDIDATES", 25)  # fewer than match: the cut is tested too
    monkeypatch.setattr(common, "ENABLED", every)
    for text in CAPPED:
        for options in (
            {},
            {"slots": ["user", "friends"]},
            {"tags": ["fifth"]},
            {"limit": 3},
            {"min_relevance": 0.3},
        ):
            assert ranked(server, text, **options) == ranked(file, text, **options), (text, options)
    for text in queries():  # 31 of the 51 take the path with this budget
        assert ranked(server, text) == ranked(file, text), text
    for text in CAPPED[:2]:  # (the third is stop words alone: nothing to plan)
        assert common.applies(plan.plan(file.conn, parse(text))) is every, text
        mine = server.query_facts(text, explain=True, track_access=False)
        assert bool(mine[0].explanation["ignored"]) is not every


def test_explanations_agree(both):
    file, server = both
    mine = server.query_facts("marta coffee lisbon", explain=True, track_access=False)
    theirs = file.query_facts("marta coffee lisbon", explain=True, track_access=False)
    assert mine and len(mine) == len(theirs)
    for a, b in zip(mine, theirs):  # the file's bm25 passes through text (15 digits)
        assert a.explanation["terms"].keys() == b.explanation["terms"].keys()
        for term, part in a.explanation["terms"].items():
            assert part == pytest.approx(b.explanation["terms"][term], rel=1e-12)


def test_episode_search_is_the_files(tmp_path, pg_url, clock):
    """search_episodes on the server ranks a small corpus of episodes as the file does: the
    same episodes, in the same order, with the same scores."""
    items = corpus(n=60, seed=11)
    with (
        Store(tmp_path / "e.db", create=True, clock=clock) as file,
        Store(pg_url, create=True, clock=clock) as server,
    ):
        for number, item in enumerate(items):
            for store in (file, server):
                store.record_episode(
                    item["value"],
                    slot="runs" if number % 3 else "episodes",
                    key=item["key"],
                    run=f"r{number}",
                    session=f"s{number % 2}",
                    confidence=item["confidence"],
                )
            clock.advance(ms=1)
        server.refresh_statistics()

        def found(store, text, **options):
            hits = store.search_episodes(
                text, limit=8, semantic=False, track_access=False, **options
            )
            return [
                (h.episode.slot, h.episode.key, h.episode.run, round(h.search_score, 9),
                 round(h.relevance, 9))
                for h in hits
            ]  # fmt: skip

        answered = 0
        for text in queries()[:25]:
            expected = found(file, text)
            assert found(server, text) == expected, text
            assert found(server, text, session="s1") == found(file, text, session="s1"), text
            answered += bool(expected)
        assert answered >= 20
