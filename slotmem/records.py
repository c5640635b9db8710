"""Plain data returned by the Store: facts, hits, history entries and reports."""

from __future__ import annotations

import datetime
import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
TIME_FIELDS = (
    "created_at",
    "updated_at",
    "last_accessed",
    "pinned_at",
    "protected_at",
    "expires_at",
    "changed_at",
)


def iso_time(ms: int | None) -> str | None:
    """Epoch milliseconds as ISO-8601 in UTC, to the millisecond (None stays None):
    ``2026-01-01T09:30:00.250+00:00``. Such strings sort as the times do."""
    if ms is None:
        return None
    moment = EPOCH + datetime.timedelta(milliseconds=ms)  # exact, unlike ms / 1000
    return moment.isoformat(timespec="milliseconds")


def with_iso_times(data: dict) -> dict:
    """``data`` with its time fields (TIME_FIELDS) as ISO-8601 strings."""
    return {name: iso_time(v) if name in TIME_FIELDS else v for name, v in data.items()}


@dataclass(frozen=True)
class Fact:
    id: str
    slot: str
    key: str
    value: str
    confidence: float
    quality: int
    source: str | None
    created_at: int
    updated_at: int
    last_accessed: int
    access_count: int
    pinned_at: int | None = None  # when it was pinned; None: not pinned
    protected_at: int | None = None  # when a person protected it from agents; None: not
    expires_at: int | None = None  # when it stops being returned; None: never
    tags: tuple[str, ...] = ()  # read by Store.get, list_facts, query_facts (not a column)

    @property
    def pinned(self) -> bool:
        return self.pinned_at is not None

    @property
    def protected(self) -> bool:
        return self.protected_at is not None

    @classmethod
    def from_row(cls, row) -> Fact:
        return fact_of(*[row[name] for name in FACT_COLUMNS], ())

    def to_dict(self) -> dict:
        return {**asdict(self), "tags": list(self.tags)}


# The memory_facts columns a Fact holds (its tags are rows of memory_fact_tags).
FACT_COLUMNS = tuple(f.name for f in fields(Fact) if f.name != "tags")
FACT_FIELDS = tuple(f.name for f in fields(Fact))


def fact_reader(columns: Sequence[str]) -> Callable[[Sequence], Fact]:
    """What makes the Fact of a row with these ``columns`` (a statement's: ``row.keys()``), by
    position: the same Fact as ``Fact.from_row``, at half its cost (a ``sqlite3.Row`` looks a
    name up by comparing it with each column's), for the many rows of one statement."""
    pick = operator.itemgetter(*(list(columns).index(name) for name in FACT_COLUMNS))
    return lambda row: fact_of(*pick(row), ())


def fact_of(*values) -> Fact:
    """The Fact of every field's value, in order (FACT_FIELDS), made without the frozen
    dataclass's ``__init__`` (a setattr per field: half a bulk load's own cost of a fact
    object). Equal to ``Fact(*values)`` in every way."""
    fact = object.__new__(Fact)
    fact.__dict__.update(zip(FACT_FIELDS, values, strict=True))
    return fact


def created(ids: Sequence[str], items: Sequence[tuple], now: int) -> list[UpsertResult]:
    """The results of facts just created (the ``"created"`` UpsertResult of each), ``items``
    checked (slot, key, value, confidence, source, expires_at) written at ``now`` with these
    ``ids``: a bulk load's Python per fact, so each result holds what its Fact is made of and
    makes the Fact when ``fact`` is first read (``UpsertResult.__getattr__``), equal in every
    way to ``UpsertResult("created", Fact(...))``: most bulk loads never read them."""
    new, assign = object.__new__, object.__setattr__
    results = []
    for fact_id, item in zip(ids, items, strict=True):
        result = new(UpsertResult)
        assign(
            result,
            "__dict__",
            {"action": "created", "previous": None, "_made": (fact_id, item, now)},
        )
        results.append(result)
    return results


def _created_fact(made: tuple) -> Fact:
    """The Fact of a created result (``created``: its id, checked item and time)."""
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


def hit_of(fact: Fact, score: float, explanation: dict | None, relevance: float) -> Hit:
    """``Hit(fact, score, explanation, relevance)``, made as ``fact_of`` makes a Fact (a search
    makes one per row: the frozen dataclass's ``__init__`` is a setattr per field)."""
    hit = object.__new__(Hit)
    object.__setattr__(
        hit,
        "__dict__",
        {"fact": fact, "score": score, "explanation": explanation, "relevance": relevance},
    )
    return hit


@dataclass(frozen=True)
class Hit:
    """A fact returned by a query: its score (the order of one search's hits), its relevance
    (the estimated probability, in [0, 1], that the fact is relevant to the query: the same
    scale for every search, see slotmem.search.relevance) and, on request, the parts of both."""

    fact: Fact
    score: float
    explanation: dict | None = None
    relevance: float = 0.0

    def to_dict(self) -> dict:
        data = {**self.fact.to_dict(), "score": self.score, "relevance": self.relevance}
        if self.explanation is not None:
            data["explanation"] = self.explanation
        return data


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


HISTORY_REASONS = ("update", "delete", "prune", "expired", "restore", "undo", "import", "merge")


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


LINK_REASONS = ("unlink", "deleted")  # why a link left: Store.unlink, or a fact of it left


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


@dataclass(frozen=True)
class SlotPolicy:
    slot: str
    cap: int
    min_age_days: float
    min_access_count: int
    description: str | None = None
    min_relevance: float | None = None  # the slot's floor for what reaches a prompt (None: default)

    def to_dict(self) -> dict:
        return asdict(self)


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
