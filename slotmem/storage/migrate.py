"""Schema migrations: the numbered files of the top-level ``migrations/`` folder (shipped inside
the wheel as ``slotmem/migrations``), registered into one sqlite-utils ``Migrations`` set and
applied when a file is opened, each in its own ``BEGIN IMMEDIATE`` transaction, recorded by name.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from ..errors import SchemaTooNew
from .db import DatabaseError, transaction, translate

MIGRATION_SET = "slotmem"
PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the slotmem package


def migrations_dir() -> Path:
    installed = PACKAGE_DIR / "migrations"  # inside the wheel
    return installed if installed.is_dir() else PACKAGE_DIR.parent / "migrations"


def migration_files() -> list[Path]:
    return sorted(migrations_dir().glob("[0-9][0-9][0-9][0-9]_*.py"))


@lru_cache(maxsize=1)
def migration_set() -> Migrations:
    migrations = Migrations(MIGRATION_SET)
    for path in migration_files():
        spec = importlib.util.spec_from_file_location(f"slotmem_migration_{path.stem}", path)
        assert spec is not None and spec.loader is not None, path
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        migrations(name=path.stem)(module.migrate)
    return migrations


def migration_names() -> list[str]:
    return [path.stem for path in migration_files()]


def applied_migrations(conn) -> list[str]:
    return [m.name for m in migration_set().applied(_wrap(conn))]


def migrate(conn, path="the database") -> list[str]:
    """Apply pending migrations, each in its own transaction. Returns the names applied."""
    db = _wrap(conn)
    migrations = migration_set()
    try:
        newer = set(applied_migrations(conn)) - set(migration_names())
    except DatabaseError as e:
        raise translate(e, path) from e
    if newer:
        raise SchemaTooNew(
            f"{path} was written by a newer slotmem (unknown migrations: "
            f"{', '.join(sorted(newer))}); upgrade slotmem with 'pip install -U slotmem'"
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
    """sqlite-utils over slotmem's own connection (whatever its driver): sqlite-utils' module
    globals are left alone, so other users of sqlite-utils in this process (``llm``'s logs
    database, when slotmem runs as an llm plugin) keep the driver they chose."""
    return Database(conn, recursive_triggers=False, execute_plugins=False)
