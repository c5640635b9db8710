"""slotmem: memory for AI agents in one SQLite file."""

from typing import TYPE_CHECKING

from .errors import (
    CorruptDatabase,
    DatabaseNotFound,
    DiskFull,
    ForeignDatabase,
    InvalidInput,
    ModelError,
    NotPermitted,
    ProtectedFact,
    ReadOnlyDatabase,
    ReplicationError,
    SchemaTooNew,
    SlotmemError,
    StorageError,
    StoreBusy,
)
from .records import Fact, Hit, SlotPolicy
from .search.lexical import Ranking
from .store import Store

if TYPE_CHECKING:
    from .reports import HistoryEntry, PruneReport, UpsertResult

__version__ = "0.1.0"

__all__ = [
    "CorruptDatabase",
    "DatabaseNotFound",
    "DiskFull",
    "Fact",
    "ForeignDatabase",
    "HistoryEntry",
    "Hit",
    "InvalidInput",
    "ModelError",
    "NotPermitted",
    "ProtectedFact",
    "PruneReport",
    "Ranking",
    "ReadOnlyDatabase",
    "ReplicationError",
    "SchemaTooNew",
    "SlotPolicy",
    "SlotmemError",
    "StorageError",
    "Store",
    "StoreBusy",
    "UpsertResult",
]


def __getattr__(name: str):
    """The names of ``__all__`` not imported above (HistoryEntry, PruneReport, UpsertResult),
    from ``reports.py`` when first asked for: a read loads none of it."""
    if name in __all__:
        from . import reports

        return getattr(reports, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
