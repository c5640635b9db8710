"""The only module that knows which SQLite driver and which file slotmem talks to.

Connections: WAL, synchronous=NORMAL, a busy timeout, autocommit mode with explicit
``BEGIN IMMEDIATE`` for every write, one connection per thread, a new one after ``fork``.
Migrations: numbered files in the top-level ``migrations/`` folder (shipped inside the wheel as
``slotmem/migrations``), each applied in its own transaction, recorded by name.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import threading
from functools import lru_cache
from pathlib import Path

import sqlite_utils.db
import sqlite_utils.utils
from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from .errors import CorruptDatabase, InvalidInput, SchemaTooNew, StoreBusy

DRIVER_ENV = "SLOTMEM_SQLITE_DRIVER"


def choose_driver(name: str | None = None):
    """The DB-API module slotmem (and sqlite-utils, for slotmem's files) talks to.

    ``$SLOTMEM_SQLITE_DRIVER`` (sqlean, pysqlite3 or sqlite3) wins; otherwise ``sqlean`` when
    installed (the semantic extra: it can load sqlite-vec where the stdlib module cannot), else
    the module sqlite-utils picked (``pysqlite3`` when importable, else ``sqlite3``).
    """
    name = name or os.environ.get(DRIVER_ENV)
    if name:
        if name not in ("sqlean", "pysqlite3", "sqlite3"):
            raise InvalidInput(f"{DRIVER_ENV}={name!r}: use sqlean, pysqlite3 or sqlite3")
        return importlib.import_module(name)
    try:
        return importlib.import_module("sqlean")
    except ImportError:
        return sqlite_utils.utils.sqlite3


def align_sqlite_utils(module) -> None:
    """Make sqlite-utils use ``module`` too, so that its ``except OperationalError`` clauses
    catch the errors of the connections slotmem hands it."""
    for namespace in (sqlite_utils.utils, sqlite_utils.db):
        namespace.sqlite3 = module
        namespace.OperationalError = module.OperationalError


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
align_sqlite_utils(driver)

BUSY_TIMEOUT_MS = 10_000
# Reads through a memory map: a vector search scans the whole vec0 index (25 MB at 100k facts),
# and mapped pages spare a read() call each (measured: hybrid search across 100k facts 25% faster).
MMAP_BYTES = 1 << 30
MIGRATION_SET = "slotmem"
PACKAGE_DIR = Path(__file__).resolve().parent


def default_path() -> Path:
    """``$SLOTMEM_DB``, else ``memory.db`` in the user's data directory."""
    env = os.environ.get("SLOTMEM_DB")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("slotmem")) / "memory.db"


def migrations_dir() -> Path:
    installed = PACKAGE_DIR / "migrations"  # inside the wheel
    return installed if installed.is_dir() else PACKAGE_DIR.parent / "migrations"


@lru_cache(maxsize=1)
def migration_set() -> Migrations:
    migrations = Migrations(MIGRATION_SET)
    for path in sorted(migrations_dir().glob("[0-9][0-9][0-9][0-9]_*.py")):
        spec = importlib.util.spec_from_file_location(f"slotmem_migration_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        migrations(name=path.stem)(module.migrate)
    return migrations


def migration_names() -> list[str]:
    return [m.name for m in migration_set()._migrations]


def connect(path: str | os.PathLike) -> driver.Connection:
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
    except driver.DatabaseError as e:
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
    except driver.OperationalError as e:
        raise translate(e) from e
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except driver.OperationalError as e:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise translate(e) from e


def applied_migrations(conn) -> list[str]:
    return [m.name for m in migration_set().applied(_wrap(conn))]


def migrate(conn, path="the database") -> list[str]:
    """Apply pending migrations, each in its own transaction. Returns the names applied."""
    db = _wrap(conn)
    migrations = migration_set()
    try:
        newer = set(applied_migrations(conn)) - set(migration_names())
    except driver.DatabaseError as e:
        raise translate(e, path) from e
    if newer:
        raise SchemaTooNew(
            f"{path} was written by a newer slotmem (unknown migrations: {', '.join(sorted(newer))}); "
            "upgrade slotmem with 'pip install -U slotmem'"
        )
    done = []
    while migrations.pending(db):
        with transaction(conn):  # re-checked under the write lock: another process may have won
            pending = migrations.pending(db)
            if not pending:
                break
            migrations.apply(db, stop_before=[m.name for m in pending[1:]] or None)
            done.append(pending[0].name)
    return done


def _wrap(conn) -> Database:
    return Database(conn, recursive_triggers=False, execute_plugins=False)


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
