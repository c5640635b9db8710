"""The search by words alone with bm25 run only for the facts that can make its top
(search/pruned.py) gives the rows, scores and order the statement over every posting gave, and
so does every hybrid search that runs it."""

import dataclasses
import random

import llm
import pytest

from slotmem import search
from slotmem.search import common, lexical, pruned
from slotmem.search.lexical import Ranking
from tests.test_hybrid_bound import WORDS
from tests.test_hybrid_share import Plugin
from tests.test_hybrid_share import WordVectors as SharedWordVectors

DAY_MS = 86_400_000


class WordVectors(SharedWordVectors):
    """test_hybrid_share's model (a text's vector is the sum of its words') under its own id."""

    model_id = "fake-words-pruned"


@pytest.fixture(autouse=True)
def budgeted(monkeypatch):
    """A hybrid leg within its own budget, as in a large file (with this file's few facts most
    plans would be shared: plan.SHARED_BUDGET), so that the pruned search by words alone runs apart."""
    monkeypatch.setattr(search.plan, "SHARED_BUDGET", 0)


@pytest.fixture(scope="module")
def mem(tmp_path_factory):
    """1,200 facts of 3 to 30 words drawn with repeats (term frequencies of 1 to 4, lengths
    that vary tenfold), with every confidence, ratings from -3 to 3, update times over a year,
    a few expired, a tag on a fifth: every factor of the score varies."""
    from slotmem import Store

    llm.pm.register(Plugin(WordVectors), name="word-vectors-pruned")
    rng = random.Random(11)
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(WORDS))]
    facts = []
    for i in range(1200):
        words = rng.choices(WORDS, weights, k=rng.randint(3, 30))
        if i % 4 == 0:
            words += [words[0]] * rng.randint(1, 3)  # the same word again: tf up to 4
        facts.append(
            {
                "slot": ("user", "project", "agent")[i % 3],
                "key": f"{rng.choice(WORDS)}.n{i}",
                "value": " ".join(words),
                "confidence": rng.choice((1.0, 0.95, 0.8, 0.5, 0.3)),
            }
        )
    with Store(tmp_path_factory.mktemp("pruned") / "m.db", create=True) as store:
        store.upsert_many(facts)
        for i in range(0, 1200, 5):
            store.tag(facts[i]["slot"], facts[i]["key"], "fifth")
        now = store.clock()
        with store.transaction():
            for i in range(1200):  # updated over the past year, quality from -3 to 3
                store.conn.execute(
                    "UPDATE memory_facts SET updated_at = ?, quality = ? WHERE key = ?",
                    (now - rng.randint(0, 365) * DAY_MS, rng.randint(-3, 3) if i % 2 else 0,
                     facts[i]["key"]),
                )  # fmt: skip
            store.conn.execute(
                "UPDATE memory_facts SET expires_at = 1 WHERE seq % 37 = 0"
            )  # expired long ago
        store.semantic.reindex("fake-words-pruned")
        yield store
    llm.pm.unregister(name="word-vectors-pruned")


def questions(count: int = 40) -> list[str]:
    rng = random.Random(17)
    found = [" ".join(rng.sample(WORDS[:40], rng.randint(2, 4))) for _ in range(count)]
    found += [" ".join(rng.sample(WORDS[:100], rng.randint(4, 9))) for _ in range(count)]
    found += [" ".join(rng.choices(WORDS, k=rng.randint(3, 12))) for _ in range(count)]
    return found


OPTIONS = [
    {},
    {"slots": ["user"]},
    {"slots": ["project", "agent"], "limit": 5},
    {"limit": 25},
    {"limit": 1},
    {"tags": ["fifth"]},
    {"min_score": 20.0},
    {"min_relevance": 0.05},
    {"since": "200d"},
]


@pytest.fixture
def everywhere(monkeypatch):
    """The pruned search for plans of any size (this file's postings are few), and how it
    ended: the first facts were enough, threats were scored with them, or the statement ran
    over every posting."""
    monkeypatch.setattr(pruned, "MIN_POSTINGS", 0)
    ends = {"first": 0, "threats": 0, "every": 0}
    seen: list = []
    plain, original = lexical.search, pruned.search

    def statement(*args, **kwargs):
        seen.append(kwargs.get("only"))
        return plain(*args, **kwargs)

    def run(*args, **kwargs):
        seen.clear()
        rows = original(*args, **kwargs)
        ends["every" if seen[-1] is None else "first" if len(seen) == 1 else "threats"] += 1
        return rows

    monkeypatch.setattr(lexical, "search", statement)
    monkeypatch.setattr(pruned, "search", run)
    return ends


def words_alone(store, text: str, options: dict) -> list:
    """The search by words alone of a hybrid search (search._lexical, all it returns)."""
    query = store_query(store, text, options)
    chosen = search.plan.plan(store.conn, query.terms, None, store._doc_freqs)
    found = search._lexical(
        store.conn, query, chosen, store.ranking, store.clock(), store._doc_freqs
    )
    return [(hit.fact.id, hit.score, hit.relevance) for hit in found]


def store_query(store, text: str, options: dict) -> search.Query:
    since = options.get("since")
    start = None if since is None else store.clock() - int(since[:-1]) * DAY_MS
    return search.Query.parse(
        text,
        slots=tuple(options["slots"]) if "slots" in options else None,
        limit=options.get("limit", 10),
        min_score=options.get("min_score"),
        min_relevance=options.get("min_relevance"),
        since=start,
        tags=tuple(options.get("tags", ())),
    )


def every_search(store) -> list:
    return [words_alone(store, text, options) for text in questions() for options in OPTIONS]


def test_pruned_rows_are_the_rows_of_every_posting(mem, monkeypatch, everywhere):
    fast = every_search(mem)
    monkeypatch.setattr(pruned, "ENABLED", False)
    assert every_search(mem) == fast
    assert sum(map(len, fast)) > 5000  # the questions find things
    # each way the pruned search can end was taken, the threats' way often
    assert everywhere["first"] > 0 and everywhere["threats"] > 100 and everywhere["every"] > 20


def test_hybrid_hits_are_the_same(mem, monkeypatch, everywhere):
    def hits():
        return [
            [
                (hit.fact.id, hit.score, hit.relevance, hit.fact.tags)
                for hit in mem.query_facts(text, track_access=False, **options)
            ]
            for text in questions(15)
            for options in OPTIONS
        ]

    fast = hits()
    assert everywhere["threats"] + everywhere["first"] > 50  # the words alone ran, pruned
    monkeypatch.setattr(pruned, "ENABLED", False)
    assert hits() == fast


def test_with_recency_the_rows_are_the_same(mem, monkeypatch, everywhere):
    """A half-life weighs each fact by its age as well (the threats' weight reads it)."""
    monkeypatch.setattr(mem, "ranking", Ranking(half_life_days=30))
    now = mem.clock()
    monkeypatch.setattr(mem, "clock", lambda: now)  # the same ages in both searches
    fast = every_search(mem)
    monkeypatch.setattr(pruned, "ENABLED", False)
    assert every_search(mem) == fast
    assert everywhere["threats"] > 100


@pytest.mark.parametrize("scale", [0.45, 1.0])
def test_a_bound_below_bm25s_own_would_change_rows(mem, monkeypatch, everywhere, scale):
    """The bound is what keeps the rows: one that leaves bm25's term-frequency part (up to
    k1 + 1) out, or all of it, drops facts that belong in the top (so the tests above would
    see a wrong bound)."""
    fast = every_search(mem)
    bounds = pruned.bounds
    monkeypatch.setattr(
        pruned, "bounds", lambda ranking, chosen: bounds(ranking, chosen) * scale / 2.2
    )
    assert every_search(mem) != fast


def test_a_kept_row_is_the_row_of_every_posting(mem):
    """``only`` keeps the arms to some facts: each row kept is the row the statement over every
    posting gives that fact (score, match, parts), in the same order."""
    rng = random.Random(3)
    for text in questions(10):
        query = search.Query.parse(text)
        chosen = search.plan.plan(mem.conn, query.terms)
        options = {"slots": None, "limit": 100_000, "now": mem.clock(), "explain": True}
        every = [tuple(row) for row in lexical.search(mem.conn, chosen, mem.ranking, **options)]
        some = rng.sample([row[0] for row in every], min(len(every), 40))
        kept = lexical.search(
            mem.conn, chosen, mem.ranking, only=f"[{','.join(map(str, some))}]", **options
        )
        assert [tuple(row) for row in kept] == [row for row in every if row[0] in set(some)]


@pytest.mark.parametrize(
    "change",
    [
        {"presence": True},
        {"coordination": -1.0},
        {"key_weight": -2.0},
        {"half_life_days": -30.0},
    ],
)
def test_not_used_when_the_bound_does_not_hold(mem, monkeypatch, change):
    """Presence scoring (nothing to prune), a negative weight or coordination (a part could
    lower the match) or a negative half-life (recency above 1): the plain statement."""
    monkeypatch.setattr(pruned, "MIN_POSTINGS", 0)
    chosen = search.plan.plan(mem.conn, search.Query.parse(" ".join(WORDS[5:12])).terms)
    assert pruned.applies(mem.conn, chosen, Ranking())
    assert not pruned.applies(mem.conn, chosen, dataclasses.replace(Ranking(), **change))


def test_not_used_inside_a_transaction_or_for_few_postings(mem, monkeypatch):
    chosen = search.plan.plan(mem.conn, search.Query.parse(" ".join(WORDS[5:12])).terms)
    monkeypatch.setattr(pruned, "MIN_POSTINGS", 0)
    assert pruned.applies(mem.conn, chosen, Ranking())
    with mem.transaction():
        assert not pruned.applies(mem.conn, chosen, Ranking())
    monkeypatch.setattr(pruned, "MIN_POSTINGS", sum(arm.df for arm in chosen.arms) + 1)
    assert not pruned.applies(mem.conn, chosen, Ranking())


def test_a_bound_too_large_to_share_an_integer_runs_every_posting(mem, monkeypatch, everywhere):
    """A bound and a seq share one integer in the threats' statement: a ranking whose bounds
    do not fit (a coordination of millions) runs the statement over every posting, same rows."""
    monkeypatch.setattr(mem, "ranking", Ranking(coordination=3e6))
    fast = [words_alone(mem, text, {}) for text in questions(10)]
    assert everywhere["every"] >= 25 and everywhere["threats"] == everywhere["first"] == 0
    monkeypatch.setattr(pruned, "ENABLED", False)
    assert [words_alone(mem, text, {}) for text in questions(10)] == fast


def test_a_slot_is_pruned_only_with_its_tag_postings_in_memory(mem, monkeypatch, everywhere):
    """A search of some slots keeps the facts of those slots by their tags' postings when they
    are in memory already (common.py reads them); otherwise the statement runs over every
    posting (a slot holds a third of the facts: reading them costs more than bm25 saves).
    Either way the rows are the same."""
    options = [{"slots": ["user"]}, {"slots": ["project", "agent"], "limit": 5}]
    postings = common.Postings()
    monkeypatch.setattr(common, "postings_of", lambda freqs: postings)
    cold = [words_alone(mem, text, o) for text in questions(15) for o in options]
    assert everywhere["first"] == everywhere["threats"] == 0 and everywhere["every"] > 20
    state = common.structure(mem.conn)
    for slot in ("user", "project", "agent"):
        postings.get(mem.conn, search.plan.slot_tag(slot), state)
    warm = [words_alone(mem, text, o) for text in questions(15) for o in options]
    assert everywhere["threats"] > 20
    monkeypatch.setattr(pruned, "ENABLED", False)
    assert warm == cold == [words_alone(mem, text, o) for text in questions(15) for o in options]


def lexical_hits(store, text: str, options: dict) -> list:
    found = store.query_facts(text, semantic=False, track_access=False, **options)
    return [(hit.fact.id, hit.score, hit.relevance, hit.fact.tags) for hit in found]


def test_a_lexical_search_is_pruned_with_the_same_hits(mem, monkeypatch):
    """A search by words (``query_facts(semantic=False)``: ``lexical.best``'s statement, each
    fact read with its tags) prunes the same way: the same hits, scores, relevance and tags as
    the statement over every posting, each way the pruned search can end taken."""
    monkeypatch.setattr(pruned, "MIN_POSTINGS", 0)
    state = common.structure(mem.conn)
    for slot in ("user", "project", "agent"):  # in memory: the slots' searches prune too
        common.postings_of(mem._doc_freqs).get(mem.conn, search.plan.slot_tag(slot), state)
    seen: list = []
    plain = lexical.best

    def statement(*args, **kwargs):
        seen.append(kwargs.get("only"))
        return plain(*args, **kwargs)

    monkeypatch.setattr(lexical, "best", statement)
    fast = [lexical_hits(mem, text, options) for text in questions() for options in OPTIONS]
    kept = [only.count(",") + 1 for only in seen if only is not None]
    assert len(kept) > 200 and max(kept) > 3 * max(o.get("limit", 10) for o in OPTIONS)
    seen.clear()
    monkeypatch.setattr(pruned, "ENABLED", False)
    assert [lexical_hits(mem, text, options) for text in questions() for options in OPTIONS] == (
        fast
    )
    assert seen and all(only is None for only in seen)
    assert sum(map(len, fast)) > 5000


def test_a_plan_guessed_loose_from_its_dfs_reads_no_postings(mem, monkeypatch):
    """Words of like idf (rare words: a fact holds one, every bound is above the 10th presence
    score) are guessed loose from their dfs alone, before their postings are read; a mix of
    rare and common words (a sentence) is not; nor are more words than ``GUESSED``. The rows
    are the same either way (the tests above)."""
    from slotmem.search.plan import WORDS, Arm, Plan

    def plan_of(facts, dfs):
        return Plan(tuple(Arm(f"w{i}", WORDS, f'"w{i}"', df) for i, df in enumerate(dfs)), facts)

    ranking = Ranking()
    assert pruned._loose(ranking, plan_of(1_000_000, [700, 900, 1_500]), 10)
    assert not pruned._loose(ranking, plan_of(100_000, [40, 300, 2_000, 4_000, 4_500]), 10)
    assert not pruned._loose(ranking, plan_of(1_000_000, [700] * (pruned.GUESSED + 1)), 10)
    # a loose plan goes to the statement over every posting without reading its postings
    monkeypatch.setattr(pruned, "MIN_POSTINGS", 0)
    monkeypatch.setattr(pruned, "_loose", lambda ranking, chosen, limit: True)
    postings = common.Postings()
    monkeypatch.setattr(common, "postings_of", lambda freqs: postings)
    for text in questions(10)[-5:]:
        lexical_hits(mem, text, {})
        words_alone(mem, text, {})
    assert len(postings) == 0
