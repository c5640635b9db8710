"""slotmem for the llm tool ecosystem: a memory Toolbox any tool-using model can call, and
slotmem's offline default embedding model.

    llm -T 'Slotmem("agent.db")' "Remember that I deploy on Tuesdays" --td
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import llm

from . import tools

if TYPE_CHECKING:
    from ..store import Store

SOURCE = "llm-tool"


class Slotmem(llm.Toolbox):
    """Long-term memory in a slotmem file: recall, remember and forget facts in slots."""

    def __init__(self, database: str | None = None):
        from ..storage.db import default_path

        self.database = database or str(default_path())
        self._memory: Store | None = None

    def _store(self) -> Store:
        if self._memory is None:
            from ..store import Store

            self._memory = Store(self.database, create=True)  # an agent's memory starts empty
        return self._memory

    def recall(
        self, query: str, slot: str = "", limit: int = 10, min_relevance: float | None = None
    ) -> str:
        """Search memory for facts relevant to the query, best first, as JSON (an empty list
        when nothing remembered is). slot: user, project, agent or another slot name; empty
        searches every slot. min_relevance: 0 to 1 (default: each slot's floor)."""
        found = tools.recall(self._store(), query, slot, limit, min_relevance)
        return json.dumps(found, ensure_ascii=False)

    def remember(self, slot: str, key: str, value: str, confidence: float = 0.8) -> str:
        """Store a durable fact under slot/key (user: about the user; project: decisions and
        constraints; agent: lessons learned). Reusing a key replaces the old value, which is
        kept in history."""
        return tools.remember(self._store(), slot, key, value, confidence, SOURCE)

    def forget(self, slot: str, key: str) -> str:
        """Delete the fact slot/key (its last value stays in history)."""
        return tools.forget(self._store(), slot, key, SOURCE)


@llm.hookimpl
def register_tools(register):
    register(Slotmem)


@llm.hookimpl
def register_embedding_models(register):
    from ..vectors.embedders import MiniLM

    register(MiniLM())
