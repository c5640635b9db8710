"""``AsyncStore``: the Store's methods as coroutines, for asyncio agent frameworks.

How it runs: SQLite calls block, so each call runs the Store's own method in a worker thread
of the AsyncStore's pool (``workers`` threads, 4 by default) and awaits it; the event loop
never blocks on the file. The Store is already safe to share between threads (one connection
per thread, every write one ``BEGIN IMMEDIATE`` transaction), so concurrent tasks are
concurrent calls: searches read side by side, writes take turns on the write lock.

    async with AsyncStore("agent.db", create=True) as mem:
        await mem.upsert("user", "timezone", "Europe/Stockholm")
        hits = await mem.query_facts("what timezone am I in?")
        text = await mem.run(build_context, "Can we deploy on Friday?")

A transaction cannot span several awaited calls (each may run on another thread, with its own
connection): put the read-modify-write in one function and ``await mem.run(fn)``, which calls
``fn(store)`` in one thread.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from .store import Store

P = ParamSpec("P")
R = TypeVar("R")


def _forward(
    method: Callable[Concatenate[Store, P], R],
) -> Callable[Concatenate[AsyncStore, P], Coroutine[Any, Any, R]]:
    @functools.wraps(method)
    async def call(self: AsyncStore, *args: P.args, **kwargs: P.kwargs) -> R:
        bound = getattr(self.store, method.__name__)  # the Store's, or a PostgresStore's
        return await self.call(functools.partial(bound, *args, **kwargs))

    return call


class AsyncStore:
    """A Store whose methods are awaited: the same names, arguments and results."""

    def __init__(self, path_or_store: str | os.PathLike | Store, *, workers: int = 4, **options):
        """``path_or_store``: a file or a ``postgresql://`` URL (opened with ``options``, as
        ``Store(path, **options)``) or an open Store. ``workers``: the threads calls run in."""
        self.store = (
            Store(path_or_store, **options)
            if isinstance(path_or_store, (str, os.PathLike))
            else path_or_store
        )
        self._workers = workers
        self._pid, self._pool = os.getpid(), self._new_pool()

    def _new_pool(self) -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="slotmem")

    def _executor(self) -> ThreadPoolExecutor:
        """The pool, a new one in a forked child: the parent's worker threads are not in the
        child, but its pool still counts them (and their idle turns), so it would start no
        thread for a call, and the call would wait forever."""
        if self._pid != os.getpid():
            self._pid, self._pool = os.getpid(), self._new_pool()
        return self._pool

    async def call(self, function: Callable[[], R]) -> R:
        """Run ``function()`` in a worker thread and await its result."""
        return await asyncio.get_running_loop().run_in_executor(self._executor(), function)

    async def run(self, function: Callable[..., R], *args, **kwargs) -> R:
        """``function(store, *args, **kwargs)`` in one worker thread: a transaction, a context
        (``slotmem.agents.context.build_context``), anything that needs the Store itself."""
        return await self.call(functools.partial(function, self.store, *args, **kwargs))

    upsert = _forward(Store.upsert)
    upsert_many = _forward(Store.upsert_many)
    delete = _forward(Store.delete)
    renew = _forward(Store.renew)
    rate = _forward(Store.rate)
    pin = _forward(Store.pin)
    unpin = _forward(Store.unpin)
    protect = _forward(Store.protect)
    unprotect = _forward(Store.unprotect)
    tag = _forward(Store.tag)
    untag = _forward(Store.untag)
    link = _forward(Store.link)
    unlink = _forward(Store.unlink)
    links = _forward(Store.links)
    link_history = _forward(Store.link_history)
    about = _forward(Store.about)
    get = _forward(Store.get)
    list_facts = _forward(Store.list_facts)
    history = _forward(Store.history)
    query_facts = _forward(Store.query_facts)
    flush_accesses = _forward(Store.flush_accesses)
    policies = _forward(Store.policies)
    policy = _forward(Store.policy)
    set_policy = _forward(Store.set_policy)
    min_relevance = _forward(Store.min_relevance)
    default_policy = _forward(Store.default_policy)
    flush_cursor = _forward(Store.flush_cursor)
    flush_cursors = _forward(Store.flush_cursors)
    advance_flush_cursor = _forward(Store.advance_flush_cursor)
    reset_flush_cursor = _forward(Store.reset_flush_cursor)
    set_default_policy = _forward(Store.set_default_policy)
    prune_slot = _forward(Store.prune_slot)
    prune = _forward(Store.prune)
    restore = _forward(Store.restore)
    undo_flush = _forward(Store.undo_flush)
    export = _forward(Store.export)
    export_to = _forward(Store.export_to)
    import_records = _forward(Store.import_records)
    duplicates = _forward(Store.duplicates)
    dedupe = _forward(Store.dedupe)
    checkpoint = _forward(Store.checkpoint)
    backup = _forward(Store.backup)
    doctor = _forward(Store.doctor)
    repair = _forward(Store.repair)
    slots = _forward(Store.slots)
    slot_names = _forward(Store.slot_names)
    stats = _forward(Store.stats)
    use_by_slot = _forward(Store.use_by_slot)
    record_episode = _forward(Store.record_episode)
    link_facts = _forward(Store.link_facts)
    get_episode = _forward(Store.get_episode)
    list_episodes = _forward(Store.list_episodes)
    search_episodes = _forward(Store.search_episodes)
    episode_facts = _forward(Store.episode_facts)
    fact_episodes = _forward(Store.fact_episodes)
    record_retrieval = _forward(Store.record_retrieval)
    retrievals = _forward(Store.retrievals)
    get_retrieval = _forward(Store.get_retrieval)
    prune_retrievals = _forward(Store.prune_retrievals)

    async def aclose(self) -> None:
        """Close the Store (its queued access counts are written) and the worker threads."""
        await self.call(self.store.close)
        self._executor().shutdown(wait=True)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()
