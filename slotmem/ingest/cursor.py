"""Flushing a conversation as it grows: per source, the Store keeps a cursor (migration 0009:
how many messages were flushed, and a hash of them), and a flush sends the model only the
messages after it, with the last few before them as context.

    cursor = store.flush_cursor("chat.json")     # slotmem.reports.FlushCursor, or None
    store.advance_flush_cursor("chat.json", len(turns), prefix_hash(turns))
    store.reset_flush_cursor("chat.json")        # the next flush reads it all

``flush(store, transcript, source=S)`` does this itself (``from_start=True``, the CLI's
``--all``, reads it all again). An importer that flushes conversations one at a time resumes
with the same calls, one source per conversation.

A conversation that changed rather than grew (its first ``messages`` messages no longer hash
the same: an edited or different conversation under the same name) is read again from its
start, and the report says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .transcripts import Transcript, Turn

CONTEXT_MESSAGES = 4  # messages already flushed that are shown again, for context
CONTEXT_CHARS = 2_000  # at most this many characters of them (the latest kept)


def prefix_hash(messages) -> str:
    """SHA-256 (hex) of ``messages``: a Transcript, Turns, or messages in any shape
    ``slotmem.ingest.messages.from_messages`` reads. Each message's role and text count,
    nothing else (not its time or metadata)."""
    if isinstance(messages, Transcript):
        turns = messages.turns
    else:
        from .messages import message_turns

        turns = [turn for message in messages for turn in message_turns(message)]
    digest = hashlib.sha256()
    for turn in turns:
        digest.update(turn.role.encode() + b"\x1f" + turn.text.encode() + b"\x1e")
    return digest.hexdigest()


@dataclass
class Plan:
    """What a flush of a transcript sends: its messages from ``start`` on, after ``context``
    (messages already flushed); ``note`` says why it reads from the start, when it must."""

    start: int = 0
    context: list[Turn] = field(default_factory=list)
    note: str | None = None


def plan(store, source: str | None, turns: list[Turn], from_start: bool = False) -> Plan:
    "Where a flush of ``turns`` under ``source`` starts (no source: at the start)."
    if source is None or from_start:
        return Plan()
    cursor = store.flush_cursor(source)
    if cursor is None:
        return Plan()
    done = cursor.messages
    if done > len(turns) or prefix_hash(Transcript(turns[:done], "messages")) != cursor.prefix_hash:
        return Plan(
            note=f"{source!r} changed since it was last flushed (its first {done} messages "
            "are not the same): read again from its start"
        )
    return Plan(done, context(turns[:done]))


def context(turns: list[Turn]) -> list[Turn]:
    "The last CONTEXT_MESSAGES of ``turns``, within CONTEXT_CHARS (the latest kept)."
    kept: list[Turn] = []
    used = 0
    for turn in reversed(turns[-CONTEXT_MESSAGES:]):
        used += len(turn.render())
        if kept and used > CONTEXT_CHARS:
            break
        kept.append(turn)
    return kept[::-1]


def render_context(turns: list[Turn]) -> str:
    "``turns`` as the prompt shows them, at most CONTEXT_CHARS (a longer text keeps its end)."
    text = Transcript(turns, "messages").render() if turns else ""
    return text if len(text) <= CONTEXT_CHARS else "…" + text[-CONTEXT_CHARS:].lstrip()
