"""What a hybrid search shares between its parts gives the hits it gave when each part ran
alone: the stored vectors read once for the vector leg and the lexical candidates."""

import hashlib
import random

import llm
import pytest

from slotmem import search
from slotmem.vectors.semantic import Semantic

WORDS = [f"w{i:03d}" for i in range(150)]


class WordVectors(llm.EmbeddingModel):
    """A text's vector is the sum of its words' (each a fixed random one): facts that share
    words with a question are near it, as with a real model, and every vector is dense."""

    model_id, dimensions = "fake-words", 48

    def embed_batch(self, items):
        for text in items:
            vector = [0.0] * self.dimensions
            for word in text.lower().replace(":", " ").replace(".", " ").split():
                rng = random.Random(hashlib.sha256(word.encode()).digest())
                for i in range(self.dimensions):
                    vector[i] += rng.gauss(0.0, 1.0)
            yield vector


class Plugin:
    """Registers ``WordVectors`` (or a subclass: each test module its own model id)."""

    def __init__(self, model=WordVectors):
        self.model = model

    @llm.hookimpl
    def register_embedding_models(self, register):
        register(self.model())


@pytest.fixture
def mem(store):
    llm.pm.register(Plugin(), name="word-vectors")
    rng = random.Random(7)
    weights = [1.0 / (rank + 1) for rank in range(len(WORDS))]  # a few words in most facts
    facts = []
    for i in range(600):
        words = rng.choices(WORDS, weights, k=rng.randint(4, 12))
        facts.append(
            {
                "slot": ("user", "project", "agent")[i % 3],
                "key": f"{words[0]}.{words[-1]}.n{i}",
                "value": " ".join(words),
                "confidence": (1.0, 0.9, 0.7)[i % 3],
            }
        )
    store.upsert_many(facts)
    for i in range(0, 600, 4):
        store.tag(facts[i]["slot"], facts[i]["key"], "fourth")
    store.semantic.reindex("fake-words")
    yield store
    llm.pm.unregister(name="word-vectors")


def questions() -> list[str]:
    rng = random.Random(11)
    found = [WORDS[0], WORDS[120], f"{WORDS[2]} {WORDS[140]}", "nothing here matches"]
    found += [" ".join(rng.sample(WORDS[:20], 4)) for _ in range(6)]  # common words
    found += [" ".join(rng.sample(WORDS[60:], 3)) for _ in range(6)]  # rare ones
    found += [" ".join(rng.sample(WORDS, rng.randint(2, 8))) for _ in range(8)]
    return found


OPTIONS = [
    {},
    {"slots": ["user"]},
    {"limit": 30},
    {"min_relevance": 0.3},
    {"min_relevance": 0.6, "slots": ["user", "agent"]},
    {"min_score": 0.5},
    {"tags": ["fourth"], "min_relevance": 0.2},
    {"explain": True, "limit": 8},
]


def hits(store) -> list:
    return [
        [
            (hit.fact.id, hit.score, hit.relevance, hit.explanation)
            for hit in store.query_facts(text, track_access=False, **options)
        ]
        for text in questions()
        for options in OPTIONS
    ]


def knn_then_distances(self, blob, slots, k, others, candidates=None, stored=None):
    """Semantic.nearest as a hybrid search did it before: the kNN, then the others' distances."""
    neighbours = self.knn(blob, slots, k)
    measured = dict(neighbours)
    measured.update(self.distances(blob, [seq for seq in others if seq not in measured]))
    return neighbours, measured


def test_one_read_of_the_vectors_gives_the_hits_two_gave(mem, monkeypatch):
    shared = hits(mem)
    assert sum(map(len, shared)) > 500  # the questions find things
    monkeypatch.setattr(Semantic, "nearest", knn_then_distances)
    assert hits(mem) == shared


def test_nearest_is_knn_and_distances(mem):
    for text in questions():
        blob = mem.semantic.query_vector(text)
        for slots in (None, ["user"], ["project", "agent"]):
            others = [1, 2, 3, 500, 599, 10_000]  # 10,000: no such fact
            neighbours, measured = mem.semantic.nearest(blob, slots, 64, others)
            assert neighbours == mem.semantic.knn(blob, slots, 64)
            expected = dict(neighbours) | mem.semantic.distances(blob, others)
            assert {seq: measured[seq] for seq in expected} == expected


def test_a_hybrid_search_reads_the_stored_vectors_once(mem):
    reads = []
    mem.semantic.query_vector(WORDS[3])  # the question's vector first: its reads are not counted
    mem.conn.set_trace_callback(
        lambda sql: reads.append(sql) if "FROM memory_embeddings" in sql else None
    )
    try:
        assert mem.query_facts(WORDS[3], track_access=False)
    finally:
        mem.conn.set_trace_callback(None)
    assert len(reads) == 1


def test_one_lexical_search_gives_the_hits_two_gave(mem, monkeypatch):
    """A hybrid search whose leg and search by words alone plan the same terms runs the plan's
    arms once (``lexical.search_both``): the same hits, scores and relevance as two searches."""
    shared = hits(mem)
    monkeypatch.setattr(search, "SHARED", False)
    assert hits(mem) == shared


def fts_statements(store, text: str, **options) -> int:
    found = []
    store.conn.set_trace_callback(
        lambda sql: found.append(sql) if "memory_facts_fts MATCH" in sql else None
    )
    try:
        store.query_facts(text, track_access=False, **options)
    finally:
        store.conn.set_trace_callback(None)
    return len(found)


@pytest.mark.parametrize("options", [{}, {"min_relevance": 0.3, "slots": ["user"]}])
def test_a_rare_word_hybrid_search_runs_its_terms_once(mem, options, monkeypatch):
    mem.semantic.query_vector(f"{WORDS[120]} {WORDS[130]}")  # embedded before: not counted
    assert fts_statements(mem, f"{WORDS[120]} {WORDS[130]}", **options) == 1
    # common words capped within the hybrid leg's budget: two searches, as before, unless the
    # search by words alone keeps every one of their postings within plan.SHARED_BUDGET
    with_common = f"{WORDS[0]} {WORDS[1]} {WORDS[2]} {WORDS[3]} {WORDS[4]} {WORDS[130]}"
    planning = search.plan
    chosen = planning.plan(mem.conn, search.Query.parse(with_common).terms, planning.HYBRID_BUDGET)
    alone = planning.choose(list(chosen.every), chosen.facts)
    assert chosen != alone and not alone.dropped  # capped in the leg, every posting alone
    assert fts_statements(mem, with_common, **options) == 1
    monkeypatch.setattr(planning, "SHARED_BUDGET", sum(arm.df for arm in alone.arms) - 1)
    assert fts_statements(mem, with_common, **options) > 1


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"slots": ["user"]},
        {"min_score": 6.0},
        {"min_score": 9.0},
        {"min_relevance": 0.9},
        {"min_relevance": 0.97, "slots": ["user", "agent"]},
        {"tags": ("fourth",), "since": 0},
    ],
)
@pytest.mark.parametrize("old_sqlite", [False, True])
def test_both_orders_of_one_statement_are_the_two_searches(mem, options, old_sqlite, monkeypatch):
    """``lexical.search_both``'s two lists are, row for row, what ``lexical.search`` gives for
    each order alone: the same facts in the same order, ties (the same words and confidence:
    the facts below repeat one value) broken the same way, the filters applied to each; and
    the same where SQLite is older than the MATERIALIZED hint."""
    lexical, planning = search.lexical, search.plan
    if old_sqlite:
        monkeypatch.setattr(lexical, "materialized", lambda module: "")
    mem.upsert_many(
        [{"slot": "user", "key": f"twin.{i}", "value": f"{WORDS[3]} {WORDS[70]}"} for i in range(8)]
    )
    now = mem.clock()
    filtered = 0  # candidates a score filter left out of the second list (and not the first)
    for text in [f"{WORDS[3]} {WORDS[70]}", WORDS[0], *questions()[4:12]]:
        terms = search.Query.parse(text).terms
        chosen = planning.plan(mem.conn, terms, None)
        if not chosen:
            continue
        total = search.relevance.query_mass(chosen, terms, mem.ranking)
        present, scored = lexical.search_both(
            mem.conn, chosen, mem.ranking, depth=20, limit=7, now=now, total=total,
            slots=options.get("slots"), min_score=options.get("min_score"),
            min_relevance=options.get("min_relevance"), tags=options.get("tags", ()),
            since=options.get("since"),
        )  # fmt: skip
        filters = {name: options.get(name) for name in ("slots", "since")}
        filters["tags"] = options.get("tags", ())
        by_presence = lexical.search(
            mem.conn, chosen, mem.ranking, limit=20, now=now, tf=False, **filters
        )
        by_score = lexical.search(
            mem.conn, chosen, mem.ranking, limit=7, now=now, total=total, **filters,
            min_score=options.get("min_score"), min_relevance=options.get("min_relevance"),
        )  # fmt: skip
        assert [(r["seq"], r["pscore"]) for r in present] == [
            (r["seq"], r["score"]) for r in by_presence
        ]
        assert [(r["seq"], r["score"]) for r in scored] == [
            (r["seq"], r["score"]) for r in by_score
        ]
        unfiltered = lexical.search(mem.conn, chosen, mem.ranking, limit=7, now=now, **filters)
        filtered += len(unfiltered) - len(by_score)
    scoring = {"min_score", "min_relevance"} & set(options)
    assert bool(filtered) == bool(scoring)  # the filters tested do filter


def test_the_materialized_hint_only_where_sqlite_knows_it(monkeypatch):
    """SQLite 3.35 brought ``MATERIALIZED``; an older library would refuse the statement."""
    import sys
    import types

    lexical = search.lexical
    for version, hint in (
        ((3, 34, 1), ""),
        ((3, 35, 0), "MATERIALIZED"),
        ((3, 50, 4), "MATERIALIZED"),
    ):
        module = types.ModuleType(f"fake_sqlite_{version[1]}")
        module.sqlite_version_info = version  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
        assert lexical.materialized(module.__name__) == hint
    assert lexical.materialized("not_a_driver") == ""


def test_the_stores_connection_gets_the_hint_its_sqlite_allows(mem):
    """The hint is read from the module of the connection the Store really holds: a wrapped or
    renamed connection would quietly lose it (the same rows, the arms run twice)."""
    (version,) = mem.conn.execute("SELECT sqlite_version()").fetchone()
    allows = tuple(map(int, version.split("."))) >= (3, 35, 0)
    hint = search.lexical.materialized(type(mem.conn).__module__)
    assert hint == ("MATERIALIZED" if allows else "")
