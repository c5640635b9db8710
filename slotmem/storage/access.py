"""Access tracking: which facts reached a caller, recorded without making the caller wait.

Prune keeps facts that were used (``access_count``, ``last_accessed``), so each search that
returns facts records it. A write needs SQLite's one write lock, which other processes may hold
for a while; a search that waited for it would take as long as the slowest writer. So:

1. After its read, a search tries to record at once, without waiting (busy timeout 0): when no
   one holds the write lock, its accesses are committed before it returns (one short write).
2. When someone does, the accesses are queued in this process and a background thread writes
   them as soon as it gets the lock, many searches' in one transaction. The search returns
   without waiting. ``flush()``, ``Store.close()`` and the end of the process write what is left.

**A fact just returned is never pruned.** A queued access is not in the file yet, so a prune
could not see it. Searches and prunes therefore meet at a lock file beside the database
(``<file>-lock``, ``flock``): a search holds it shared from before its read until its accesses
are committed; a prune announces itself in the file, then takes it exclusively, which waits for
the searches in flight to have written their accesses, and only then chooses what to remove. A
search that starts while a prune is announced or running does not queue: it waits for the write
lock, records its accesses after the prune, and drops from its hits any fact the prune removed
in between. Threads of one process meet the same way, in memory.

**Recording never makes a search fail.** A read-only file, a full disk or a lock held past the
busy timeout: the hits come back, and one warning per kind of failure is logged. Without
``fcntl`` (Windows), or where the lock file cannot be made, every search records its accesses
before it returns, waiting for the write lock if it must.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import SlotmemError, StoreBusy
from . import db, forks

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: every search records before it returns
    fcntl = None  # type: ignore[assignment]


RETRIES = 3  # busy timeouts a queued batch waits out before it is dropped (with a warning)

Record = Callable[[list[str], int], set[str]]


class Accesses:
    """Access tracking for one Store's file (handed its connections)."""

    def __init__(self, connections: db.Connections):
        self._connections = connections
        self._readonly = connections.readonly
        self._warned: set[str] = set()
        self._new_locks()
        self._start()
        _LIVE.add(self)
        forks.register(self._after_fork)

    def _new_locks(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._writing = threading.Lock()  # one batch written at a time

    def _after_fork(self) -> None:
        """In a forked child: the parent's threads may have held these locks, and its thread
        and queue are the parent's (it writes what it queued): new ones, empty."""
        self._new_locks()
        self._gate.close()  # the child's copy of the descriptor: the parent's lock stays
        self._start()

    def _start(self) -> None:
        self._pid = os.getpid()
        self._gate = Gate(Path(self._connections.path))
        self._searches = 0  # searches in flight holding the gate shared
        self._pending: dict[str, list[int]] = {}  # fact id -> [accesses, last access]
        self._queued = 0  # accesses queued (in _pending or being written), each holding the gate
        self._pruning = False
        self._thread: threading.Thread | None = None
        self._closed = False

    def _mine(self) -> None:
        """Under the lock: after a fork, the child starts afresh (the parent's lock stays)."""
        if self._pid != os.getpid():
            self._gate.close()
            self._start()

    # -- searches -----------------------------------------------------------------------------
    @contextlib.contextmanager
    def window(self, enabled: bool = True) -> Iterator[Record]:
        """Open it before reading what will be returned; call what it yields with the ids
        returned and the time: it records one access of each and answers those still in the
        file."""
        if not enabled or self._readonly:
            if enabled:
                self._warn("readonly", "the file is open read-only")
            yield lambda ids, now: set(ids)
            return
        with self._lock:
            self._mine()
            held = self._searches + self._queued > 0
            shared = not self._pruning and self._gate.share(held)
            if shared:
                self._searches += 1

        def record(ids: list[str], now: int) -> set[str]:
            ids = list(dict.fromkeys(ids))
            if not ids:
                return set()
            present = self._write(ids, now, wait=not shared)
            if present is None:  # the write lock is busy: the gate keeps prunes off meanwhile
                self._queue(ids, now)
                return set(ids)
            return present

        try:
            yield record
        finally:
            if shared:
                with self._lock:
                    self._searches -= 1
                    self._settle()

    def _write(self, ids: list[str], now: int, *, wait: bool) -> set[str] | None:
        """Record one access of each id and return the ids still in the file; when not
        ``wait``-ing and the write lock is busy, None (nothing written)."""
        with forks.calling():  # a fork waits for it: see slotmem.storage.forks
            return self._record(ids, now, wait=wait)

    def _record(self, ids: list[str], now: int, *, wait: bool) -> set[str] | None:
        conn = self._connections.get()
        marks = ", ".join("?" * len(ids))
        try:
            if not wait:
                conn.execute("PRAGMA busy_timeout = 0")
            try:
                with db.transaction(conn, self._connections.path):
                    conn.execute(
                        "UPDATE memory_facts SET access_count = access_count + 1, "
                        f"last_accessed = max(last_accessed, ?) WHERE id IN ({marks})",
                        [now, *ids],
                    )
                    rows = conn.execute(f"SELECT id FROM memory_facts WHERE id IN ({marks})", ids)
                    return {row[0] for row in rows}
            finally:
                if not wait:
                    conn.execute(f"PRAGMA busy_timeout = {db.BUSY_TIMEOUT_MS}")
        except StoreBusy:
            if not wait:
                return None
            self._warn("busy", "the write lock stayed busy")
        except (SlotmemError, db.DatabaseError) as e:
            self._warn(type(e).__name__, str(e))
        return set(ids)  # not recorded: the hits come back all the same

    def _warn(self, kind: str, reason: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            import logging  # here: a search that warns of nothing needs none of it

            logging.getLogger("slotmem").warning(
                "access counts not recorded in %s (%s)", self._connections.path, reason
            )

    # -- the queue ----------------------------------------------------------------------------
    def _queue(self, ids: list[str], now: int) -> None:
        with self._lock:
            self._queued += 1  # with the ids, so that a flush takes both or neither
            for fact_id in ids:
                entry = self._pending.setdefault(fact_id, [0, now])
                entry[0] += 1
                entry[1] = max(entry[1], now)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="slotmem-accesses", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._changed.wait()
                if not self._pending:
                    return
            self.flush()

    def flush(self) -> None:
        """Write every access queued so far (waiting for the write lock if it must)."""
        with self._writing:
            with self._lock:
                self._mine()
                batch, done = self._pending, self._queued
                self._pending = {}
            if batch:
                self._write_batch(batch)
            with self._lock:
                self._queued -= done
                self._settle()

    def _write_batch(self, batch: dict[str, list[int]]) -> None:
        """Write ``batch``, trying for the write lock without waiting inside SQLite (a fork
        waits for threads inside SQLite: see slotmem.storage.forks), for up to ``RETRIES``
        busy timeouts."""
        rows = [(count, last, fact_id) for fact_id, (count, last) in batch.items()]
        deadline = time.monotonic() + RETRIES * db.BUSY_TIMEOUT_MS / 1000
        pause = 0.001
        while self._try_batch(rows) is None:
            if time.monotonic() > deadline:
                self._warn("busy", "the write lock stayed busy")
                return
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _try_batch(self, rows: list[tuple]) -> bool | None:
        """One try: True when written, None when the write lock is busy, False on an error."""
        try:
            conn = self._connections.get()
        except SlotmemError as e:  # a child that may not use the file (storage/forks.py)
            self._warn(type(e).__name__, str(e))
            return False
        with forks.calling():
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                with db.transaction(conn, self._connections.path):
                    conn.executemany(
                        "UPDATE memory_facts SET access_count = access_count + ?, "
                        "last_accessed = max(last_accessed, ?) WHERE id = ?",
                        rows,
                    )
                return True
            except StoreBusy:
                return None
            except (SlotmemError, db.DatabaseError) as e:
                self._warn(type(e).__name__, str(e))
                return False
            finally:
                conn.execute(f"PRAGMA busy_timeout = {db.BUSY_TIMEOUT_MS}")

    def _settle(self) -> None:
        """Under the lock: let the gate go when no search and no queued access holds it."""
        if self._searches == 0 and self._queued == 0:
            self._gate.release()
        self._changed.notify_all()

    # -- prunes -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """Held while a prune chooses and removes facts: every access a search (of any thread
        or process) has returned is in the file by then, and new searches record after it."""
        with self._lock:
            self._mine()
            self._pruning = True
        try:
            with self._lock:  # this process's searches in flight finish first
                while self._searches:
                    self._changed.wait()
            self.flush()
            self._gate.lock()  # then other processes'
            try:
                yield
            finally:
                self._gate.unlock()
        finally:
            with self._lock:
                self._pruning = False

    def close(self) -> None:
        self.flush()
        with self._lock:
            self._closed = True
            self._changed.notify_all()
            self._gate.close()


class Gate:
    """The lock file where searches and prunes of every process meet (see the module)."""

    def __init__(self, database: Path):
        self.database = database
        self.path = database.with_name(database.name + "-lock")
        self._fd: int | None = None
        self._tried = False

    def _open(self) -> int | None:
        if not self._tried:
            self._tried = True
            if fcntl is not None and os.access(self.database, os.W_OK):
                with contextlib.suppress(OSError):
                    self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        return self._fd

    def share(self, held: bool) -> bool:
        """Hold it shared (``held``: this process already does) unless a prune is announced or
        running. False: record before returning."""
        fd = self._open()
        if fd is None or _announced(fd):
            return False
        if held:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def lock(self) -> None:
        """Announce a prune, then wait (up to the busy timeout) for the searches in flight."""
        fd = self._open()
        if fd is None:
            return  # nobody could make the file: every search records before it returns
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {_now()}\n".encode(), 0)
        deadline, pause = time.monotonic() + db.BUSY_TIMEOUT_MS / 1000, 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.unlock()
                    raise StoreBusy(
                        f"searches kept recording accesses in {self.database}; try again"
                    ) from None
                time.sleep(pause)
                pause = min(pause * 2, 0.05)

    def unlock(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Let go of the file (a forked child closes its copy: the parent's lock stays)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd, self._tried = None, False


def _announced(fd: int) -> bool:
    """Is a prune announced (and not left behind by a process that died)?"""
    try:
        text = os.pread(fd, 64, 0).decode("ascii", "replace").split()
    except OSError:
        return True
    if not text:
        return False
    try:
        return _now() - int(text[1]) < 4 * db.BUSY_TIMEOUT_MS
    except (IndexError, ValueError):
        return True


def _now() -> int:
    return time.time_ns() // 1_000_000


_LIVE: weakref.WeakSet[Accesses] = weakref.WeakSet()


@atexit.register
def _flush_all() -> None:
    """At exit, write what searches queued (their callers have the facts already)."""
    for accesses in list(_LIVE):
        with contextlib.suppress(Exception):
            accesses.flush()
