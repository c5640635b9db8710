"""What a flush did: one item per proposed fact, in the Store's own words (``created``,
``updated``, ``unchanged``), or ``rejected`` with the reason."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

ACTIONS = ("created", "updated", "unchanged", "rejected")


@dataclass
class FlushItem:
    slot: str
    key: str
    value: str
    confidence: float | None
    action: str  # one of ACTIONS
    old_value: str | None = None
    reason: str | None = None
    ttl: str | None = None  # as the model proposed it
    expires_at: int | None = None  # epoch milliseconds: when it was said plus the ttl

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class FlushReport:
    source: str
    model: str
    prompt_version: str
    dry_run: bool
    chunks: int = 0
    items: list[FlushItem] = field(default_factory=list)
    messages: int = 0  # the transcript's messages read this time
    skipped: int = 0  # its messages read by an earlier flush (the source's cursor), not sent
    context: int = 0  # of those, how many were shown again as context
    sent_chars: int = 0  # characters of transcript sent to the model (context included)
    continuations: int = 0  # requests for the rest of a reply cut off at the output limit
    notes: list[str] = field(default_factory=list)  # what the report must say beside the facts

    def by_action(self, action: str) -> list[FlushItem]:
        return [item for item in self.items if item.action == action]

    created = property(lambda self: self.by_action("created"))
    updated = property(lambda self: self.by_action("updated"))
    unchanged = property(lambda self: self.by_action("unchanged"))
    rejected = property(lambda self: self.by_action("rejected"))

    def counts(self) -> dict[str, int]:
        return {action: len(self.by_action(action)) for action in ACTIONS}

    def provenance(self) -> str:
        """What each fact this flush writes records as its ``source``."""
        return f"flush:{self.source}|model:{self.model}|prompt:{self.prompt_version}"

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "model": self.model,
            "prompt_version": self.prompt_version,
            "dry_run": self.dry_run,
            "chunks": self.chunks,
            "messages": self.messages,
            "skipped": self.skipped,
            "context": self.context,
            "sent_chars": self.sent_chars,
            "continuations": self.continuations,
            "notes": list(self.notes),
            "counts": self.counts(),
            "facts": [item.to_dict() for item in self.items],
        }
