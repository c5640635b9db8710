"""The flusher's cursors: how far each conversation has been flushed (migration 0009)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..storage import cursors
from .core import Core, _translated

if TYPE_CHECKING:
    from ..reports import FlushCursor

_HASH = re.compile(r"[0-9a-f]{64}")


class Cursors(Core):
    """Per source, the messages already flushed. ``slotmem.ingest.flush(..., source=S)`` reads
    S's cursor, sends the model only the messages after it (with a few before them as context)
    and advances it in the transaction that writes the facts; an importer resumes the same way:

        cursor = store.flush_cursor("chatgpt:abc")      # None: never flushed
        done = cursor.messages if cursor else 0
        ...                                             # flush messages[done:]
        store.advance_flush_cursor("chatgpt:abc", len(messages), prefix_hash(messages))

    (``prefix_hash`` is ``slotmem.ingest.cursor.prefix_hash``.)"""

    @_translated
    def flush_cursor(self, source: str) -> FlushCursor | None:
        "The cursor of ``source``, or None when it was never flushed (or was reset)."
        return cursors.read(self.conn, _source(source))

    @_translated
    def flush_cursors(self) -> list[FlushCursor]:
        "Every source's cursor, by source."
        return cursors.read_all(self.conn)

    @_translated
    def advance_flush_cursor(self, source: str, messages: int, prefix_hash: str) -> FlushCursor:
        """Record that the first ``messages`` messages of ``source``, whose hash is
        ``prefix_hash`` (64 hex digits), have been flushed, now (the store's clock). It may
        move back: a conversation that changed is flushed again from its start."""
        if isinstance(messages, bool) or not isinstance(messages, int) or messages < 0:
            raise InvalidInput(f"messages must be a whole number >= 0, not {messages!r}")
        if not isinstance(prefix_hash, str) or not _HASH.fullmatch(prefix_hash):
            raise InvalidInput("prefix_hash must be a SHA-256 in hex (64 characters 0-9a-f)")
        from ..reports import FlushCursor

        cursor = FlushCursor(_source(source), messages, prefix_hash, self.clock())
        with self.transaction():
            cursors.write(self.conn, cursor)
        return cursor

    @_translated
    def reset_flush_cursor(self, source: str) -> bool:
        "Forget ``source``'s cursor (its next flush reads it all); False if it had none."
        with self.transaction():
            return cursors.delete(self.conn, _source(source))


def _source(source: str) -> str:
    if not isinstance(source, str) or not source.strip():
        raise InvalidInput("a flush cursor needs a source: a non-empty name")
    return source
