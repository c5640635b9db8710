"""slotmem for the llm tool ecosystem: a memory Toolbox any tool-using model can call.

    llm -T 'Slotmem("agent.db")' "Remember that I deploy on Tuesdays" --td
"""

from __future__ import annotations

import json

import llm

from .errors import InvalidInput
from .safety import injection_reason, secret_reason


class Slotmem(llm.Toolbox):
    """Long-term memory in a slotmem file: recall, remember and forget facts in slots."""

    def __init__(self, database: str | None = None):
        from .db import default_path

        self.database = database or str(default_path())
        self._memory = None

    def _store(self):
        if self._memory is None:
            from .store import Store

            self._memory = Store(self.database)
        return self._memory

    def recall(self, query: str, slot: str = "", limit: int = 10) -> str:
        """Search memory for facts relevant to the query, best first, as JSON.
        slot: user, project, agent or another slot name; empty searches every slot."""
        hits = self._store().query_facts(query, slots=[slot] if slot else None, limit=limit)
        return json.dumps(
            [{"slot": h.fact.slot, "key": h.fact.key, "value": h.fact.value,
              "confidence": h.fact.confidence} for h in hits],  # fmt: skip
            ensure_ascii=False,
        )

    def remember(self, slot: str, key: str, value: str, confidence: float = 0.8) -> str:
        """Store a durable fact under slot/key (user: about the user; project: decisions and
        constraints; agent: lessons learned). Reusing a key replaces the old value, which is
        kept in history."""
        reason = injection_reason(key, value) or secret_reason(value)
        if reason:
            raise InvalidInput(f"refused to store {slot}/{key}: {reason}")
        result = self._store().upsert(slot, key, value, confidence=confidence, source="llm-tool")
        return f"{result.action}: {slot}/{key}"

    def forget(self, slot: str, key: str) -> str:
        """Delete the fact slot/key (its last value stays in history)."""
        found = self._store().delete(slot, key, source="llm-tool")
        return f"forgot: {slot}/{key}" if found else f"no fact {slot}/{key}"


@llm.hookimpl
def register_tools(register):
    register(Slotmem)
