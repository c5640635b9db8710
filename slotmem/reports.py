"""What the Store returns besides facts and hits: the result of an upsert, history entries,
links, what a memory holds about a name, and the reports of prune, restore, undo, import and
dedupe, and the flusher's cursors.

Apart from ``records.py`` (Fact, Hit, SlotPolicy: what every read makes) because a read never
makes these: CPython 3.11 takes about half a millisecond to make a dataclass's class (its
methods are compiled one by one), about 5 of a lexical ``slotmem context``'s 90 ms for these
nine, so a process loads this module when it first needs one of them (``records`` gives every
name, and ``slotmem`` the three it exports; tests/test_imports.py checks a read loads none of
it).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .records import Fact


@dataclass(frozen=True)
class UpsertResult:
    action: str  # "created" | "updated" | "unchanged" | "protected" (left: upsert_many)
    fact: Fact
    previous: Fact | None = None

    def __getattr__(self, name: str):
        """Reached only for a name the result does not hold: the ``fact`` of a result of
        ``created`` (a bulk load's), made on its first read and kept."""
        made = self.__dict__.get("_made") if name == "fact" else None
        if made is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        fact = self.__dict__["fact"] = _created_fact(made)
        del self.__dict__["_made"]
        return fact


def _created_fact(made: tuple) -> Fact:
    """The Fact of a created result (``records.created``: its id, checked item and time)."""
    fact_id, (slot, key, value, confidence, source, expires), now = made
    fact = object.__new__(Fact)
    object.__setattr__(
        fact,
        "__dict__",
        {"id": fact_id, "slot": slot, "key": key, "value": value, "confidence": confidence,
         "quality": 0, "source": source, "created_at": now, "updated_at": now,
         "last_accessed": now, "access_count": 0, "pinned_at": None, "protected_at": None,
         "expires_at": expires, "tags": ()},
    )  # fmt: skip
    return fact


@dataclass(frozen=True)
class HistoryEntry:
    """A fact as it was before a change (``reason``, one of HISTORY_REASONS) made at
    ``changed_at`` by ``changed_by``. ``version`` numbers the entries of one slot/key from 1,
    oldest first: ``Store.restore(slot, key, version=N)`` brings one back."""

    fact_id: str
    slot: str
    key: str
    value: str
    confidence: float
    quality: int
    source: str | None
    reason: str
    changed_at: int
    changed_by: str | None
    created_at: int = 0
    updated_at: int = 0
    last_accessed: int = 0
    access_count: int = 0
    pinned_at: int | None = None
    protected_at: int | None = None
    expires_at: int | None = None
    version: int = 0

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Link:
    """A typed, directed link between two live facts: ``from_fact`` -``rel``-> ``to_fact``,
    made at ``created_at`` by ``source`` (Store.link, migrations/0018_links.py)."""

    from_fact: Fact
    rel: str
    to_fact: Fact
    created_at: int
    source: str | None = None

    def to_dict(self) -> dict:
        return {
            "from": _end(self.from_fact),
            "rel": self.rel,
            "to": _end(self.to_fact),
            "created_at": self.created_at,
            "source": self.source,
        }


def _end(fact: Fact) -> dict:
    return {"slot": fact.slot, "key": fact.key, "value": fact.value}


@dataclass(frozen=True)
class LinkHistoryEntry:
    """A link that is gone (``reason``: one of LINK_REASONS), its facts named by slot and key
    (their rows may be gone too)."""

    from_slot: str
    from_key: str
    rel: str
    to_slot: str
    to_key: str
    created_at: int
    source: str | None
    removed_at: int
    reason: str
    removed_by: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class About:
    """What a memory holds about ``name`` (Store.about): the facts whose key or value names it
    (a lexical search, best first) and the links of those facts, one hop, each link's other
    end a fact ``linked`` names unless it is one of ``facts``."""

    name: str
    facts: tuple[Fact, ...]
    links: tuple[Link, ...]

    @property
    def linked(self) -> tuple[Fact, ...]:
        seen = {fact.id for fact in self.facts}
        found = []
        for link in self.links:
            for fact in (link.from_fact, link.to_fact):
                if fact.id not in seen:
                    seen.add(fact.id)
                    found.append(fact)
        return tuple(found)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "facts": [fact.to_dict() for fact in self.facts],
            "linked": [fact.to_dict() for fact in self.linked],
            "links": [link.to_dict() for link in self.links],
        }


@dataclass
class PruneReport:
    slot: str
    count: int
    cap: int
    removed: list[Fact] = field(default_factory=list)
    protected: int = 0  # facts over cap kept because they are recent, often used or pinned
    dry_run: bool = False
    expired: list[Fact] = field(default_factory=list)  # removed because they expired

    def to_dict(self) -> dict:
        return {
            "slot": self.slot,
            "count": self.count,
            "cap": self.cap,
            "removed": [fact.key for fact in self.removed],
            "expired": [fact.key for fact in self.expired],
            "protected": self.protected,
            "dry_run": self.dry_run,
        }


@dataclass(frozen=True)
class Change:
    """One fact changed (or that would be) by a restore, an undo, an import or a dedupe:
    ``action`` says what happened to ``slot``/``key``; ``value`` is its value afterwards (None:
    gone), ``old_value`` before (None: there was none); ``note`` says why, when it was left."""

    action: str
    slot: str
    key: str
    value: str | None = None
    old_value: str | None = None
    note: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ChangeReport:
    """What a restore, undo-flush, import or dedupe did, one Change per fact."""

    changes: list[Change] = field(default_factory=list)
    dry_run: bool = False
    records: dict[str, int] = field(default_factory=dict)  # other rows written (an import's)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for change in self.changes:
            counts[change.action] = counts.get(change.action, 0) + 1
        return counts

    def to_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "counts": self.counts(),
            "records": self.records,
            "changes": [change.to_dict() for change in self.changes],
        }


@dataclass(frozen=True)
class FlushCursor:
    """How far the flusher has read one conversation: its first ``messages`` messages, whose
    SHA-256 is ``prefix_hash`` (slotmem.ingest.cursor.prefix_hash), were flushed at
    ``flushed_at`` (epoch milliseconds)."""

    source: str
    messages: int
    prefix_hash: str
    flushed_at: int

    def to_dict(self) -> dict:
        return asdict(self)
