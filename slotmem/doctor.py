"""Health checks of one file, and the repairs they name."""

from __future__ import annotations

from . import db

FTS_TABLES = ("memory_facts_fts", "memory_facts_cjk")  # words; CJK trigrams


def fts_in_sync(conn) -> tuple[bool, str]:
    """FTS5's integrity-check with rank 1 compares each index with its content."""
    for table in FTS_TABLES:
        try:
            conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")
        except db.driver.DatabaseError as e:
            return False, f"{table}: {e}"
    return True, "ok"


def check(store) -> list[dict]:
    """One row per check: name, ok, detail, and the fix when not ok."""
    conn = store.conn
    results = []
    quick = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
    results.append(_row("sqlite integrity", quick == ["ok"], "; ".join(quick[:5]),
                        "restore the file from a backup (the damage is below slotmem)"))  # fmt: skip
    ok, detail = fts_in_sync(conn)
    results.append(_row("full-text index in sync", ok, detail, "slotmem doctor --repair"))
    pending = [m for m in db.migration_names() if m not in db.applied_migrations(conn)]
    results.append(_row("schema up to date", not pending, ", ".join(pending) or "ok", "slotmem migrate"))
    semantic = store.semantic.status()
    if semantic["enabled"]:
        fresh = semantic["active"] and not semantic["stale"]
        detail = semantic["reason"] or (f"{semantic['model']}, {semantic['embedded']} vectors, "
                                         f"{semantic['stale']} missing or stale")  # fmt: skip
        fix = "slotmem reindex"
        if store._connections.vec_error():
            fix = "pip install 'slotmem[semantic]', or use a Python whose sqlite3 can load extensions"
        results.append(_row("semantic search", fresh, detail, fix))
        if semantic["active"]:
            rows, vectors = semantic["index_rows"], semantic["embedded"]
            results.append(_row("vector index in sync", rows == vectors,
                                f"{rows} indexed, {vectors} stored", "slotmem doctor --repair"))  # fmt: skip
    else:
        results.append(_row("semantic search", True, "off (full-text only): " + (
            store._connections.vec_error() or "enable it with 'slotmem reindex'"), ""))  # fmt: skip
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    results.append(_row("WAL journal", mode == "wal", mode, "open the file with slotmem once"))
    return results


def repair(store) -> list[str]:
    """Rebuild what is derived (the FTS indexes, the vector index) from what is true
    (memory_facts, memory_embeddings)."""
    done = ["rebuilt the full-text indexes from memory_facts"]
    with store.transaction():
        for table in FTS_TABLES:
            store.conn.execute(f"INSERT INTO {table} ({table}) VALUES ('rebuild')")
        if store.semantic.rebuild_index():
            done.append("rebuilt the vector index from memory_embeddings")
    return done


def _row(name, ok, detail, fix) -> dict:
    return {"check": name, "ok": bool(ok), "detail": detail, "fix": "" if ok else fix}
