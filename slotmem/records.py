"""Plain data returned by the Store: facts and hits, and the slots' policies (history
entries, links and reports, which a read never makes, are in ``reports.py``; their names are
given here too, loading it when first asked for)."""

from __future__ import annotations

import datetime
import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names __getattr__ gives at run time (below), for type checkers
    from . import reports

    About = reports.About
    Change = reports.Change
    ChangeReport = reports.ChangeReport
    FlushCursor = reports.FlushCursor
    HistoryEntry = reports.HistoryEntry
    Link = reports.Link
    LinkHistoryEntry = reports.LinkHistoryEntry
    PruneReport = reports.PruneReport
    UpsertResult = reports.UpsertResult

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
    from .reports import UpsertResult

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
class SlotPolicy:
    slot: str
    cap: int
    min_age_days: float
    min_access_count: int
    description: str | None = None
    min_relevance: float | None = None  # the slot's floor for what reaches a prompt (None: default)

    def to_dict(self) -> dict:
        return asdict(self)


HISTORY_REASONS = ("update", "delete", "prune", "expired", "restore", "undo", "import", "merge")


LINK_REASONS = ("unlink", "deleted")  # why a link left: Store.unlink, or a fact of it left

# the names ``reports.py`` holds, given here as well (a read loads none of them)
REPORTS = (
    "About",
    "Change",
    "ChangeReport",
    "FlushCursor",
    "HistoryEntry",
    "Link",
    "LinkHistoryEntry",
    "PruneReport",
    "UpsertResult",
)


def __getattr__(name: str):
    if name in REPORTS:
        from . import reports

        return getattr(reports, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *REPORTS})
