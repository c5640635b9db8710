"""AsyncStore under asyncio: the Store's methods awaited, from many tasks at once."""

import asyncio
import threading

import pytest

from slotmem import InvalidInput, Store
from slotmem.agents.context import build_context
from slotmem.aio import AsyncStore
from slotmem.storage import db


def test_the_same_methods_awaited(db_path):
    async def main():
        async with AsyncStore(db_path, create=True) as mem:
            created = await mem.upsert("user", "timezone", "Europe/Stockholm", confidence=0.9)
            await mem.upsert("user", "timezone", "Europe/Lisbon")
            hits = await mem.query_facts("what timezone am I in?", slots=["user"])
            await mem.pin("user", "timezone")
            history = await mem.history("user", "timezone")
            context = await mem.run(build_context, "timezone?")
            with pytest.raises(InvalidInput, match="invalid slot"):
                await mem.upsert("Not A Slot", "k", "v")
            return created, hits, history, context, await mem.stats()

    created, hits, history, context, stats = asyncio.run(main())
    assert created.action == "created" and hits[0].fact.value == "Europe/Lisbon"
    assert history[0].value == "Europe/Stockholm" and stats["facts"] == 1
    assert "- **timezone**: Europe/Lisbon" in context
    assert AsyncStore.upsert.__doc__ == Store.upsert.__doc__  # the Store's own methods


def test_concurrent_tasks_write_and_read(db_path):
    """Two hundred tasks at once: writers of their own keys, readers, and read-modify-writes
    of one counter, each in one thread's transaction (none is lost)."""

    def increment(store):
        with store.transaction():
            fact = store.get("project", "counter")
            store.upsert("project", "counter", str(int(fact.value) + 1) if fact else "1")

    async def main():
        async with AsyncStore(db_path, create=True, workers=8) as mem:
            writes = [mem.upsert("agent", f"lesson.{i}", f"Lesson number {i}") for i in range(80)]
            reads = [mem.query_facts("lesson number", limit=5) for _ in range(40)]
            counts = [mem.run(increment) for _ in range(80)]
            results = await asyncio.gather(*writes, *reads, *counts)
            return results, await mem.get("project", "counter"), await mem.slots()

    results, counter, slots = asyncio.run(main())
    assert {r.action for r in results[:80]} == {"created"}
    assert all(isinstance(hits, list) for hits in results[80:120])
    assert counter.value == "80" and slots == {"agent": 80, "project": 1}


def test_the_event_loop_runs_while_a_call_waits_for_the_lock(db_path):
    """Another process holds the write lock; the awaited upsert waits in its thread while the
    loop keeps running: the lock is released only once the loop has ticked, so a blocked loop
    would never see its write finish."""
    Store(db_path, create=True).close()
    holder = db.connect(db_path, "rw")
    holder.execute("BEGIN IMMEDIATE")
    ticked = threading.Event()

    def release():
        ticked.wait(timeout=20)
        holder.execute("ROLLBACK")

    async def main():
        async def ticker():
            for _ in range(5):
                await asyncio.sleep(0.01)
            ticked.set()

        async with AsyncStore(db_path) as mem:
            result, _ = await asyncio.gather(mem.upsert("user", "k", "v"), ticker())
            return result

    thread = threading.Thread(target=release)
    thread.start()
    try:
        assert asyncio.run(main()).action == "created"
        assert ticked.is_set()
    finally:
        thread.join()
        holder.close()


def test_every_method_of_the_store_is_awaitable():
    """A new Store method is forwarded too (the plumbing aside)."""
    plumbing = {"transaction", "tracking", "close", "flush", "conn"}
    public = {  # the Store is composed of one class per concern (slotmem/store/)
        name
        for part in Store.__mro__
        for name, value in vars(part).items()
        if callable(value) and not name.startswith("_") and name not in plumbing
    }
    assert {"upsert", "query_facts", "set_policy", "dedupe", "stats"} <= public
    assert public <= set(vars(AsyncStore)), sorted(public - set(vars(AsyncStore)))
