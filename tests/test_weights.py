"""The facts' weights held in memory (slotmem/search/weights.py) decide the threats of the
search by words alone as its statement does: the same rows, and fresh after any change to a
weight, by this process or another."""

import random

import pytest

from slotmem import Store
from slotmem.search import pruned, weights
from slotmem.search.lexical import Ranking
from tests.test_hybrid_pruned import OPTIONS, WORDS, every_search, mem, questions, words_alone

pytest.importorskip("numpy")
__all__ = ["mem"]  # the module's 1,200 facts (test_hybrid_pruned), every factor varied

DAY_MS = 86_400_000


@pytest.fixture
def held(monkeypatch):
    """The weights held from a first search, for any number of threats, and how many of the
    threats' questions they answered (``answered``) and how often every row was read."""
    monkeypatch.setattr(pruned, "MIN_POSTINGS", 0)
    monkeypatch.setattr(weights, "PATIENCE", 0)
    monkeypatch.setattr(weights, "MIN_FACTS", 0)
    seen = {"answered": 0, "read": 0}
    threats, read = weights.threats, weights._read

    def counted(*args, **kwargs):
        found = threats(*args, **kwargs)
        seen["answered"] += found is not None
        return found

    def reading(*args, **kwargs):
        seen["read"] += 1
        return read(*args, **kwargs)

    monkeypatch.setattr(weights, "threats", counted)
    monkeypatch.setattr(weights, "_read", reading)
    return seen


def test_the_held_weights_give_the_statements_rows(mem, monkeypatch, held):
    fast = every_search(mem)
    assert held["answered"] > 100  # they decided the threats, often
    monkeypatch.setattr(weights, "ENABLED", False)
    assert every_search(mem) == fast


def test_with_recency_the_rows_are_the_same(mem, monkeypatch, held):
    monkeypatch.setattr(mem, "ranking", Ranking(half_life_days=30))
    now = mem.clock()
    monkeypatch.setattr(mem, "clock", lambda: now)
    fast = every_search(mem)
    assert held["answered"] > 100
    monkeypatch.setattr(weights, "ENABLED", False)
    assert every_search(mem) == fast


def test_a_window_or_tags_are_left_to_the_statement(mem, monkeypatch, held):
    """``since`` and ``tags`` are tests the copy does not hold: the statement answers, the same
    rows, and such searches do not count toward reading the copy."""
    monkeypatch.setattr(mem._doc_freqs, "weights", None)  # none held yet
    monkeypatch.setattr(weights, "PATIENCE", 1.0)

    def searches() -> list:
        return [
            words_alone(mem, text, options)
            for options in ({"since": "200d"}, {"tags": ["fifth"]})
            for text in questions(10)
        ]

    fast = searches()
    assert held["answered"] == held["read"] == 0
    assert mem._doc_freqs.weights._owed == 0
    monkeypatch.setattr(weights, "ENABLED", False)
    assert searches() == fast


def test_wrong_weights_would_change_rows(mem, monkeypatch, held):
    """What the tests here would see: a copy whose confidences are not the file's (all the
    lowest) drops threats that belong in the rows."""
    fast = every_search(mem)
    real = weights._held

    def lowered(*args):
        found = real(*args)
        found.confidence[:] = 0.3
        return found

    monkeypatch.setattr(weights, "_held", lowered)
    monkeypatch.setattr(mem._doc_freqs, "weights", None)  # read again, lowered
    assert every_search(mem) != fast


def fresh_store(path) -> Store:
    rng = random.Random(5)
    store = Store(path, create=True)
    store.upsert_many(
        {
            "slot": ("user", "project")[i % 2],
            "key": f"k{i}",
            "value": " ".join(rng.choices(WORDS[:60], k=rng.randint(4, 20))),
            "confidence": 0.3,
        }
        for i in range(800)
    )
    return store


def store_value(store, i: int) -> str:
    return store.get(("user", "project")[i % 2], f"k{i}").value


def searched(store) -> list:
    return [words_alone(store, text, options) for text in questions(8) for options in OPTIONS[:5]]


def statement_rows(store, monkeypatch) -> list:
    with monkeypatch.context() as off:
        off.setattr(weights, "ENABLED", False)
        return searched(store)


def test_a_change_by_another_process_is_seen(tmp_path, monkeypatch, held):
    """Weights changed through another Store (another connection, as another process would):
    raised confidences, an expiry, a rating, a delete, new facts. After each, the rows are the
    statement's; new facts alone are read without reading every row again."""
    path = tmp_path / "m.db"
    with fresh_store(path) as store, Store(path) as other:
        later = store.clock() + 3_600_000  # both ways search at one time: the 1 s ttl has run
        monkeypatch.setattr(store, "clock", lambda: later)
        for i in range(3, 800, 10):  # expired when the copy is first read
            store.upsert(("user", "project")[i % 2], f"k{i}", store_value(store, i), ttl="1s")
        assert searched(store) == statement_rows(store, monkeypatch)
        assert held["read"] == 1
        rng = random.Random(9)
        changes = [
            lambda: other.upsert_many(
                {
                    "slot": "user",
                    "key": f"k{i}",
                    "value": other.get("user", f"k{i}").value,
                    "confidence": 1.0,
                }
                for i in range(0, 800, 6)
            ),
            lambda: other.upsert("project", "k1", other.get("project", "k1").value, ttl="1s"),
            lambda: other.rate("user", "k2", 3),
            lambda: other.delete("user", "k4"),
            lambda: other.upsert_many(  # no expiry any more: back among the threats
                {
                    "slot": ("user", "project")[i % 2],
                    "key": f"k{i}",
                    "value": store_value(other, i),
                    "confidence": 1.0,
                }
                for i in range(3, 800, 10)
            ),
            lambda: other.conn.execute(  # moved to the other slot, as raw SQL would
                "UPDATE memory_facts SET slot = 'project' WHERE key IN ('k0', 'k12', 'k24')"
            ),
        ]
        for change in changes:
            before = held["read"]
            change()
            assert searched(store) == statement_rows(store, monkeypatch)
            assert held["read"] == before + 1  # the count moved: every row read again
        before = held["read"]
        other.upsert_many(
            {"slot": "user", "key": f"new{i}", "value": " ".join(rng.sample(WORDS[:60], 9)),
             "confidence": 1.0}
            for i in range(50)
        )  # fmt: skip
        assert searched(store) == statement_rows(store, monkeypatch)
        assert held["read"] == before  # new facts only: read on their own
        copy = store._doc_freqs.weights.held(store.conn, 1)
        assert len(copy.seqs) == 849 and copy.top == max(copy.seqs)


def test_access_tracking_does_not_move_the_count(tmp_path):
    """A tracked search writes access counts after every search: the copy stays."""
    with fresh_store(tmp_path / "m.db") as store:

        def count() -> int:
            return store.conn.execute("SELECT changes FROM memory_weight_changes").fetchone()[0]

        start = count()
        store.query_facts(" ".join(WORDS[:6]), track_access=True)
        assert store.conn.execute("SELECT sum(access_count) FROM memory_facts").fetchone()[0]
        assert count() == start
        store.upsert("user", "k0", "changed", confidence=0.9)
        assert count() == start + 1


def test_a_file_without_the_count_keeps_the_statement(tmp_path, monkeypatch, held):
    """A file before migration 0020 (read-only, say): no copy, the statement's rows."""
    with fresh_store(tmp_path / "m.db") as store:
        store.conn.execute("DROP TRIGGER memory_facts_weights_au")
        store.conn.execute("DROP TRIGGER memory_facts_weights_ad")
        store.conn.execute("DROP TABLE memory_weight_changes")
        assert searched(store) == statement_rows(store, monkeypatch)
        assert held["answered"] == held["read"] == 0


def test_a_stale_copy_is_read_once_the_statement_has_tested_as_many_facts(tmp_path, monkeypatch):
    """Reading every row waits until the statement has tested as many facts as the file holds
    since the copy went missing or stale (reading one costs about what testing one does)."""
    monkeypatch.setattr(weights, "PATIENCE", 1.0)
    with fresh_store(tmp_path / "m.db") as store:  # 800 facts
        copy = weights.Weights()
        assert [copy.held(store.conn, 300) is not None for _ in range(4)] == [False] * 2 + [
            True
        ] * 2
        store.upsert("user", "k0", "changed", confidence=0.9)
        assert [copy.held(store.conn, 500) is not None for _ in range(3)] == [False, True, True]
        count = len(copy.held(store.conn, 1).seqs)
        store.upsert("user", "k-new", "a new fact")  # new facts: read at once
        top = store.conn.execute("SELECT max(seq) FROM memory_facts").fetchone()[0]
        again = copy.held(store.conn, 1)
        assert again is not None and again.top == top and len(again.seqs) == count + 1


def test_new_facts_one_by_one_extend_the_copy_and_leave_earlier_copies_as_they_were(tmp_path):
    """New facts are written after the copy's rows in arrays that double when full: each
    copy handed out keeps its own rows, and the latest holds every fact, as read afresh."""
    with fresh_store(tmp_path / "m.db") as store:
        kept = weights.Weights()
        copies = [kept.held(store.conn, 10**9)]
        for i in range(40):
            store.upsert("user", f"one{i}", f"fact {i}", confidence=0.5 + i / 100)
            copies.append(kept.held(store.conn, 1))
        assert [len(copy.seqs) for copy in copies] == list(range(800, 841))
        fresh = weights._read(store.conn, copies[-1].changes, copies[-1].top)
        for copy in copies:
            size = len(copy.seqs)
            for name in weights.ARRAYS:
                assert (getattr(copy, name) == getattr(fresh, name)[:size]).all(), name


@pytest.mark.parametrize("half_life", [None, 0.5, 30.0, 365.0])
def test_the_copy_passes_the_facts_the_statement_passes(mem, half_life):
    """``weights.threats`` against ``pruned._threats`` itself, on random facts, bounds and
    floors: the same facts (the slack keeps none more here), expired ones (one at ``now``
    exactly) and other slots left out alike."""
    np = pytest.importorskip("numpy")
    ranking = Ranking(half_life_days=half_life)
    rng = random.Random(23)
    all_seqs = [seq for (seq,) in mem.conn.execute("SELECT seq FROM memory_facts ORDER BY seq")]
    copy = weights._read(mem.conn, 0, all_seqs[-1])
    # now, and the time a few facts expire at (``expires_at = 1``: expiring at now exactly)
    times = [mem.clock(), int(copy.expires[copy.expires < weights.NEVER][0])]
    compared = 0
    for i in range(60):
        now = times[i % 2]
        seqs = np.array(sorted(rng.sample(all_seqs, 300)), dtype=np.int32)
        scaled = np.array([rng.randint(1, 40_000) for _ in seqs], dtype=np.int64)
        floor = rng.uniform(0.5, 30.0)
        slots = rng.choice([None, ["user"], ["project", "agent"], ["nowhere"]])
        options = {"now": now, "slots": slots, "tags": ()}
        found = weights.threats(copy, ranking, seqs, scaled, floor * pruned.SCALE, options)
        assert found == pruned._threats(mem.conn, ranking, seqs, scaled, floor, options)
        compared += len(found)
    assert compared > 1000


def test_a_copy_busy_on_another_thread_leaves_the_search_to_the_statement(tmp_path):
    """Another thread reading every row holds the copy: a search does not wait for it."""
    with fresh_store(tmp_path / "m.db") as store:
        kept = weights.Weights()
        assert kept.held(store.conn, 10**9) is not None
        with kept._lock:  # as a thread inside ``held`` would
            assert kept.held(store.conn, 10**9) is None
        assert kept.held(store.conn, 1) is not None
