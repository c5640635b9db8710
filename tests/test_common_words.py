"""Common-word questions over every posting (slotmem/search/common.py), at toy scale: 'common'
above 5 facts, 12 postings in the plan's budget, 60 of the 160 facts scored exactly."""

import random

import pytest

from slotmem import Ranking, Store
from slotmem.search import common, lexical, plan
from slotmem.search.stemmer import stem
from slotmem.search.terms import parse, quote

WORDS = ["build", "note", "deploy", "release", "server", "night", "window", "query"]


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(plan, "COMMON_MIN", 5)
    monkeypatch.setattr(plan, "POSTINGS_BUDGET", 12)
    monkeypatch.setattr(common, "CANDIDATES", 60)
    monkeypatch.setattr(common, "ENABLED", True)


def corpus(store: Store, n: int = 160, seed: int = 3) -> None:
    rng = random.Random(seed)
    store.upsert_many(
        [
            {
                "slot": ("user", "project")[i % 2],
                "key": f"k{i}" if i % 7 else f"{rng.choice(WORDS)}.k{i}",
                "value": " ".join(rng.sample(WORDS + ["zz", "yy", "xx"], k=rng.randint(2, 10))),
                "confidence": 0.9,  # the candidates are cut by presence: confidence comes after
            }
            for i in range(n)
        ]
    )


def exhaustive(store: Store, text: str, slots=None) -> list:
    """The top 10 of the same scoring over every posting of every word (FTS5's bm25)."""
    conn = store.conn
    words = parse(text).words
    dfs = plan.DocFreqs().lookup(conn, {stem(word) for word in words})
    arms = tuple(
        plan.Arm(word, plan.WORDS, quote(word), dfs[stem(word)])
        for word in words
        if dfs[stem(word)]
    )
    chosen = plan.Plan(arms, plan.indexed_rows(conn, plan.WORDS))
    rows = lexical.search(conn, chosen, store.ranking, slots=slots, limit=10, now=store.clock())
    return [(row["id"], row["score"]) for row in rows]


def found(store: Store, text: str, slots=None) -> list:
    hits = store.query_facts(text, slots=slots, limit=10, track_access=False)
    return [(hit.fact.id, hit.score) for hit in hits]


def same(got: list, truth: list) -> bool:
    """The same facts in the same order, with the same scores (bm25 counted here or by FTS5)."""
    assert [fid for fid, _ in got] == [fid for fid, _ in truth]
    assert [score for _, score in got] == pytest.approx([score for _, score in truth])
    return True


QUESTIONS = ["build note deploy release server", "night window query build", "deploy server"]


@pytest.mark.parametrize("presence", [False, True])
def test_common_word_questions_rank_as_over_every_posting(store, small, presence):
    store.ranking = Ranking(presence=presence)
    corpus(store)
    for text in QUESTIONS:
        assert plan.plan(store.conn, parse(text)).dropped  # the plan alone leaves words out
        assert same(found(store, text), exhaustive(store, text))
        assert same(found(store, text, ["user"]), exhaustive(store, text, ["user"]))


def test_without_numpy_or_disabled_the_plan_applies(store, small, monkeypatch):
    corpus(store)
    text = QUESTIONS[0]
    truth = exhaustive(store, text)
    assert same(found(store, text), truth)
    for patch in [("ENABLED", False), ("numpy", lambda: None)]:
        with monkeypatch.context() as m:
            m.setattr(common, *patch)
            hits = store.query_facts(text, limit=10, explain=True, track_access=False)
            assert hits[0].explanation["ignored"]  # the plan's budget, as before
            assert [h.fact.id for h in hits] != [fid for fid, _ in truth]


def test_explanation_lists_every_word(store, small):
    corpus(store)
    hits = store.query_facts("build note deploy", explain=True, track_access=False)
    terms = hits[0].explanation["terms"]
    assert hits[0].explanation["ignored"] == []
    assert set(terms) <= {"build", "note", "deploy"} and len(terms) >= 2
    assert all(term["tf"] > 0 for term in terms.values())


def cached_postings(store: Store) -> dict:
    return {
        match: entry.seqs.tolist()
        for match, entry in common.postings_of(store._doc_freqs)._entries.items()
    }


def index_postings(store: Store, match: str) -> list[int]:
    return [
        seq
        for (seq,) in store.conn.execute(
            f"SELECT rowid FROM {plan.WORDS} WHERE {plan.WORDS} MATCH ? ORDER BY rowid", (match,)
        )
    ]


@pytest.mark.parametrize("one", [True, False], ids=["this-connection", "another-connection"])
def test_postings_in_memory_follow_writes(db_path, clock, small, one):
    reader = Store(db_path, create=True, clock=clock)
    writer = reader if one else Store(db_path, clock=clock)
    corpus(writer)
    text = QUESTIONS[0]

    def check():
        assert same(found(reader, text), exhaustive(reader, text))
        cached = cached_postings(reader)
        assert cached and all(seqs == index_postings(reader, m) for m, seqs in cached.items())

    check()
    writer.upsert("user", "new.one", "build note deploy release server")  # appended
    check()
    assert writer.delete("project", "k1")
    check()
    writer.upsert("user", "k2", "night only")  # rewritten: loses its words
    writer.upsert("user", "k4", "build build release")  # gains some
    check()
    writer.conn.execute("UPDATE memory_facts SET slot = 'user' WHERE key = 'k3'")
    check()
    assert same(found(reader, text, ["user"]), exhaustive(reader, text, ["user"]))


def test_postings_stay_within_their_bound(store, small, monkeypatch):
    corpus(store)
    postings = common.postings_of(store._doc_freqs)
    postings.max_bytes = 1600  # one question's postings, not all three's
    for text in QUESTIONS:
        assert same(found(store, text), exhaustive(store, text))
        assert postings.nbytes <= 1600
    postings.max_bytes = 8  # a question whose postings cannot fit is planned as before
    hits = store.query_facts(QUESTIONS[0], explain=True, track_access=False)
    assert hits[0].explanation["ignored"]


def test_a_question_with_a_cjk_gram_is_planned_as_before(store, small):
    corpus(store)
    store.upsert("user", "zh", "我们 build note")
    chosen = plan.plan(store.conn, parse("我们 build note deploy"))
    assert chosen.dropped and not common.applies(chosen)


def test_a_search_inside_a_transaction_is_planned_as_before(store, small):
    """A transaction's writes may roll back, leaving the structure record as it was: postings
    read inside one could be taken for the file's afterwards."""
    corpus(store)
    with store.transaction():
        store.upsert("user", "inside", "build note deploy release server")
        hits = store.query_facts(QUESTIONS[0], explain=True, track_access=False)
        assert hits[0].explanation["ignored"]
    assert not common.postings_of(store._doc_freqs)._entries


def test_a_closed_store_lets_its_postings_go(db_path, small):
    store = Store(db_path, create=True)
    corpus(store)
    found(store, QUESTIONS[0])
    assert common.postings_of(store._doc_freqs).nbytes > 0
    store.close()
    assert common.postings_of(store._doc_freqs).nbytes == 0


def test_term_frequencies_are_counted_as_fts5_counts_them(store, small):
    """bm25's term frequency counted from the text here equals FTS5's own: case, stems,
    apostrophes, underscores, digits, accents, other scripts, the key's weight."""
    corpus(store, n=40)
    store.upsert_many(
        [
            {"slot": "user", "key": "Build.notes", "value": "Builds_notes café-build Build's"},
            {"slot": "user", "key": "x", "value": "BUILDING build42 büild ΒUILD build"},
            {"slot": "user", "key": "notes_on.the-build", "value": "Notes: noting; note."},
            {"slot": "user", "key": "y", "value": "deploy déploy DEPLOYED, deploys… 部署 build"},
        ]
    )
    for text in ["build note deploy", "notes builds deploying"]:
        assert same(found(store, text), exhaustive(store, text))


def test_long_facts_lengths_are_read_as_fts5_stores_them(store, small):
    """A fact of 128 tokens or more in a column has a length FTS5 stores in more than one
    byte: its bm25 (and so its place) is the one FTS5 gives."""
    corpus(store, n=40)
    filler = " ".join(f"w{i}" for i in range(300))
    store.upsert_many(
        [
            {"slot": "user", "key": f"long{n}", "value": f"build note deploy {filler[: n * 4]}"}
            for n in (100, 130, 200, 300)
        ]
    )
    got = found(store, "build note deploy")
    assert same(got, exhaustive(store, "build note deploy"))
    longs = {fact.id for fact in store.list_facts() if fact.key.startswith("long")}
    assert longs & {fid for fid, _ in got}


def dense_candidates(lists, tags, scores, k):
    """The candidates as common.py chose them before (an array over every seq): the seqs of the
    ``k`` highest positive presence scores, the newest of equal ones at the boundary, with
    which lists each holds."""
    np = common.numpy()
    top = max((int(seqs[-1]) for seqs in lists if len(seqs)), default=-1)
    bits = np.zeros(top + 1, dtype=np.uint16)
    for i, seqs in enumerate(lists):
        bits[seqs] |= np.uint16(1 << i)
    if tags is not None:
        keep = np.zeros(top + 1, dtype=bool)
        for seqs in tags:
            keep[seqs[seqs <= top]] = True
        bits[~keep] = 0
    found = common._best(np, scores[bits], k)
    return sorted(zip(found.tolist(), bits[found].tolist()))


@pytest.mark.parametrize("seed", range(40))
def test_candidates_over_the_held_facts_are_those_over_every_seq(seed):
    """common.held (the facts the postings hold, not an array over every seq) then _best: the
    same candidates, ties at the boundary (few distinct scores) broken the same way, with and
    without slots (a slot's facts may reach beyond the last posting, or hold none), whichever
    way the slots' facts are looked up."""
    np = common.numpy()
    rng = random.Random(seed)
    n = rng.choice([50, 400, 3000])
    share = rng.choice([3, 300])  # many postings for the slots' facts, or few (two ways)
    lists = [
        np.array(sorted(rng.sample(range(n), rng.randint(0, n // share))), dtype=np.int32)
        for _ in range(rng.randint(1, 16))
    ]
    scores = np.array([rng.choice([0.0, 1.0, 2.5]) for _ in range(1 << len(lists))])
    scores = common.by_bits(list(scores[[1 << i for i in range(len(lists))]])).astype(np.float32)
    owner = [rng.randrange(3) for _ in range(n + 50)]
    slot_seqs = [np.array([s for s in range(n + 50) if owner[s] == o]) for o in range(3)]
    for tags in [None, [slot_seqs[0]], [slot_seqs[1], slot_seqs[2]], [], [slot_seqs[0]] * 2]:
        seqs, bits = common.held(lists, tags)
        assert list(seqs) == sorted(set(seqs.tolist()))
        found = common._best(np, scores[bits], k := rng.choice([1, 7, 60]))
        got = sorted(zip(seqs[found].tolist(), bits[found].tolist()))
        assert got == dense_candidates(lists, tags, scores, k)
