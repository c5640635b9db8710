"""The flusher's cursors (migration 0009): per source, how many messages were flushed and the
hash of them. Handed a connection; the Store wraps these in its transactions."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..reports import FlushCursor


def read(conn, source: str) -> FlushCursor | None:
    row = conn.execute(
        "SELECT source, messages, prefix_hash, flushed_at FROM memory_flush_cursors "
        "WHERE source = ?",
        (source,),
    ).fetchone()
    from ..reports import FlushCursor

    return None if row is None else FlushCursor(*row)


def read_all(conn) -> list[FlushCursor]:
    from ..reports import FlushCursor

    rows = conn.execute(
        "SELECT source, messages, prefix_hash, flushed_at FROM memory_flush_cursors ORDER BY source"
    )
    return [FlushCursor(*row) for row in rows]


def write(conn, cursor: FlushCursor) -> None:
    conn.execute(
        "INSERT INTO memory_flush_cursors VALUES (?, ?, ?, ?) ON CONFLICT (source) DO UPDATE "
        "SET messages = excluded.messages, prefix_hash = excluded.prefix_hash, "
        "flushed_at = excluded.flushed_at",
        (cursor.source, cursor.messages, cursor.prefix_hash, cursor.flushed_at),
    )


def delete(conn, source: str) -> bool:
    return conn.execute("DELETE FROM memory_flush_cursors WHERE source = ?", (source,)).rowcount > 0
