"""Schema migrations: the numbered files of the top-level ``migrations/`` folder (shipped inside
the wheel as ``slotmem/migrations``), registered into one sqlite-utils ``Migrations`` set and
applied when a file is opened, each in its own ``BEGIN IMMEDIATE`` transaction, recorded by name.
A file that has them all is read with one query, without importing sqlite-utils (a command
started for every prompt pays for each import).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ..errors import ForeignDatabase, ReadOnlyDatabase, SchemaTooNew
from . import litestream
from .db import DatabaseError, transaction, translate

if TYPE_CHECKING:
    from sqlite_utils import Database
    from sqlite_utils.migrations import Migrations

Progress = Callable[[str, int, int], None]  # (migration, rows done, rows in all)
MIGRATION_SET = "slotmem"
MIGRATIONS_TABLE = "_sqlite_migrations"  # sqlite-utils' record of applied migrations
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the slotmem package


def migrations_dir() -> Path:
    installed = PACKAGE_DIR / "migrations"  # inside the wheel
    return installed if installed.is_dir() else PACKAGE_DIR.parent / "migrations"


def migration_files() -> list[Path]:
    return sorted(migrations_dir().glob("[0-9][0-9][0-9][0-9]_*.py"))


@lru_cache(maxsize=1)
def migration_modules() -> dict[str, ModuleType]:
    modules = {}
    for path in migration_files():
        spec = importlib.util.spec_from_file_location(f"slotmem_migration_{path.stem}", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem] = module
    return modules


@lru_cache(maxsize=1)
def migration_set() -> Migrations:
    from sqlite_utils.migrations import Migrations

    migrations = Migrations(MIGRATION_SET)
    for name, module in migration_modules().items():
        migrations(name=name)(module.migrate)
    return migrations


def migration_names() -> list[str]:
    return [path.stem for path in migration_files()]


def applied_migrations(conn) -> list[str]:
    """The names applied to this file, in the order applied."""
    found = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,)
    ).fetchone()
    if found is None:
        return []
    rows = conn.execute(
        f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ? ORDER BY rowid",
        (MIGRATION_SET,),
    )
    return [row[0] for row in rows]


def check_owner(conn, path) -> None:
    """Refuse a file slotmem did not make: only an empty database (a new or zero-byte file) or
    one that records slotmem's migrations is slotmem's to write. Reads only."""
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
            if not litestream.is_litestream_table(name)  # Litestream may add them first
        ]
        sets = set()
        if MIGRATIONS_TABLE in tables:
            sets = {s for (s,) in conn.execute(f"SELECT migration_set FROM {MIGRATIONS_TABLE}")}
    except DatabaseError as e:
        raise translate(e, path) from e
    if MIGRATION_SET in sets or not tables or (tables == [MIGRATIONS_TABLE] and not sets):
        return  # slotmem's, empty, or being made by another process right now
    shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
    raise ForeignDatabase(
        f"{path} is a SQLite database that slotmem did not make (tables: {shown}); it was "
        "left as it is: give slotmem a new file, or one it made"
    )


def migrate(
    conn,
    path="the database",
    *,
    readonly: bool = False,
    progress: Progress | None = None,
    batch: int | None = None,
) -> list[str]:
    """Apply pending migrations, each in its own transaction. Returns the names applied. A
    read-only file must need none.

    A migration that converts many rows defines ``remaining(conn)`` and ``step(conn, limit)``:
    its rows are converted first, ``batch`` (else its own default) at a time, each batch in its
    own transaction, so that a conversion stopped midway resumes at the next open;
    ``progress(name, done, total)`` is told after each batch."""
    try:
        applied = set(applied_migrations(conn))
    except DatabaseError as e:
        raise translate(e, path) from e
    known = set(migration_names())
    if applied - known:
        raise SchemaTooNew(
            f"{path} was written by a newer slotmem (unknown migrations: "
            f"{', '.join(sorted(applied - known))}); upgrade slotmem with 'pip install -U slotmem'"
        )
    pending = sorted(known - applied)  # the names sort in the order they apply
    if not pending:
        return []
    if readonly:
        raise ReadOnlyDatabase(
            f"{path} needs schema changes ({', '.join(pending)}) but is read-only here: "
            "open it once with write access (any slotmem command that writes)"
        )
    db = _wrap(conn)
    migrations = migration_set()
    done: list[str] = []
    try:
        while pending:
            _steps(conn, path, pending[0], progress, batch)
            with transaction(conn, path):  # re-checked under the write lock: another may have won
                todo = migrations.pending(db)
                if todo:
                    migrations.apply(db, stop_before=[m.name for m in todo[1:]] or None)
                    done.append(todo[0].name)
            pending = [m.name for m in migrations.pending(db)]
    except DatabaseError as e:  # a full disk: each migration is rolled back whole
        raise translate(e, path) from e
    return done


def _steps(conn, path, name: str, progress: Progress | None, batch: int | None) -> None:
    """Run migration ``name``'s batches, if it has any, until none is left."""
    module = migration_modules()[name]
    if not hasattr(module, "step"):
        return
    total, done = module.remaining(conn), 0
    while True:
        with transaction(conn, path):
            if name in applied_migrations(conn):  # another process finished it
                return
            count = module.step(conn, *([batch] if batch else []))
        if not count:
            return
        done += count
        if progress:
            progress(name, done, max(total, done))


def _wrap(conn) -> Database:
    """sqlite-utils over slotmem's own connection (whatever its driver): sqlite-utils' module
    globals are left alone, so other users of sqlite-utils in this process (``llm``'s logs
    database, when slotmem runs as an llm plugin) keep the driver they chose."""
    from sqlite_utils import Database

    return Database(conn, recursive_triggers=False, execute_plugins=False)
