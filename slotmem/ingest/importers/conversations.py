"""Conversation exports through the flusher, one conversation at a time, resumably.

Each conversation is flushed as its own source, ``<format>:<conversation id>`` (what
``slotmem undo-flush`` takes), so the flusher's per-source cursor knows what it has read: an
import that stopped (a model error, Ctrl-C) and is run again skips the conversations it
finished, without asking the model again, and carries on from the one that failed.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field

from ...errors import SlotmemError
from ..defaults import DEFAULT_SLOTS
from ..report import FlushReport
from . import chatgpt, claude
from .common import Conversation, ImportFileError

READERS = {"chatgpt": chatgpt.read, "claude": claude.read}
FORMATS = tuple(READERS)


@dataclass
class ConversationsReport:
    """What an import of conversations did: a flush report per conversation it sent to the
    model, and the conversations an earlier run had finished (``skipped``)."""

    format: str
    total: int  # conversations with text in the file
    flushed: list[tuple[Conversation, FlushReport]] = field(default_factory=list)
    skipped: list[Conversation] = field(default_factory=list)
    dry_run: bool = False

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for _, report in self.flushed:
            for action, n in report.counts().items():
                found[action] = found.get(action, 0) + n
        return found

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "conversations": self.total,
            "flushed": len(self.flushed),
            "skipped": len(self.skipped),
            "dry_run": self.dry_run,
            "counts": self.counts(),
            "reports": [
                {"conversation": c.id, "title": c.title, **report.to_dict()}
                for c, report in self.flushed
            ],
        }


class ImportInterrupted(SlotmemError):
    """A conversation failed (the model, the file); those before it are imported, and running
    the same import again resumes from it. ``report`` says what was done."""

    def __init__(self, message: str, report: ConversationsReport):
        super().__init__(message)
        self.report = report


def read_conversations(fmt: str, data: str | bytes, name: str) -> list[Conversation]:
    """The conversations of an export in format ``fmt`` (chatgpt or claude), all checked."""
    if fmt not in READERS:
        raise ImportFileError(f"unknown export format {fmt!r}: expected {', '.join(FORMATS)}")
    return READERS[fmt](data, name)


def source_of(fmt: str, conversation: Conversation) -> str:
    return f"{fmt}:{conversation.id}"


def import_conversations(
    store,
    conversations: list[Conversation],
    fmt: str,
    model=None,
    *,
    slots=DEFAULT_SLOTS,
    dry_run: bool = False,
    progress: bool = False,
    **options,
) -> ConversationsReport:
    """Flush each conversation into ``store`` with ``model`` (see slotmem.ingest.flush; the
    other ``options`` are passed on to it). A failure stops the import with ImportInterrupted,
    what was finished staying written; run again, the import resumes where it stopped."""
    from ..flusher import flush
    from ..model import check_options, resolve

    model = resolve(model)  # an unknown model, or option, fails before any conversation
    if options.get("options"):
        options["options"] = check_options(model, options["options"])
    report = ConversationsReport(fmt, len(conversations), dry_run=dry_run)
    with _progress(conversations, progress) as bar:
        for index, conversation in enumerate(bar, 1):
            source = source_of(fmt, conversation)
            try:
                done = flush(
                    store,
                    conversation.messages,
                    model,
                    slots=slots,
                    source=source,
                    dry_run=dry_run,
                    **options,
                )
            except SlotmemError as e:
                finished = len(report.flushed) + len(report.skipped)
                raise ImportInterrupted(
                    f"conversation {index} of {len(conversations)}, {conversation.label()}, "
                    f"failed: {e}. The {finished} before it are imported: run the same import "
                    "again to resume",
                    report,
                ) from e
            if done.chunks == 0:  # the cursor had read it all: finished by an earlier run
                report.skipped.append(conversation)
            else:
                report.flushed.append((conversation, done))
    return report


def _progress(conversations: list[Conversation], enabled: bool):
    if not enabled:
        return contextlib.nullcontext(conversations)
    import click

    return click.progressbar(
        conversations,
        label="Importing conversations",
        file=sys.stderr,
        show_pos=True,
        item_show_func=lambda c: (c.title or c.id)[:40] if c is not None else None,
    )
