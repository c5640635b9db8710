"""The fusion formula (slotmem/search/fusion.py) and its plumbing (slotmem/search/hybrid.py)."""

import hashlib

import llm
import pytest
from hypothesis import given
from hypothesis import strategies as st

from slotmem.search import fusion, lexical, plan, relevance
from slotmem.search.query import Query

# A typical semantic leg: its best neighbour, then a slope of weaker ones (spread 0.13, as on
# LoCoMo, gives the legs about equal weight).
SLOPE = {100 + i: 0.42 - 0.01 * i for i in range(20)}


def order(fused):
    return [f.seq for f in fused]


def test_semantic_weight_grows_with_how_far_the_best_neighbour_stands_out():
    assert fusion.semantic_weight([]) == 0.0
    assert fusion.semantic_weight([0.5, 0.5, 0.5]) == 0.0  # no spread: the leg says nothing
    flat = fusion.semantic_weight([0.50] + [0.45] * 20)
    sharp = fusion.semantic_weight([0.70] + [0.45] * 20)
    assert 0 < flat < 0.5 < sharp < 1
    few = fusion.semantic_weight([0.6, 0.3])  # fewer than 10: the spread is to the last
    assert few == pytest.approx(0.3 / (0.3 + fusion.G0))
    # the spread is taken at the 10th candidate: the 11th and later do not change it
    ten = [0.6] + [0.5] * 9
    assert fusion.semantic_weight(ten + [0.0] * 50) == fusion.semantic_weight(ten)


def test_a_weak_common_word_match_does_not_outrank_a_strong_semantic_neighbour():
    """'What time zone is the user in?': one fact matches 'user' (a small share of the
    question's idf mass), the answer shares no word but is the semantic leg's clear best."""
    cosine = {1: 0.62, 2: 0.30, **SLOPE}
    fused = fusion.fuse({2: 0.16}, cosine)
    assert order(fused)[0] == 1
    assert fused[0].lexical_rank is None and fused[0].semantic_rank == 1


def test_a_full_lexical_match_still_wins():
    cosine = {1: 0.55, 2: 0.40, 3: 0.35, **SLOPE}
    fused = fusion.fuse({2: 1.0, 3: 0.3}, cosine)
    assert order(fused)[:3] == [2, 1, 3]
    assert fused[0].lexical_rank == 1 and fused[0].coverage == 1.0


def test_more_coverage_beats_a_little_more_similarity():
    fused = fusion.fuse({1: 0.4, 2: 0.8}, {1: 0.45, 2: 0.40, **SLOPE})
    assert order(fused)[:2] == [2, 1]


def test_coverage_ties_are_decided_by_the_semantic_leg():
    fused = fusion.fuse({1: 0.5, 2: 0.5}, {1: 0.30, 2: 0.45, **SLOPE})
    assert order(fused)[:2] == [2, 1]


def test_one_leg_empty_the_other_order_stands():
    cosine = {5: 0.9, 6: 0.7, 7: 0.2, 8: -0.1}
    only_semantic = fusion.fuse({}, cosine)
    assert order(only_semantic) == [5, 6, 7, 8]
    assert [f.score for f in only_semantic] == [0.9, 0.7, 0.2, 0.0]
    assert {f.semantic_weight for f in only_semantic} == {1.0}
    only_lexical = fusion.fuse({3: 1.0, 1: 0.5, 2: 0.5}, {}, semantic_ranks={})
    assert order(only_lexical) == [3, 1, 2]  # ties keep the lexical leg's order
    assert [f.score for f in only_lexical] == [1.0, 0.5, 0.5]


def test_weights_scale_both_parts():
    fused = fusion.fuse({1: 1.0}, {1: 0.5, 2: 0.5, **SLOPE}, {1: 0.5, 2: 1.0})
    one = next(f for f in fused if f.seq == 1)
    beta = one.semantic_weight
    assert one.lexical_part == pytest.approx(0.5 * (1 - beta))
    assert one.semantic_part == pytest.approx(0.5 * beta * 0.5)
    two = next(f for f in fused if f.seq == 2)
    assert two.score == pytest.approx(beta * 0.5)


@given(
    st.dictionaries(st.integers(0, 60), st.floats(0, 1), max_size=30),
    st.dictionaries(st.integers(0, 60), st.floats(-1, 1), max_size=60),
    st.dictionaries(st.integers(0, 60), st.floats(0, 1.45), max_size=60),
)
def test_scores_are_bounded_and_sorted(coverage, cosine, weight):
    fused = fusion.fuse(coverage, cosine, weight)
    assert {f.seq for f in fused} == set(coverage) | set(cosine)
    for f in fused:
        w = weight.get(f.seq, 1.0)
        assert 0.0 <= f.score <= w + 1e-12
        assert f.score == pytest.approx(f.lexical_part + f.semantic_part)
        assert 0.0 <= f.semantic_weight <= 1.0
    assert [f.score for f in fused] == sorted((f.score for f in fused), reverse=True)


# -- coverage, computed from a real lexical leg -----------------------------------------------
def coverage_of(store, text):
    query = Query.parse(text)
    chosen = plan.plan(store.conn, query.terms)
    rows = lexical.search(store.conn, chosen, store.ranking, slots=None, limit=fusion.DEPTH, now=0)
    total = relevance.query_mass(chosen, query.terms, store.ranking)
    found = {row["seq"]: relevance.coverage(row["mass"], total) for row in rows}
    keys = dict(store.conn.execute("SELECT seq, key FROM memory_facts"))
    return {keys[seq]: value for seq, value in found.items()}


def test_coverage_is_the_share_of_the_query_idf_mass_matched(store):
    store.upsert("user", "a", "alpha bravo")
    store.upsert("user", "b", "alpha charlie")
    store.upsert("user", "c", "delta echo")
    store.upsert("user", "d", "delta foxtrot")
    found = coverage_of(store, "alpha bravo")
    assert found["a"] == pytest.approx(1.0)

    def idf(df):  # a file this small reads idf as if it held relevance.MIN_FACTS facts
        return store.ranking.idf(relevance.MIN_FACTS, df)

    assert found["b"] == pytest.approx(idf(2) / (idf(2) + idf(1)))
    # 'zulu' is in no fact: it counts at df = 0, so matching 'alpha' covers less of the question
    with_absent = coverage_of(store, "alpha zulu")
    assert with_absent["a"] == pytest.approx(idf(2) / (idf(2) + idf(0)))
    assert with_absent["a"] < 0.5


# -- end to end, with a deterministic fake model ------------------------------------------------
CONCEPTS = {
    "timezone": "tz",
    "time": "tz",
    "zone": "tz",
    "hours": "tz",
    "cet": "tz",
    "tea": "drink",
    "coffee": "drink",
    "beverage": "drink",
}


class ConceptEmbeddings(llm.EmbeddingModel):
    """Words hashed into 32 buckets, concept words into one shared bucket each (weighted 3)."""

    model_id = "fusion-fake"

    def embed_batch(self, items):
        for text in items:
            vector = [0.0] * 32
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                concept = CONCEPTS.get(word)
                key = concept or word
                bucket = int(hashlib.md5(key.encode()).hexdigest(), 16) % 32
                vector[bucket] += 3.0 if concept else 1.0
            yield vector


class Plugin:
    @llm.hookimpl
    def register_embedding_models(self, register):
        register(ConceptEmbeddings())


@pytest.fixture
def mem(store):
    llm.pm.register(Plugin(), name="fusion-fake-embeddings")
    store.upsert_many(
        [
            {"slot": "user", "key": "timezone", "value": "Maja keeps CET hours"},
            {"slot": "user", "key": "drinks", "value": "The user likes green tea"},
            {"slot": "user", "key": "editor", "value": "Maja writes code in Neovim"},
            {"slot": "project", "key": "stack", "value": "Python with FastAPI and PostgreSQL"},
            {"slot": "project", "key": "deploy", "value": "We deploy on Fridays after the standup"},
        ]
    )
    store.semantic.reindex("fusion-fake")
    yield store
    llm.pm.unregister(name="fusion-fake-embeddings")


def test_the_semantic_answer_beats_a_common_word_match(mem):
    question = "What time zone is the user in?"
    assert [h.fact.key for h in mem.query_facts(question, semantic=False)] == ["drinks"]
    hits = mem.query_facts(question, explain=True, track_access=False)
    assert hits[0].fact.key == "timezone"
    parts = hits[0].explanation
    assert parts["lexical_rank"] is None and parts["semantic_rank"] == 1 and parts["coverage"] == 0
    assert hits[0].score == parts["fused"]
    assert parts["fused"] == pytest.approx(parts["lexical_part"] + parts["semantic_part"])
    drinks = next(h for h in hits if h.fact.key == "drinks").explanation
    assert 0 < drinks["coverage"] < 0.5 and drinks["lexical_rank"] == 1
    assert drinks["lexical_score"] > 0 and drinks["terms"]


def test_a_full_match_wins_and_explain_does_not_change_the_order(mem):
    for question in ["green tea", "FastAPI PostgreSQL", "What time zone is the user in?", "coffee"]:
        plain = mem.query_facts(question, track_access=False)
        explained = mem.query_facts(question, explain=True, track_access=False)
        assert [(h.fact.key, h.score) for h in plain] == [(h.fact.key, h.score) for h in explained]
    assert mem.query_facts("green tea", track_access=False)[0].fact.key == "drinks"
    assert mem.query_facts("FastAPI PostgreSQL", track_access=False)[0].fact.key == "stack"
    assert mem.query_facts("which beverage?", track_access=False)[0].fact.key == "drinks"
