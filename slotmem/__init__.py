"""slotmem: memory for AI agents in one SQLite file."""

from .errors import (
    CorruptDatabase,
    InvalidInput,
    ModelError,
    SchemaTooNew,
    SlotmemError,
    StoreBusy,
)
from .records import Fact, HistoryEntry, Hit, PruneReport, SlotPolicy, UpsertResult
from .search.lexical import Ranking
from .store import Store

__version__ = "0.1.0"

__all__ = [
    "CorruptDatabase",
    "Fact",
    "HistoryEntry",
    "Hit",
    "InvalidInput",
    "ModelError",
    "PruneReport",
    "Ranking",
    "SchemaTooNew",
    "SlotPolicy",
    "SlotmemError",
    "Store",
    "StoreBusy",
    "UpsertResult",
]
