"""slotmem: memory for AI agents in one SQLite file."""

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
from .records import Fact, HistoryEntry, Hit, PruneReport, SlotPolicy, UpsertResult
from .search.lexical import Ranking
from .store import Store

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
