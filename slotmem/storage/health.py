"""Health checks of the stored file, and the repair of its full-text indexes.

The checks of the vector index live with it (slotmem/vectors/maintenance.py); the Store puts
both lists together for ``slotmem doctor``.
"""

from __future__ import annotations

from .db import DatabaseError, error_name
from .migrate import applied_migrations, migration_names

FTS_TABLES = ("memory_facts_fts", "memory_facts_cjk")  # words; CJK trigrams


def check_row(name: str, ok: bool | None, detail: str, fix: str) -> dict:
    """One row of a doctor report: the check, whether it passed (None: it could not run
    here, which is no failure), what was found, the fix."""
    ok = None if ok is None else bool(ok)
    return {"check": name, "ok": ok, "detail": detail, "fix": "" if ok is not False else fix}


def fts_in_sync(conn) -> tuple[bool | None, str]:
    """FTS5's integrity-check with rank 1 compares each index with its content. It is
    written as an INSERT, so a read-only file cannot run it: not checked, not drift."""
    for table in FTS_TABLES:
        try:
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        except DatabaseError as e:
            if error_name(e) == "SQLITE_READONLY":
                return None, "not checked: FTS5's check needs write access to the file"
            return False, f"{table}: {e}"
    return True, "ok"


def checks(conn) -> list[dict]:
    """Integrity, the full-text indexes, the schema version."""
    quick = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    rows = [
        check_row(
            "sqlite integrity",
            quick == ["ok"],
            "; ".join(quick[:5]),
            "restore the file from a backup (the damage is below slotmem)",
        )
    ]
    ok, detail = fts_in_sync(conn)
    rows.append(check_row("full-text index in sync", ok, detail, "slotmem doctor --repair"))
    applied = set(applied_migrations(conn))
    pending = [m for m in migration_names() if m not in applied]
    rows.append(
        check_row("schema up to date", not pending, ", ".join(pending) or "ok", "slotmem migrate")
    )
    return rows


def journal_check(conn, immutable: bool = False, follower: bool = False) -> dict:
    if immutable:  # SQLite reports an immutable file's mode as 'delete', whatever it is
        return check_row("WAL journal", None, "not checked: read as an immutable snapshot", "")
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if follower and mode != "wal":
        return check_row("WAL journal", True, f"{mode}: a follower, written by Litestream", "")
    return check_row("WAL journal", mode == "wal", mode, "open the file with slotmem once")


def rebuild_fts(conn) -> str:
    """Inside the caller's transaction: both full-text indexes anew from memory_facts."""
    for table in FTS_TABLES:
        conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
    return "rebuilt the full-text indexes from memory_facts"


def scan_check() -> dict:
    """The write scan's multilingual reader (an optional extra): in use here, or why not (no
    failure: the scan goes on with its other models, as "semantic search" off is none)."""
    from ..safety import multilingual

    reason = multilingual.unavailable()
    detail = (
        f"off: {reason}"
        if reason
        else f"{multilingual.MODEL_NAME} reads text not in English, and English text beside the"
        " semantic model"
    )
    return check_row("multilingual write scan", True, detail, "")
