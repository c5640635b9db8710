"""Forks a process at a point where slotmem holds a lock, a thread or a queue, and checks that
the child can search, write, prune, close and exit. Run by tests/test_fork.py in a process of its
own (pytest's is never forked):

    python tests/forking.py SCENARIO RUNS DATABASE [BOUND_SECONDS]

SCENARIO: search (fork while a search's window is open and another thread searches), queued
(fork while another process holds the write lock and the access thread waits for it),
transaction (fork inside ``store.transaction()``), semantic (fork after the helper thread of the
vector scan has run, with fake embeddings), asked (fork after a hybrid search's worker thread
has run, while another thread searches), spilled (fork inside a transaction that has written
pages into the WAL: the child must read, have its writes refused at once, and leave the
parent's transaction whole), asyncio (fork after an AsyncStore's worker threads ran: the child
awaits calls), writing (fork while another thread stays inside a write transaction past the
fork's wait), inside (fork while other threads run inside SQLite past it): in those two the
child's calls are refused at once; thread (fork from a thread that is not the main one),
pool (multiprocessing's Pool with the fork start method). Each child must exit 0 within BOUND_SECONDS (10); a
child that does not is killed. Prints one JSON line: {"ok": n, "hung": [...], "failed": [...]}.
"""

from __future__ import annotations

import asyncio
import faulthandler
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

import llm

from slotmem import StorageError, Store
from slotmem.storage import forks

WORDS = ["tea", "coffee", "deploy", "berlin", "friday", "python", "review", "garden"]


class FakeEmbeddings(llm.EmbeddingModel):
    """Words hashed into 64 buckets: deterministic, no model."""

    model_id = "fake-64"

    def embed_batch(self, items):
        for text in items:
            vector = [0.0] * 64
            for word in text.lower().split():
                vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
            yield vector


class Plugin:
    @llm.hookimpl
    def register_embedding_models(self, register):
        register(FakeEmbeddings())


def child(store: Store, tag: str) -> int:
    """What a forked worker does first: search, write, prune, close."""
    try:
        if not store.query_facts("green tea"):
            print("child: the search found nothing", file=sys.stderr)
            return 3
        store.upsert("agent", f"child.{tag}.{os.getpid()}", f"a forked child wrote this ({tag})")
        store.prune()
        store.close()
    except BaseException as e:  # noqa: BLE001 - reported through the exit code
        print(f"child: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    return 0


def fork(store: Store, tag: str) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        sys.exit(child(store, tag))  # a normal exit: atexit handlers and all
    return pid


def wait(pid: int, bound: float) -> str:
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return "ok" if code == 0 else f"exit {code}"
        time.sleep(0.01)
    os.kill(pid, signal.SIGUSR1)  # where it hangs, to stderr (faulthandler, set in main)
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"


def until(condition, what: str, bound: float = 60.0) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        if time.monotonic() > deadline:
            raise SystemExit(f"the parent never saw {what}")
        time.sleep(0.001)


def fill(store: Store) -> None:
    store.upsert_many(
        {
            "slot": "user",
            "key": f"k{i}",
            "value": f"note {i}: green tea and {WORDS[i % len(WORDS)]} {i * 7}",
        }
        for i in range(60)
    )


def scenario_search(store: Store, run: int, bound: float) -> str:
    stop = threading.Event()

    def searching():
        while not stop.is_set():
            store.query_facts("green tea")

    other = threading.Thread(target=searching)
    other.start()
    try:
        with store.tracking() as track:  # a search's window is open: the gate held shared
            hits = store.query_facts("green tea", track_access=False)
            pid = fork(store, f"search{run}")
            track([hit.fact.id for hit in hits])
    finally:
        stop.set()
        other.join()
    return wait(pid, bound)


WRITER = """
import sys
from slotmem import Store, StorageError
store = Store(sys.argv[1])
with store.transaction():
    store.upsert("project", "writer." + sys.argv[2], "another process holds the write lock")
    print("held", flush=True)
    sys.stdin.readline()
"""


def scenario_queued(store: Store, run: int, bound: float) -> str:
    writer = subprocess.Popen(  # another process holds the write lock
        [sys.executable, "-c", WRITER, str(store.path), str(run)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        if writer.stdout.readline().strip() != "held":
            raise SystemExit("the writer did not take the write lock")
        store.query_facts("green tea")  # the write lock is busy: its accesses are queued
        accesses = store._accesses
        until(lambda: accesses._writing.locked(), "the access thread waiting for the write lock")
        pid = fork(store, f"queued{run}")
    finally:
        writer.communicate("\n", timeout=60)
    return wait(pid, bound)


def scenario_transaction(store: Store, run: int, bound: float) -> str:
    with store.transaction():
        store.upsert("project", f"parent{run}", "written inside the parent's transaction")
        pid = fork(store, f"transaction{run}")
    return wait(pid, bound)


def scenario_spilled(store: Store, run: int, bound: float) -> str:
    """Fork inside a transaction that has written pages into the WAL before committing (more
    than SQLite's page cache holds): the child searches and exits, leaving the transaction to
    the parent, whose commit must then be whole."""
    big = "x" * 900
    with store.transaction():
        store.upsert_many(
            {"slot": "project", "key": f"bulk{run}.{i}", "value": f"bulk {i} {big}"}
            for i in range(4000)
        )
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # it reads; a write is refused at once, not after a wait
            try:
                store.upsert("agent", "child", "a forked child wrote this")
            except StorageError as e:
                sys.exit(0 if "forked" in str(e) and store.query_facts("green tea") else 3)
            sys.exit(4)
        outcome = wait(pid, bound)
    with Store(store.path) as fresh:
        check = fresh.conn.execute("PRAGMA integrity_check").fetchone()[0]
        found = len(fresh.list_facts("project", limit=None))
        hits = fresh.query_facts(f"bulk {run * 7}", slots=["project"], limit=1)
    if check != "ok" or found != 4000 * (run + 1) or not hits:
        return f"the parent's transaction was damaged: {check}, {found} facts"
    return outcome


def scenario_semantic(store: Store, run: int, bound: float) -> str:
    store.query_facts("green tea and coffee")  # the vector scan's helper thread runs
    if store.semantic.index._pool is None:
        raise SystemExit("the helper thread did not run")
    return wait(fork(store, f"semantic{run}"), bound)


def scenario_asked(store: Store, run: int, bound: float) -> str:
    """Fork after a hybrid search's worker thread (``Semantic.ask``) has run, while another
    thread keeps searching (its worker may be embedding at the fork): the child's searches
    make a worker of their own."""
    store.semantic.forget_query_vectors()
    store.query_facts("green tea and coffee")
    if store.semantic._pool is None:
        raise SystemExit("the question's worker did not run")
    stop = threading.Event()

    def searching():
        while not stop.is_set():
            store.semantic.forget_query_vectors()
            store.query_facts("coffee and deploy", track_access=False)

    other = threading.Thread(target=searching)
    other.start()
    try:
        return wait(fork(store, f"asked{run}"), bound)
    finally:
        stop.set()
        other.join()


def scenario_thread(store: Store, run: int, bound: float) -> str:
    """Fork from a thread that is not the main one while the main one searches."""
    stop, outcome = threading.Event(), []
    forking = threading.Thread(target=lambda: outcome.append(fork(store, f"thread{run}")))
    forking.start()
    while forking.is_alive() and not stop.is_set():
        store.query_facts("green tea")
        forking.join(0.001)
    forking.join()
    return wait(outcome[0], bound)


POOLED: list[Store] = []


def _pooled(number: int) -> int:
    store = POOLED[0]
    store.query_facts("green tea")
    store.upsert("project", f"pool.{os.getpid()}.{number}", "a pool's worker wrote this")
    return number


def scenario_pool(store: Store, run: int, bound: float) -> str:
    """multiprocessing's Pool with the 'fork' start method, its workers using the parent's
    Store (their exit is os._exit, without atexit handlers)."""
    import multiprocessing

    POOLED[:] = [store]
    store.query_facts("green tea")
    with multiprocessing.get_context("fork").Pool(2) as pool:
        done = pool.map_async(_pooled, range(6))
        try:
            if done.get(bound) != list(range(6)):
                return "wrong results"
        except multiprocessing.TimeoutError:
            return "hung"
    return wait(fork(store, f"pool{run}"), bound)  # and a child of the parent afterwards


def scenario_asyncio(store: Store, run: int, bound: float) -> str:
    """Fork after an AsyncStore's worker threads have run (a server that opened its memory
    before forking its workers): the child awaits calls of its own."""
    from slotmem.aio import AsyncStore

    mem = AsyncStore(store, workers=2)
    asyncio.run(_calls(mem, "parent", run))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            asyncio.run(_calls(mem, "child", run))
            asyncio.run(mem.aclose())
        except BaseException as e:  # noqa: BLE001 - reported through the exit code
            print(f"child: {type(e).__name__}: {e}", file=sys.stderr)
            sys.exit(2)
        sys.exit(0)
    return wait(pid, bound)


async def _calls(mem, who: str, run: int) -> None:
    if not await mem.query_facts("green tea"):
        raise SystemExit(f"{who}: the search found nothing")
    key = f"{who}.asyncio{run}.{os.getpid()}"
    await mem.upsert("agent", key, f"an AsyncStore's {who} wrote this")
    await mem.prune()


def scenario_writing(store: Store, run: int, bound: float) -> str:
    """Fork while another thread stays inside a write transaction past the fork's wait (a
    thread of the user's that writes slowly): the child's calls are refused at once (before,
    each write waited out the busy timeout, and its exit three more), and it exits at once."""
    inside, done = threading.Event(), threading.Event()

    def writing():
        with store.transaction():
            store.upsert("project", f"slow{run}", "a slow write of another thread")
            inside.set()
            done.wait(300)

    other = threading.Thread(target=writing)
    other.start()
    try:
        inside.wait(60)
        return _refused_child(store, run, bound)
    finally:
        done.set()
        other.join()


def scenario_inside(store: Store, run: int, bound: float) -> str:
    """Fork while other threads run inside SQLite past the fork's wait (long queries): one
    of them may hold a lock of SQLite's own (its allocator's, the one around opening files),
    held in the child for good: a child that opened a connection hung there (4 of 30). The
    child's calls are refused at once instead."""
    stop = threading.Event()
    inside = [threading.Event(), threading.Event()]

    def querying(entered: threading.Event):
        conn = store.conn
        with forks.calling():  # as one long Store call would be
            entered.set()
            while not stop.is_set():
                conn.execute(LONG_QUERY).fetchone()

    others = [threading.Thread(target=querying, args=(entered,)) for entered in inside]
    for other in others:
        other.start()
    try:
        for entered in inside:
            entered.wait(60)
        return _refused_child(store, run, bound)
    finally:
        stop.set()
        for other in others:
            other.join()


LONG_QUERY = """WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
SELECT group_concat(hex(randomblob(8))) FROM c"""


def _refused_child(store: Store, run: int, bound: float) -> str:
    forks.QUIET_SECONDS = 0.2  # how long the fork waits for the other threads: any finite time
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        sys.exit(_refused(store, run))
    return wait(pid, bound)


def _refused(store: Store, run: int) -> int:
    """Each call fails at once with a StorageError that says why; close and exit work."""
    try:
        for call in (
            lambda: store.query_facts("green tea"),
            lambda: store.upsert("agent", f"child.refused{run}", "a forked child wrote this"),
            lambda: store.prune(),
            lambda: Store(store.path).get("user", "k1"),
        ):
            try:
                call()
            except StorageError as e:
                if "forked" not in str(e):
                    raise
            else:
                return 4
        store.close()
    except BaseException as e:  # noqa: BLE001 - reported through the exit code
        print(f"child: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    return 0


def main() -> None:
    name, runs, database = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    bound = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # children inherit it
    llm.pm.register(Plugin(), name="fake-embeddings")
    store = Store(database, create=True)
    fill(store)
    if name in ("semantic", "asked"):
        store.semantic.reindex("fake-64")
    scenario = globals()[f"scenario_{name}"]
    outcomes = [scenario(store, run, bound) for run in range(runs)]
    store.close()
    print(
        json.dumps(
            {
                "ok": outcomes.count("ok"),
                "hung": [i for i, o in enumerate(outcomes) if o == "hung"],
                "failed": [f"{i}: {o}" for i, o in enumerate(outcomes) if o not in ("ok", "hung")],
            }
        )
    )


if __name__ == "__main__":
    main()
