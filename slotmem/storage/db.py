"""The only module that knows which SQLite driver and which file slotmem talks to.

Connections: WAL, synchronous=NORMAL, a busy timeout, autocommit mode with explicit
``BEGIN IMMEDIATE`` for every write, one connection per thread, a new one after ``fork``.
The driver is chosen once, here, and only slotmem's own connections use it: no other library's
module globals are touched.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from pathlib import Path

from ..errors import CorruptDatabase, InvalidInput, StoreBusy

DRIVER_ENV = "SLOTMEM_SQLITE_DRIVER"
DRIVERS = ("sqlean", "pysqlite3", "sqlite3")


def choose_driver(name: str | None = None):
    """The DB-API module slotmem talks to.

    ``$SLOTMEM_SQLITE_DRIVER`` (sqlean, pysqlite3 or sqlite3) wins; otherwise the first of
    ``sqlean`` (the semantic extra: it can load sqlite-vec where the stdlib module cannot),
    ``pysqlite3`` (what sqlite-utils prefers too) and ``sqlite3`` that imports.
    """
    name = name or os.environ.get(DRIVER_ENV)
    if name:
        if name not in DRIVERS:
            raise InvalidInput(f"{DRIVER_ENV}={name!r}: use sqlean, pysqlite3 or sqlite3")
        return importlib.import_module(name)
    for candidate in DRIVERS[:-1]:
        try:
            return importlib.import_module(candidate)
        except ImportError:
            pass
    return importlib.import_module("sqlite3")


def can_load_extensions(module=None) -> bool:
    return hasattr((module or driver).Connection, "enable_load_extension")


def load_sqlite_vec(conn) -> str | None:
    """Load sqlite-vec into ``conn``: None when loaded, else why semantic search is off."""
    if not can_load_extensions():
        return (
            f"this Python's SQLite driver ({driver.__name__}) cannot load extensions: "
            "pip install 'slotmem[semantic]' (brings sqlean-py, which can)"
        )
    try:
        import sqlite_vec
    except ImportError:
        return "sqlite-vec is not installed: pip install 'slotmem[semantic]'"
    try:
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except Exception as e:  # noqa: BLE001 - any failure means: lexical only, and say why
        return f"sqlite-vec could not be loaded: {e}"
    return None


driver = choose_driver()
DatabaseError = driver.DatabaseError
OperationalError = driver.OperationalError

BUSY_TIMEOUT_MS = 10_000
# Reads through a memory map: a vector search scans the whole vec0 index, and mapped pages
# spare a read() call each (docs/benchmarks.md has the measurement).
MMAP_BYTES = 1 << 30


def default_path() -> Path:
    """``$SLOTMEM_DB``, else ``memory.db`` in the user's data directory."""
    env = os.environ.get("SLOTMEM_DB")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("slotmem")) / "memory.db"


def connect(path: str | os.PathLike):
    """Open ``path`` with slotmem's pragmas. Raises CorruptDatabase for a file that is not SQLite."""
    path = Path(path)
    if path.is_dir():
        raise InvalidInput(f"{path} is a directory, not a database file")
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = driver.connect(
        str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    except DatabaseError as e:
        conn.close()
        raise translate(e, path) from e
    return conn


def translate(error: Exception, path: str | os.PathLike = "the database") -> Exception:
    """Turn a driver error into the SlotmemError that says what to do."""
    message = str(error)
    if "locked" in message or "busy" in message:
        return StoreBusy(f"{path} stayed locked by another process: {message}; try again")
    if "not a database" in message or "malformed" in message or "corrupt" in message:
        return CorruptDatabase(
            f"{path} is not a slotmem database or is damaged ({message}); "
            "run 'slotmem doctor' on it, or restore it from a backup"
        )
    return error


@contextlib.contextmanager
def transaction(conn):
    """A write transaction begun with BEGIN IMMEDIATE (a savepoint when one is already open)."""
    if conn.in_transaction:
        conn.execute("SAVEPOINT slotmem")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK TO slotmem")
            conn.execute("RELEASE slotmem")
            raise
        conn.execute("RELEASE slotmem")
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except OperationalError as e:
        raise translate(e) from e
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except OperationalError as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise translate(e) from e


class Connections:
    """One connection per thread (and per process: a fork gets a fresh one)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list = []

    def get(self):
        local = self._local
        if getattr(local, "conn", None) is None or local.pid != os.getpid():
            local.conn = connect(self.path)
            local.conn.row_factory = driver.Row
            local.vec_error = load_sqlite_vec(local.conn)
            local.pid = os.getpid()
            with self._lock:
                self._all.append((local.pid, local.conn))
        return local.conn

    def vec_error(self) -> str | None:
        """Why this thread's connection has no sqlite-vec (None: it has)."""
        self.get()
        return self._local.vec_error

    def close(self):
        pid = os.getpid()
        with self._lock:
            mine = [conn for owner, conn in self._all if owner == pid]
            self._all = [(owner, conn) for owner, conn in self._all if owner != pid]
        for conn in mine:
            with contextlib.suppress(Exception):
                conn.close()
        self._local = threading.local()
