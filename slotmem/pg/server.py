"""The connections to a PostgreSQL memory, its migrations, its lock, and driver errors as
SlotmemErrors.

One connection per thread (a new one after fork), autocommit, ``search_path`` set to the
memory's schema. Migrations are the numbered ``migrations/NNNN_*.sql`` files shipped in the
wheel, recorded in ``memory_migrations`` and applied in one transaction under the memory's
advisory lock, so processes opening a new memory at once do not race. ``exclusive`` takes the
same lock for a read-decide-write that spans rows (prune, import, ``Store.transaction()``),
where the file relies on ``BEGIN IMMEDIATE``: it holds across hosts, but needs a session
(a transaction-mode pooler such as PgBouncer's keeps the lock, which is per transaction: fine;
it loses ``search_path``, which slotmem sets per connection: see docs/scaling.md)."""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from importlib.resources import files

from ..errors import ForeignDatabase, SchemaTooNew, SlotmemError, StorageError, StoreBusy
from .target import Target

MIGRATIONS = "migrations"


def require_driver() -> None:
    """psycopg 3, or a one-line error that says how to install it."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StorageError(
            "a memory on PostgreSQL needs psycopg 3: pip install 'slotmem[postgres]'"
        ) from None


def translate(error: Exception, target: Target) -> SlotmemError:
    """A psycopg error as one line that names the server (never its password)."""
    import psycopg

    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if isinstance(error, psycopg.errors.LockNotAvailable | psycopg.errors.QueryCanceled):
        return StoreBusy(f"{target}: busy ({first})")
    if isinstance(error, psycopg.OperationalError):
        return StorageError(f"cannot reach PostgreSQL at {target}: {first}")
    return StorageError(f"PostgreSQL ({target}): {first}")


def translated(method):
    """Driver errors leave a PostgresStore's public methods as SlotmemErrors."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        import psycopg

        try:
            return method(self, *args, **kwargs)
        except psycopg.Error as e:
            raise translate(e, self.target) from None

    return wrapper


def lock_key(memory: str) -> str:
    return f"slotmem:{memory}"


class Connections:
    """This thread's connection to the memory (a new one after fork); ``close`` closes all."""

    def __init__(self, target: Target):
        self.target = target
        self._local = threading.local()
        self._lock = threading.Lock()
        self._open: list = []
        self._pid = os.getpid()

    def get(self):
        if self._pid != os.getpid():  # forked: the parent's connections are not ours
            self._local, self._open, self._pid = threading.local(), [], os.getpid()
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = self._local.conn = self._connect()
            with self._lock:
                self._open.append(conn)
        return conn

    def _connect(self):
        import psycopg
        from psycopg.rows import dict_row

        try:
            conn = psycopg.connect(self.target.conninfo, autocommit=True, row_factory=dict_row)
        except psycopg.Error as e:
            raise translate(e, self.target) from None
        conn.execute(f'SET search_path TO "{self.target.memory}"')
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._open:
                with contextlib.suppress(Exception):
                    conn.close()
            self._open.clear()
        self._local = threading.local()


@contextlib.contextmanager
def exclusive(conn, memory: str):
    """One transaction holding the memory's advisory lock (released at its end)."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock_key(memory),))
        yield


def migrations() -> list[tuple[str, str]]:
    """(name, SQL) of every migration this slotmem knows, in order."""
    folder = files("slotmem.pg").joinpath(MIGRATIONS)
    found = [(f.name.removesuffix(".sql"), f) for f in folder.iterdir() if f.name.endswith(".sql")]
    return [(name, f.read_text(encoding="utf-8")) for name, f in sorted(found)]


def migrate(conn, target: Target) -> list[str]:
    """Create the memory's schema when missing and apply the migrations it lacks; the names
    applied. A schema that holds tables but is not slotmem's is refused, untouched."""
    known = migrations()
    schema = target.memory
    with exclusive(conn, schema):
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
        ).fetchall()
        names = {row["table_name"] for row in tables}
        if names and "memory_migrations" not in names:
            raise ForeignDatabase(
                f"{target}: the schema {schema!r} holds tables that are not slotmem's: "
                "name another memory (?memory=NAME)"
            )
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        conn.execute(
            "CREATE TABLE IF NOT EXISTS memory_migrations "
            "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        applied = {row["name"] for row in conn.execute("SELECT name FROM memory_migrations")}
        newer = sorted(applied - {name for name, _ in known})
        if newer:
            raise SchemaTooNew(
                f"{target} was migrated by a newer slotmem ({newer[-1]}): upgrade slotmem"
            )
        done = []
        for name, sql in known:
            if name not in applied:
                conn.execute(sql)
                conn.execute("INSERT INTO memory_migrations (name) VALUES (%s)", (name,))
                done.append(name)
        return done


def applied(conn) -> list[str]:
    return [row["name"] for row in conn.execute("SELECT name FROM memory_migrations ORDER BY 1")]
