"""PostgresStore and the flusher (``memory_flush_cursors``, migrations/0005_flush_cursors.sql):
how far each conversation has been flushed, and ``undo_flush`` (slotmem.store.upkeep's, under
the memory's advisory lock). ``slotmem.ingest.flush(store, ...)`` works on either backend: it
reads and advances a cursor and writes its facts in ``store.transaction()``."""

from __future__ import annotations

import dataclasses
import re
import warnings

from .. import validation
from ..errors import InvalidInput
from ..records import Fact
from ..reports import Change, ChangeReport, FlushCursor, HistoryEntry
from . import server
from . import tags as fact_tags
from .reads import HISTORY_FIELDS
from .writes import Writes

_HASH = re.compile(r"[0-9a-f]{64}")
CURSOR_FIELDS = ("source", "messages", "prefix_hash", "flushed_at")


class Cursors(Writes):
    """Per source, the messages already flushed; undoing what flushes wrote."""

    @server.translated
    def flush_cursor(self, source: str) -> FlushCursor | None:
        "The cursor of ``source``, or None when it was never flushed (or was reset)."
        row = self.conn.execute(
            f"SELECT {', '.join(CURSOR_FIELDS)} FROM memory_flush_cursors WHERE source = %s",
            (_source(source),),
        ).fetchone()
        return None if row is None else FlushCursor(**row)

    @server.translated
    def flush_cursors(self) -> list[FlushCursor]:
        "Every source's cursor, by source."
        rows = self.conn.execute(
            f"SELECT {', '.join(CURSOR_FIELDS)} FROM memory_flush_cursors ORDER BY source"
        )
        return [FlushCursor(**row) for row in rows]

    @server.translated
    def advance_flush_cursor(self, source: str, messages: int, prefix_hash: str) -> FlushCursor:
        """As Store.advance_flush_cursor: the first ``messages`` messages of ``source``, whose
        hash is ``prefix_hash`` (64 hex digits), have been flushed, now."""
        self._writable()
        if isinstance(messages, bool) or not isinstance(messages, int) or messages < 0:
            raise InvalidInput(f"messages must be a whole number >= 0, not {messages!r}")
        if not isinstance(prefix_hash, str) or not _HASH.fullmatch(prefix_hash):
            raise InvalidInput("prefix_hash must be a SHA-256 in hex (64 characters 0-9a-f)")
        cursor = FlushCursor(_source(source), messages, prefix_hash, self.clock())
        with self.conn.transaction():
            write_cursor(self.conn, dataclasses.astuple(cursor))
        return cursor

    @server.translated
    def reset_flush_cursor(self, source: str) -> bool:
        "Forget ``source``'s cursor (its next flush reads it all); False if it had none."
        self._writable()
        with self.conn.transaction():
            gone = self.conn.execute(
                "DELETE FROM memory_flush_cursors WHERE source = %s", (_source(source),)
            )
            return gone.rowcount > 0

    def flush(self, transcript, model=None, **options):
        """Deprecated: use ``slotmem.ingest.flush(store, transcript, model, ...)``."""
        warnings.warn(
            "Store.flush is deprecated: use slotmem.ingest.flush(store, transcript, model)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ..ingest.flusher import flush

        return flush(self, transcript, model, **options)

    @server.translated
    def undo_flush(self, source: str, *, dry_run: bool = False) -> ChangeReport:
        """As Store.undo_flush: each fact whose value a flush of ``source`` wrote goes back to
        its value before (``reverted``), or away when the flush created it (``deleted``);
        facts changed since, or protected by a person since, are ``kept``. Every value
        replaced goes to history (reason ``undo``). Decided and written under the memory's
        advisory lock (a dry run reads without it)."""
        source = validation.text(source, "source", validation.MAX_SOURCE_CHARS, single_line=True)
        if dry_run:
            with self.conn.transaction():
                return self._undo_flush(source, True)
        self._writable()
        with self.transaction():
            return self._undo_flush(source, False)

    def _undo_flush(self, source: str, dry_run: bool) -> ChangeReport:
        """slotmem.storage.lifecycle.undo_flush's decisions, in PostgreSQL's SQL."""
        from ..storage import lifecycle
        from . import transfer

        conn, now = self.conn, self.clock()
        matches = lifecycle.flush_source(source)
        by = f"undo-flush:{source}"
        report, seen = ChangeReport(dry_run=dry_run), set()
        prefix = f"flush:{source}|"
        found = conn.execute(
            "SELECT * FROM memory_facts WHERE source = %s OR starts_with(source, %s) ORDER BY seq",
            (source, prefix),
        ).fetchall()
        for row in found:
            fact = Fact.from_row(row)
            seen.add((fact.slot, fact.key))
            before = next((e for e in self._entries(fact) if not matches(e.source)), None)
            if fact.protected_at is not None and (
                before is None or fact.protected_at >= fact.updated_at
            ):
                note = "protected by a person since the flush wrote it"
                report.changes.append(Change("kept", fact.slot, fact.key, fact.value, None, note))
                continue
            if before is None:
                report.changes.append(Change("deleted", fact.slot, fact.key, None, fact.value))
                if not dry_run:
                    self._remove([row["seq"]], "undo", now, by)
                continue
            restored = lifecycle.with_value(fact, before, now)
            restored = dataclasses.replace(restored, tags=fact_tags.of_seq(conn, row["seq"]))
            report.changes.append(Change("reverted", fact.slot, fact.key, before.value, fact.value))
            if not dry_run:
                transfer.archive(conn, row["seq"], "undo", now, by)
                transfer.overwrite(conn, row["seq"], restored)
        changed = conn.execute(
            """SELECT h.slot, h.key, f.value, f.source, min(h.hid) AS first
               FROM memory_fact_history h JOIN memory_facts f ON f.id = h.fact_id
               WHERE h.source = %s OR starts_with(h.source, %s)
               GROUP BY h.slot, h.key, f.value, f.source ORDER BY first""",
            (source, prefix),
        ).fetchall()
        for row in changed:
            if (row["slot"], row["key"]) not in seen:
                seen.add((row["slot"], row["key"]))
                note = f"changed since the flush (now from {row['source']})"
                report.changes.append(
                    Change("kept", row["slot"], row["key"], row["value"], None, note)
                )
        return report

    def _entries(self, fact: Fact) -> list[HistoryEntry]:
        """``fact``'s own history entries, newest first (rows.history's, with versions)."""
        rows = self.conn.execute(
            f"""SELECT {", ".join(f"h.{name}" for name in HISTORY_FIELDS)},
                       (SELECT count(*) FROM memory_fact_history v
                        WHERE v.slot = h.slot AND v.key = h.key AND v.hid <= h.hid) AS version
                FROM memory_fact_history h
                WHERE h.slot = %s AND h.key = %s AND h.fact_id = %s ORDER BY h.hid DESC""",
            (fact.slot, fact.key, fact.id),
        ).fetchall()
        return [HistoryEntry(**row) for row in rows]


def write_cursor(conn, cursor: tuple) -> None:
    conn.execute(
        f"INSERT INTO memory_flush_cursors ({', '.join(CURSOR_FIELDS)}) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (source) DO UPDATE SET messages = excluded.messages, "
        "prefix_hash = excluded.prefix_hash, flushed_at = excluded.flushed_at",
        cursor,
    )


def _source(source: str) -> str:
    if not isinstance(source, str) or not source.strip():
        raise InvalidInput("a flush cursor needs a source: a non-empty name")
    return source
