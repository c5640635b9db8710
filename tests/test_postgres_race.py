"""Several processes upsert the same hot keys of one memory on PostgreSQL at once: each key is
created once, every update leaves exactly one history row, nothing is lost; and a
read-modify-write in ``store.transaction()`` (the memory's advisory lock) loses no increment."""

import multiprocessing

from slotmem import Store

WRITERS = 8  # as issue 26 asks: 8 processes on hot keys
ROUNDS = 15
KEYS = 5


def _upsert_hot_keys(url, writer, start):
    with Store(url) as store:
        start.wait(300)
        for i in range(ROUNDS):
            for k in range(KEYS):
                store.upsert("hot", f"key{k}", f"writer {writer} round {i}")


def _batch_new_keys(url, writer, start):
    with Store(url) as store:
        start.wait(300)
        for i in range(ROUNDS):
            results = store.upsert_many(
                [{"slot": "new", "key": f"r{i}.k{k}", "value": f"w{writer}"} for k in range(KEYS)]
            )
            assert len(results) == KEYS


def _increment(url, start):
    with Store(url) as store:
        start.wait(300)
        for _ in range(ROUNDS):
            with store.transaction():
                fact = store.get("count", "n")
                store.upsert("count", "n", str(int(fact.value) + 1 if fact else 1))


def _run(target, args_of):
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=target, args=(*args_of(w), start)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(300)  # generous: a loaded 2-core machine
    assert [p.exitcode for p in procs] == [0] * WRITERS


def test_hot_keys_written_by_several_processes(pg_url):
    Store(pg_url, create=True).close()
    _run(_upsert_hot_keys, lambda w: (pg_url, w))
    with Store(pg_url) as store:
        facts = store.list_facts("hot", limit=None)
        assert sorted(f.key for f in facts) == [f"key{k}" for k in range(KEYS)]  # once each
        history = store.history("hot")
        assert all(entry.reason == "update" for entry in history)
        # every write changed the value (each writer's text is its own): all but the first of
        # each key left one history row, and the history plus the live value are every write
        assert len(history) == WRITERS * ROUNDS * KEYS - KEYS
        written = sorted(f"writer {w} round {i}" for w in range(WRITERS) for i in range(ROUNDS))
        for k in range(KEYS):
            entries = store.history("hot", f"key{k}")
            assert sorted(e.version for e in entries) == list(range(1, WRITERS * ROUNDS))
            # each value written is kept once: in history, or live (none archived twice)
            kept = [e.value for e in entries] + [store.get("hot", f"key{k}").value]
            assert sorted(kept) == written
        ids = {f.id for f in facts}
        assert {e.fact_id for e in history} == ids  # no key was created twice


def test_transactions_lose_no_increment(pg_url):
    Store(pg_url, create=True).close()
    _run(_increment, lambda w: (pg_url,))
    with Store(pg_url) as store:
        assert store.get("count", "n").value == str(WRITERS * ROUNDS)


def test_batches_of_the_same_new_keys_create_each_once(pg_url):
    """upsert_many inserts new keys in one statement; a key another process created meanwhile
    conflicts, and that item becomes an update of the winner's fact."""
    Store(pg_url, create=True).close()
    _run(_batch_new_keys, lambda w: (pg_url, w))
    with Store(pg_url) as store:
        facts = store.list_facts("new", limit=None)
        assert len(facts) == ROUNDS * KEYS  # each key once
        for fact in facts:
            entries = store.history("new", fact.key)
            values = sorted([e.value for e in entries] + [fact.value])
            # every writer's write is there once: created by one, updated by the others
            assert values == [f"w{w}" for w in range(WRITERS)]
            assert {e.fact_id for e in entries} <= {fact.id}
