"""A hybrid search that skips its search by words alone (search/bound.py) gives exactly the hits
it gave when that search ran, and runs it whenever the bound cannot prove it needless."""

import dataclasses
import gzip
import random

import llm
import pytest

from slotmem import search
from slotmem.search import bound, common, relevance, terms
from slotmem.search.lexical import Ranking
from slotmem.search.relevance import Calibration
from tests.test_hybrid_share import Plugin
from tests.test_hybrid_share import WordVectors as SharedWordVectors


def vocabulary() -> list[str]:
    """100 of English's commonest words (specificity 0: what a common-word question asks)
    then 50 invented ones (as specific as names)."""
    listed = gzip.decompress((relevance.PACKAGE / relevance.COMMON_WORDS).read_bytes())
    common_words = [
        word
        for word in listed.decode().split()[100:400]
        if word.isalpha() and len(word) > 3 and word not in terms.STOPWORDS
    ]
    return common_words[:100] + [f"zq{i:02d}x" for i in range(50)]


WORDS = vocabulary()


class WordVectors(SharedWordVectors):
    """test_hybrid_share's model (a text's vector is the sum of its words') under its own id."""

    model_id = "fake-words-bound"


@pytest.fixture(autouse=True)
def budgeted(monkeypatch):
    """A hybrid leg within its own budget, as in a large file (with this file's few facts most
    plans would be shared: plan.SHARED_BUDGET), so that the bound runs apart."""
    monkeypatch.setattr(search.plan, "SHARED_BUDGET", 0)


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    """1,500 facts: the commonest words are in more than 1,000 of them, so questions of them
    are planned as common-word questions (dropped words, common.py), others within budgets."""
    from slotmem import Store

    llm.pm.register(Plugin(WordVectors), name="word-vectors-bound")
    rng = random.Random(5)
    weights = [1.0 / (rank + 1) for rank in range(len(WORDS))]
    facts = []
    for i in range(1500):
        words = rng.choices(WORDS, weights, k=rng.randint(4, 14))
        facts.append(
            {
                "slot": ("user", "project", "agent")[i % 3],
                "key": f"{words[0]}.{rng.choice(WORDS)}.n{i}",
                "value": " ".join(words),
                "confidence": (1.0, 0.9, 0.6)[i % 3],
            }
        )
    with Store(tmp_path_factory.mktemp("bound") / "m.db", create=True) as store:
        store.upsert_many(facts)
        for i in range(0, 1500, 5):
            store.tag(facts[i]["slot"], facts[i]["key"], "fifth")
        store.semantic.reindex("fake-words-bound")
        yield store
    llm.pm.unregister(name="word-vectors-bound")


def questions(count: int = 60) -> list[str]:
    rng = random.Random(13)
    found = [WORDS[0], f"{WORDS[0]} {WORDS[1]} {WORDS[2]}", "nothing matches", WORDS[149]]
    found += [" ".join(rng.sample(WORDS[:12], rng.randint(2, 5))) for _ in range(count)]
    found += [" ".join(rng.sample(WORDS[:60], rng.randint(3, 8))) for _ in range(count)]
    found += [" ".join(rng.choices(WORDS, k=rng.randint(2, 10))) for _ in range(count)]
    return found


OPTIONS = [
    {},
    {"slots": ["user"]},
    {"slots": ["project", "agent"], "limit": 5},
    {"limit": 25},
    {"tags": ["fifth"]},
    {"min_score": 0.3},
]


def hits(store, options_list=OPTIONS) -> list:
    return [
        [
            (hit.fact.id, hit.score, hit.relevance, hit.explanation, hit.fact.tags)
            for hit in store.query_facts(text, track_access=False, **options)
        ]
        for text in questions()
        for options in options_list
    ]


@pytest.fixture
def counted(monkeypatch):
    """How often a hybrid search ran its search by words alone, and how often it was proven
    needless."""
    calls = {"alone": 0, "proven": 0, "asked": 0}
    lexical, unchanged = search._lexical, bound.unchanged

    def alone(*args, **kwargs):
        calls["alone"] += 1
        return lexical(*args, **kwargs)

    def proven(*args, **kwargs):
        calls["asked"] += 1
        found = unchanged(*args, **kwargs)
        calls["proven"] += found
        return found

    monkeypatch.setattr(search, "_lexical", alone)
    monkeypatch.setattr(bound, "unchanged", proven)
    return calls


def test_the_bound_gives_the_hits_the_search_by_words_alone_gave(mem, monkeypatch, counted):
    fast = hits(mem)
    asked, proven = counted["asked"], counted["proven"]
    monkeypatch.setattr(bound, "ENABLED", False)
    assert hits(mem) == fast
    assert sum(map(len, fast)) > 3000  # the questions find things
    # the bound was asked often, proved often, and failed often (then the words alone ran)
    assert asked > 400
    assert 20 < proven < asked - 100


def test_skipping_the_words_alone_without_the_bound_would_change_hits(mem, monkeypatch):
    """The bound is what keeps the hits: taking every search as proven loses relevance the
    words alone gave (so the test above would see a skip the bound should not allow)."""
    fast = hits(mem)
    monkeypatch.setattr(search, "_unchanged", lambda conn, query, alone, hits, ranking, freqs: True)
    assert hits(mem) != fast


def test_the_common_word_path_is_among_the_proven(mem, counted):
    """Questions with words too common to plan (dropped, scored by common.py when the words
    alone run) are proven too, and give the same hits (the first test)."""
    proven = 0
    for text in questions():
        chosen = search.plan.plan(mem.conn, search.Query.parse(text).terms)
        if not common.applies(chosen):
            continue
        for options in OPTIONS:
            before = counted["proven"]
            mem.query_facts(text, track_access=False, **options)
            proven += counted["proven"] - before
    assert proven >= 5


@pytest.mark.parametrize(
    "options",
    [{"min_relevance": 0.001}, {"min_relevance": 0.2, "slots": ["user"]}, {"explain": True}],
)
def test_a_floor_or_an_explanation_runs_the_words_alone(mem, counted, options):
    for text in questions(10):
        mem.query_facts(text, track_access=False, **options)
    assert counted["proven"] == 0
    assert counted["alone"] > 0


def test_not_proven_inside_a_transaction(mem, counted):
    text = f"{WORDS[0]} {WORDS[1]} {WORDS[2]}"
    outside = mem.query_facts(text, track_access=False)
    assert counted["proven"] == 1
    with mem.transaction():
        inside = mem.query_facts(text, track_access=False)
    assert counted["proven"] == 1 and counted["alone"] >= 1
    assert [hit.fact.id for hit in inside] == [hit.fact.id for hit in outside]


def test_not_proven_when_the_postings_do_not_fit(mem, monkeypatch, counted):
    text = f"{WORDS[0]} {WORDS[1]} {WORDS[2]}"
    mem.query_facts(text, track_access=False)
    assert counted["proven"] == 1
    postings = common.Postings(max_bytes=64)
    monkeypatch.setattr(common, "postings_of", lambda freqs: postings)
    mem.query_facts(text, track_access=False)
    assert counted["proven"] == 1


def in_memory(mem, chosen) -> common.Postings:
    """The postings of every word of the plan, in memory (as common.py's search leaves them)."""
    postings = common.Postings()
    state = common.structure(mem.conn)
    for arm in chosen.every:
        postings.get(mem.conn, arm.match, state)
    return postings


def test_not_proven_with_a_lexical_constant_below_zero(mem):
    """The bound needs relevance to grow with what a fact holds: a calibration whose lexical
    coverage, matched, key or specificity constant is negative is never proven."""
    text = f"{WORDS[0]} {WORDS[1]} {WORDS[2]}"
    query = search.Query.parse(text)
    chosen = search.plan.plan(mem.conn, query.terms)
    hits = mem.query_facts(text, track_access=False)
    assert hits

    postings = in_memory(mem, chosen)

    def proven(ranking):
        return bound.unchanged(
            mem.conn, query, chosen, hits, ranking, lambda keys: dict.fromkeys(keys, 0.0),
            postings,
        )  # fmt: skip

    assert proven(Ranking())
    for i in (1, 2, 4, 6):  # coverage, matched, key, specificity
        constants = list(Calibration().lexical)
        constants[i] = -0.5
        ranking = Ranking(calibration=dataclasses.replace(Calibration(), lexical=tuple(constants)))
        assert not proven(ranking)


def test_a_hit_raised_by_its_words_is_not_proven(mem):
    """A hybrid hit below the relevance its words alone would give it fails the bound."""
    text = f"{WORDS[0]} {WORDS[1]} {WORDS[2]}"
    query = search.Query.parse(text)
    chosen = search.plan.plan(mem.conn, query.terms)
    hits = mem.query_facts(text, track_access=False)

    postings = in_memory(mem, chosen)

    def proven(found, postings=postings):
        return bound.unchanged(
            mem.conn, query, chosen, found, Ranking(), lambda keys: dict.fromkeys(keys, 0.0),
            postings,
        )  # fmt: skip

    assert proven(hits)
    lowered = [dataclasses.replace(hits[0], relevance=0.0), *hits[1:]]
    assert not proven(lowered)
    assert proven([])  # nothing to raise
    gone = dataclasses.replace(hits[0].fact, id="not-a-fact")  # deleted meanwhile
    assert not proven([dataclasses.replace(hits[0], fact=gone), *hits[1:]])


def test_a_word_not_in_memory_counts_as_held_and_nothing_is_read(mem):
    """The bound reads no postings: a word whose postings are not in memory is taken as held by
    every hit (a hit holding none of the words in memory is still bounded by the others)."""
    text = f"{WORDS[0]} {WORDS[1]} {WORDS[2]}"
    query = search.Query.parse(text)
    chosen = search.plan.plan(mem.conn, query.terms)
    hits = mem.query_facts(text, track_access=False)
    lowered = [dataclasses.replace(hit, relevance=1e-9) for hit in hits]
    statements = []
    mem.conn.set_trace_callback(statements.append)
    try:
        proven = bound.unchanged(
            mem.conn, query, chosen, lowered, Ranking(), lambda keys: dict.fromkeys(keys, 0.0),
            common.Postings(),
        )  # fmt: skip
    finally:
        mem.conn.set_trace_callback(None)
    assert not proven  # taken as not held, these hits would pass with nothing to raise them
    assert not [sql for sql in statements if "MATCH" in sql]


@pytest.fixture
def stopwords(store):
    """Facts found by meaning alone by a question of stopwords: the nearest has the lower
    confidence, so the fusion (which weighs confidence) and relevance order them apart."""
    llm.pm.register(Plugin(WordVectors), name="word-vectors-bound-small")
    rng = random.Random(3)
    facts = [
        {"slot": "user", "key": f"filler.n{i}", "value": " ".join(rng.sample(WORDS, 6))}
        for i in range(30)
    ]
    facts.append({"slot": "user", "key": "near.a", "value": "what is the", "confidence": 0.3})
    facts.append({"slot": "user", "key": "near.b", "value": "what is the zq01x zq02x"})
    facts.append({"slot": "user", "key": "place", "value": "東京 zq03x"})
    store.upsert_many(facts)
    store.semantic.reindex("fake-words-bound")
    yield store
    llm.pm.unregister(name="word-vectors-bound-small")


@pytest.mark.parametrize("floor", [None, 1e-6])
def test_a_question_of_stopwords_alone_is_ordered_as_before(stopwords, monkeypatch, floor):
    """No term to search by words (every word a stopword): with a floor, search.monotone orders
    the hits most relevant first, and the bound must leave that to it."""

    def found():
        hits = stopwords.query_facts("what is the", track_access=False, min_relevance=floor)
        return [(hit.fact.key, hit.score, hit.relevance) for hit in hits]

    fast = found()
    assert {"near.a", "near.b"} <= {key for key, _, _ in fast}
    monkeypatch.setattr(bound, "ENABLED", False)
    assert found() == fast
    if floor is not None:
        assert [r for _, _, r in fast] == sorted((r for _, _, r in fast), reverse=True)


def test_not_proven_for_a_cjk_term_or_without_numpy(stopwords, monkeypatch):
    def proven(text):
        query = search.Query.parse(text)
        chosen = search.plan.plan(stopwords.conn, query.terms)
        hits = stopwords.query_facts(text, track_access=False)
        assert hits and chosen
        postings = in_memory(stopwords, chosen)
        lowest = [dataclasses.replace(hit, relevance=1.0) for hit in hits]  # nothing to raise
        return bound.unchanged(
            stopwords.conn, query, chosen, lowest, Ranking(),
            lambda keys: dict.fromkeys(keys, 0.0), postings,
        )  # fmt: skip

    assert proven("zq03x")
    assert not proven("東京 zq03x")  # a CJK gram: its postings are not the word index's
    monkeypatch.setattr(common, "ENABLED", False)  # as without numpy
    assert not proven("zq03x")


def mixed(count: int = 40) -> list[str]:
    """Questions of words in 5-15% of the facts (capped in the hybrid leg, not in the search by
    words alone: the two do not share a statement) and one rarer word (rank 60 onwards)."""
    rng = random.Random(17)
    return [
        " ".join(rng.sample(WORDS[12:40], rng.randint(1, 4)) + [rng.choice(WORDS[60:])])
        for _ in range(count)
    ]


EARLY_RATE = search.EARLY_RATE  # the default, before a test sets it


def early_hits(store, monkeypatch, rate: float, options_list=OPTIONS) -> tuple[list, int]:
    """Every question's hits (``questions`` and ``mixed``) with ``search.EARLY_RATE`` at
    ``rate``, each embedded afresh on the worker, and how many searches ran their words alone
    while it embedded."""
    from slotmem.vectors import semantic

    monkeypatch.setattr(semantic.os, "cpu_count", lambda: 2)  # a worker even on one core
    monkeypatch.setattr(search, "EARLY_RATE", rate)
    events: list[str] = []
    lexical, result = search._lexical, semantic.Question.result

    def alone(*args, **kwargs):
        events.append("alone")
        return lexical(*args, **kwargs)

    def answered(self, *args, **kwargs):
        events.append("result")
        return result(self, *args, **kwargs)

    monkeypatch.setattr(search, "_lexical", alone)
    monkeypatch.setattr(semantic.Question, "result", answered)
    found = []
    for text in questions() + mixed():
        for options in options_list:
            store.semantic.forget_query_vectors()
            events.append("search")
            found.append(
                [
                    (hit.fact.id, hit.score, hit.relevance, hit.explanation, hit.fact.tags)
                    for hit in store.query_facts(text, track_access=False, **options)
                ]
            )
    searches = " ".join(events).split("search")
    assert all(one.count("alone") <= 1 for one in searches)  # early, or after: never both
    return found, sum(1 for one in searches if "alone result" in one)


def test_the_words_alone_run_while_the_question_is_embedded_give_the_same_hits(mem, monkeypatch):
    """A question with a rare word runs its search by words alone before the fusion, while the
    worker embeds (search._needed); the hits are the ones the search after the fusion (or the
    bound) gave, whichever questions run it early."""
    after, none = early_hits(mem, monkeypatch, 0.0)
    assert none == 0
    some, early = early_hits(mem, monkeypatch, 0.02)  # (the words here are in 1-2% of facts)
    assert some == after
    assert 30 < early < len(after) - 100  # the mixed questions, not every question
    every, most = early_hits(mem, monkeypatch, 1.0)
    assert every == after and most > early


@pytest.mark.parametrize("options", [{"min_relevance": 0.2}, {"explain": True, "limit": 5}])
def test_a_floor_or_an_explanation_runs_the_words_alone_early(mem, monkeypatch, options):
    """The bound never holds with a floor or an explanation: every such search that does not
    share its statement runs its words alone while the worker embeds, with the same hits."""
    after, _ = early_hits(mem, monkeypatch, 0.0, [options])
    found, early = early_hits(mem, monkeypatch, EARLY_RATE, [options])
    assert found == after and early > len(questions()) // 2


def test_which_questions_run_their_words_alone_early(mem, monkeypatch):
    def needed(text: str, **options) -> bool:
        query = search.Query.parse(text, **options)
        alone = search.plan.plan(mem.conn, query.terms)
        return search._needed(mem.conn, query, alone, Ranking(), None)

    monkeypatch.setattr(search, "EARLY_RATE", 0.02)  # 30 of the 1,500 facts
    rare, mid = WORDS[149], f"{WORDS[20]} {WORDS[30]}"
    assert search.plan.plan(mem.conn, search.Query.parse(rare).terms).arms[0].df < 30
    assert needed(f"{mid} {rare}") and not needed(mid)
    assert needed(mid, min_relevance=0.1) and needed(mid, explain=True)
    assert not needed("nothing matches", min_relevance=0.1)  # no term any fact holds
    monkeypatch.setattr(search.plan, "POSTINGS_BUDGET", 1000)  # as in a large file:
    common_words = f"{WORDS[0]} {WORDS[1]}"  # scored over every posting (common.py)
    assert common.applies(search.plan.plan(mem.conn, search.Query.parse(common_words).terms))
    assert not needed(common_words) and needed(f"{common_words} {rare}")
    assert needed(common_words, min_relevance=0.1)
    monkeypatch.setattr(search.plan, "POSTINGS_BUDGET", 8000)
    with mem.transaction():  # the bound cannot hold: a transaction's writes
        assert needed(mid)
    monkeypatch.setattr(bound, "ENABLED", False)
    assert needed(mid)
    monkeypatch.setattr(search, "EARLY_RATE", 0.0)  # never early
    assert not needed(f"{mid} {rare}", min_relevance=0.1) and not needed(mid)
