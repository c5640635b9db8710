"""Ingestion: conversation transcripts in, facts out, through a language model.

``transcripts`` and ``llm_logs`` read conversations, ``prompt`` builds what the model is asked,
``model`` asks it, ``reply`` parses its answer, ``policy`` decides what may be stored, ``report``
says what happened, and ``flush`` runs the whole, as a client of the Store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .flusher import flush
    from .llm_logs import from_llm_logs
    from .report import FlushItem, FlushReport
    from .transcripts import Transcript, parse, read_path

_EXPORTS = {
    "flush": "flusher",
    "FlushItem": "report",
    "FlushReport": "report",
    "Transcript": "transcripts",
    "parse": "transcripts",
    "read_path": "transcripts",
    "from_llm_logs": "llm_logs",
}
__all__ = [
    "FlushItem",
    "FlushReport",
    "Transcript",
    "flush",
    "from_llm_logs",
    "parse",
    "read_path",
]


def __getattr__(name: str):
    """``from slotmem.ingest import flush`` without importing llm and pydantic up front."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
