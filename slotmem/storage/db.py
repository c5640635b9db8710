"""The only module that knows which SQLite driver and which file slotmem talks to.

Connections: WAL, synchronous=NORMAL, a busy timeout, autocommit mode with explicit
``BEGIN IMMEDIATE`` for every write, one connection per thread, a new one after ``fork``.
The driver is chosen once, here, and only slotmem's own connections use it: no other library's
module globals are touched.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import (
    CorruptDatabase,
    DatabaseNotFound,
    DiskFull,
    InvalidInput,
    ReadOnlyDatabase,
    StorageError,
    StoreBusy,
)
from . import forks, litestream

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
# What a WAL file is cut back to when a checkpoint resets it. Without a limit it keeps the size
# of its largest burst (a reader that pinned it, one big transaction) for good.
JOURNAL_SIZE_LIMIT = 32 << 20


def default_path() -> Path:
    """``$SLOTMEM_DB``, else ``memory.db`` in the user's data directory."""
    env = os.environ.get("SLOTMEM_DB")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("slotmem")) / "memory.db"


def checked_path(path: str | os.PathLike) -> Path:
    """``path`` as a plain file path. SQLite would read ``:memory:``, an empty name or a
    ``file:`` URI as an in-memory, temporary or other database, and writes would be lost."""
    text = os.fsdecode(os.fspath(path))
    if text in ("", ":memory:") or text.startswith("file:") or "\x00" in text:
        raise InvalidInput(
            f"{text!r} is not a path to a file: slotmem takes a plain file path "
            "(':memory:', SQLite URIs and empty names are refused; connections are per thread)"
        )
    checked = Path(text)
    try:
        if checked.is_dir():
            raise InvalidInput(f"{checked} is a directory, not a database file")
        checked.exists()
    except OSError as e:  # a directory on the way this user may not enter
        raise StorageError(
            f"cannot reach {checked} ({e.strerror}): check the permissions of the directories "
            "on its path"
        ) from None
    return checked


def not_found(path: Path) -> DatabaseNotFound:
    return DatabaseNotFound(
        f"no memory file at {path}: check the path (-d, $SLOTMEM_DB), or create it "
        "(Store(path, create=True); the CLI's writing commands create it)"
    )


def writable(path: Path) -> bool:
    """May this process write the file, and create its -wal and -shm files beside it?"""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def connect(path: str | os.PathLike, mode: str = "rw"):
    """A bare connection to ``path`` (no pragmas yet: see ``configure``). ``mode`` is SQLite's
    URI mode: ``rw`` never creates the file, ``rwc`` does, ``ro`` only reads, and
    ``ro&immutable=1`` reads a file whose directory this process cannot write."""
    uri = f"{Path(path).absolute().as_uri()}?mode={mode}"  # the path percent-encoded: plain
    if not forks.usable():
        raise StorageError(
            f"{path}: this process was forked while another thread of its parent was inside "
            "slotmem (a lock SQLite held then stays held here): it cannot open the file; fork "
            "when no other thread is using slotmem, or use the 'spawn' start method"
        )
    try:
        return driver.connect(
            uri,
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
    except DatabaseError as e:
        raise translate(e, path) from e


def configure(conn, path: str | os.PathLike, readonly: bool = False) -> None:
    """slotmem's pragmas; a read-only connection leaves the journal mode as the file has it."""
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
            if litestream.has_state(path):  # its checkpoints are Litestream's: see transaction
                conn.execute("PRAGMA wal_autocheckpoint = 0")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
    except DatabaseError as e:
        raise translate(e, path) from e


def first_read(conn, path: str | os.PathLike) -> None:
    """Read the schema: a file that is not SQLite, or cannot be read, fails here."""
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except DatabaseError as e:
        raise translate(e, path) from e


MESSAGES = (  # message -> result code, for drivers that give no code
    ("database or disk is full", "SQLITE_FULL"),
    ("disk I/O error", "SQLITE_IOERR"),
    ("readonly database", "SQLITE_READONLY"),
    ("unable to open", "SQLITE_CANTOPEN"),
    ("locked", "SQLITE_BUSY"),
    ("busy", "SQLITE_BUSY"),
    ("not a database", "SQLITE_NOTADB"),
    ("malformed", "SQLITE_CORRUPT"),
    ("corrupt", "SQLITE_CORRUPT"),
)


def error_name(error: Exception) -> str:
    """SQLite's primary result code name (``SQLITE_FULL``...) of a driver error, from the
    message where the driver does not say (Python < 3.11) or says only SQLITE_ERROR (an FTS5
    shadow table that could not be made on a full disk)."""
    name = getattr(error, "sqlite_errorname", None)
    if name and name != "SQLITE_ERROR":
        return "_".join(str(name).split("_")[:2])
    message = str(error)
    for needle, code in MESSAGES:
        if needle in message:
            return code
    return "SQLITE_ERROR"


FULL_BYTES = 1 << 20  # less free space than this, for this user: the disk is full


def free_bytes(directory: str | os.PathLike) -> int | None:
    """Free space this user may use on the disk holding ``directory`` (None: unknown)."""
    try:
        stats = os.statvfs(directory)
    except (OSError, AttributeError):  # no such directory; Windows has no statvfs
        return None
    return stats.f_bavail * stats.f_frsize


def _disk_full(where) -> bool:
    free = free_bytes(where) if isinstance(where, Path) else None
    return free is not None and free < FULL_BYTES


def translate(error: Exception, path: str | os.PathLike = "the database") -> Exception:
    """Turn a driver error into the SlotmemError that names the file and says what to do."""
    message, code = str(error), error_name(error)
    where = Path(path).parent if isinstance(path, Path) else "its directory"
    if code in ("SQLITE_BUSY", "SQLITE_LOCKED"):
        return StoreBusy(f"{path} stayed locked by another process ({message}); try again")
    if code == "SQLITE_FULL" or (
        code in ("SQLITE_IOERR", "SQLITE_CANTOPEN") and _disk_full(where)
    ):  # a full disk: SQLite could not write the file, or make its -wal and -shm files
        return DiskFull(
            f"{path}: the disk is full ({message}); nothing was written, and the file is not "
            f"damaged. Free space on the disk that holds {where}, then try again"
        )
    if code == "SQLITE_READONLY":
        return ReadOnlyDatabase(
            f"{path} is read-only for this process ({message}): reading works; writing needs "
            f"write access to the file and to {where}"
        )
    if code in ("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"):
        return StorageError(
            f"cannot open {path} ({message}): check that {where} exists and that this user "
            "may read the file and write its directory"
        )
    if code == "SQLITE_IOERR":
        return StorageError(
            f"{path}: the disk reported an I/O error ({message}); check the disk (its free "
            "space, its health) and the permissions of the file and its -wal and -shm files, "
            "then try again"
        )
    if code == "SQLITE_NOTADB":
        return CorruptDatabase(
            f"{path} is not a SQLite database ({message}): give the right file, or restore "
            "it from a backup"
        )
    if code == "SQLITE_CORRUPT":
        return CorruptDatabase(
            f"{path} is damaged ({message}): run 'slotmem doctor' on it, or restore it "
            "from a backup"
        )
    return StorageError(f"{path}: {message}; if it persists, check the file with 'slotmem doctor'")


def translate_os(error: OSError, path: str | os.PathLike) -> StorageError:
    """An OSError reading or writing ``path`` (the database's lock file, an export) as the
    StorageError that names the file and says what to do."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFull(
            f"cannot write {path}: the disk is full ({error.strerror}); nothing was written. "
            "Free space on that disk, then try again"
        )
    return StorageError(f"cannot write {path} ({error.strerror or error}); nothing was written")


@contextlib.contextmanager
def os_errors(path: str | os.PathLike):
    """Inside: an OSError (the disk, the lock file beside the database) becomes translate_os's
    StorageError, naming the file it was about (else ``path``)."""
    try:
        yield
    except OSError as e:
        raise translate_os(e, e.filename or path) from e


@contextlib.contextmanager
def transaction(conn, path: str | os.PathLike = "the database"):
    """A write transaction begun with BEGIN IMMEDIATE (a savepoint when one is already open).
    A child forked inside leaves it untouched (the parent commits or rolls back).
    On a file Litestream replicates, the commit makes no automatic checkpoint: checked at every
    transaction, because Litestream may have started after this connection was opened."""
    if _stuck and os.fspath(path) in _stuck:
        raise StorageError(
            f"{path}: this process was forked in the middle of its parent's write transaction; "
            "it can read the file but not write it (fork before or after writing)"
        )
    if litestream.has_state(path):
        conn.execute("PRAGMA wal_autocheckpoint = 0")
    pid = os.getpid()
    if conn.in_transaction:
        conn.execute("SAVEPOINT slotmem")
        try:
            yield conn
        except BaseException:
            if os.getpid() == pid:
                conn.execute("ROLLBACK TO slotmem")
                conn.execute("RELEASE slotmem")
            raise
        if os.getpid() == pid:
            conn.execute("RELEASE slotmem")
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except OperationalError as e:
        raise translate(e, path) from e
    _began[id(conn)] = (path, wal_mark(path))
    with forks.calling(), _ended(conn):
        try:
            yield conn
        except BaseException:
            if os.getpid() == pid and conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if os.getpid() != pid:  # a child forked inside: the transaction is the parent's
            return
        try:
            conn.execute("COMMIT")
        except OperationalError as e:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise translate(e, path) from e


# A connection's file and WAL mark when it began writing, and the marks at the last fork.
_began: dict[int, tuple[str | os.PathLike, tuple[int, int] | None]] = {}
_at_fork: dict[int, tuple[int, int] | None] = {}
_stuck: set[str] = set()  # files this process was forked in the middle of writing (see below)


def wal_mark(path: str | os.PathLike) -> tuple[int, int] | None:
    """The WAL file's size and modification time: while a transaction holds the write lock,
    only it can change them, by writing pages into the WAL before it commits (a spill)."""
    try:
        info = os.stat(f"{os.fspath(path)}-wal")
    except (OSError, TypeError):
        return None
    return info.st_size, info.st_mtime_ns


def _mark_transactions() -> None:
    """Before a fork: the WAL mark of each file a transaction is writing (the parent may commit
    before the child looks)."""
    _at_fork.clear()
    _at_fork.update({key: wal_mark(path) for key, (path, _) in list(_began.items())})


forks.before_fork(_mark_transactions)


def _keep(conn) -> None:
    """Never free ``conn`` in this (forked) process: freeing a connection closes it, and
    closing the parent's would roll back or unlock what the parent is still doing."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(conn))


def _spilled(key: int) -> bool:
    """In a child: had the transaction of connection ``key`` written into the WAL by the fork?"""
    began = _began.get(key)
    return began is None or key not in _at_fork or began[1] != _at_fork[key]


@contextlib.contextmanager
def _ended(conn):
    try:
        yield
    finally:
        _began.pop(id(conn), None)


class Connections:
    """One connection per thread (and per process: a fork gets a fresh one). A follower's
    connections start afresh after each step Litestream applies to it (storage/litestream.py).

    ``readonly`` opens every connection read-only; one whose directory this process cannot
    write (no -wal or -shm can be made there) falls back to SQLite's immutable mode. ``check``
    is called with each new connection and the path before any pragma runs: the Store refuses
    files that are not its own there, before anything is written to them.

    sqlite-vec is loaded once something asks for it (``vec_error``: the semantic leg), then
    into every connection: importing it costs more than a lexical search (it imports numpy)."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        readonly: bool = False,
        create: bool = False,
        check: Callable[[Any, Path], None] | None = None,
    ):
        self.path = Path(path)
        self.readonly = readonly
        self.immutable = False  # set when read-only and the directory is read-only too
        self._mode = "ro" if readonly else ("rwc" if create else "rw")
        self._check = check
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list = []
        self._vec_wanted = False
        forks.register(self._after_fork)

    def _after_fork(self) -> None:
        """In a forked child: a new lock (another thread of the parent may have held it), and
        the forking thread's connection closed. SQLite keeps the locks a process's connections
        hold in memory the whole process shares: inherited, they would make every connection the
        child opens wait for a write lock the child can never see released. Closing it (which
        rolls back the parent's transaction in the child's copy only: POSIX locks are the
        parent's) lets them go; it is safe once no other thread was inside SQLite at the fork
        (``forks.quiet``) and the transaction wrote no page into the WAL yet (``wal_mark``).
        Connections of other threads stay open, unused and never freed (``_keep``)."""
        self._lock = threading.Lock()
        pid = os.getpid()
        conn = getattr(self._local, "conn", None)
        if conn is not None and self._local.pid != pid:
            self._local.conn = None
            if conn.in_transaction and (not forks.quiet() or _spilled(id(conn))):
                # it wrote pages into the WAL (rolling it back here would unindex them under
                # the parent's feet), or another thread may have been inside SQLite: left
                # open, its write lock stays held for this child, whose writes fail at once.
                _stuck.add(os.fspath(self.path))
            elif forks.quiet():
                with contextlib.suppress(Exception):
                    conn.close()
        for owner, inherited in self._all:
            if owner != pid:
                _keep(inherited)

    def get(self):
        local = self._local
        conn = getattr(local, "conn", None)
        if conn is not None and local.pid != os.getpid():
            conn = None  # a forked child: the parent's connection stays the parent's
        elif (
            conn is not None
            and local.mark is not None
            and not conn.in_transaction
            and litestream.follower_mark(self.path) != local.mark  # Litestream applied more
        ):
            self._forget(conn)
            conn = None
        if conn is None:
            local.mark = litestream.follower_mark(self.path)  # before opening: never stale
            local.conn = conn = self._open()
            conn.row_factory = driver.Row
            local.vec_loaded, local.vec_error = False, None
            local.pid = os.getpid()
            with self._lock:
                self._all.append((local.pid, conn))
        if self._vec_wanted and not local.vec_loaded:
            local.vec_loaded, local.vec_error = True, load_sqlite_vec(conn)
        return conn

    def _forget(self, conn) -> None:
        """Close ``conn`` and drop it from the list ``close`` works through."""
        with self._lock:
            self._all = [(owner, c) for owner, c in self._all if c is not conn]
        with contextlib.suppress(Exception):
            conn.close()

    def _open(self):
        conn = connect(self.path, self._mode)
        try:
            try:
                first_read(conn, self.path)
            except StorageError:  # ReadOnlyDatabase among them
                if not self.readonly or self.immutable:
                    raise
                conn.close()  # a read-only directory: no -shm can be made, read it as it is
                self._mode, self.immutable = "ro&immutable=1", True
                conn = connect(self.path, self._mode)
                first_read(conn, self.path)
            if self._check:
                self._check(conn, self.path)
            configure(conn, self.path, self.readonly)
        except BaseException:
            conn.close()
            raise
        if self._mode == "rwc":
            self._mode = "rw"  # created: later connections must not create it again
        return conn

    def with_vec(self):
        """This thread's connection with sqlite-vec loaded (``vec_error`` says why it could not
        be), as is every connection from now on: the vector index's reads need it on whichever
        thread runs them."""
        self._vec_wanted = True
        return self.get()

    def vec_error(self) -> str | None:
        """Why this thread's connection has no sqlite-vec (None: it has)."""
        self.with_vec()
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
