"""Importers: the memories people already have, brought into a slotmem file.

- ``chatgpt`` and ``claude`` read the conversation exports of ChatGPT (``conversations.json``,
  a ``mapping`` tree per conversation) and Claude (``conversations.json``, ``chat_messages``);
  ``conversations.import_conversations`` sends each conversation through the flusher, one at a
  time, resumably (each conversation is its own flush source, ``chatgpt:<id>``);
- ``mcp_memory`` maps the MCP reference memory server's ``memory.json`` (entities, observations,
  relations) straight to facts, without a model;
- ``slotmem_file`` copies slots from another slotmem file through the Store's export and import.

Every reader checks the whole file before anything is written: a malformed file is an
ImportFileError naming the line or the conversation that is wrong.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .common import Conversation, ImportFileError
    from .conversations import (
        ConversationsReport,
        ImportInterrupted,
        import_conversations,
        read_conversations,
    )
    from .mcp_memory import import_memory_json, read_memory_json
    from .slotmem_file import import_slots

_EXPORTS = {
    "Conversation": "common",
    "ImportFileError": "common",
    "ConversationsReport": "conversations",
    "ImportInterrupted": "conversations",
    "import_conversations": "conversations",
    "read_conversations": "conversations",
    "import_memory_json": "mcp_memory",
    "read_memory_json": "mcp_memory",
    "import_slots": "slotmem_file",
}
__all__ = [
    "Conversation",
    "ConversationsReport",
    "ImportFileError",
    "ImportInterrupted",
    "import_conversations",
    "import_memory_json",
    "import_slots",
    "read_conversations",
    "read_memory_json",
]


def __getattr__(name: str):
    """``from slotmem.ingest.importers import import_conversations`` without importing llm."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
