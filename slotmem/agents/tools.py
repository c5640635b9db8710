"""The agent-facing memory operations shared by the llm toolbox and the MCP server."""

from __future__ import annotations

from ..errors import InvalidInput
from ..safety import injection_reason, secret_reason


def recall(store, query: str, slot: str = "", limit: int = 10) -> list[dict]:
    hits = store.query_facts(query, slots=[slot] if slot else None, limit=limit)
    return [
        {
            "slot": h.fact.slot,
            "key": h.fact.key,
            "value": h.fact.value,
            "confidence": h.fact.confidence,
        }
        for h in hits
    ]


def remember(store, slot: str, key: str, value: str, confidence: float, source: str) -> str:
    """Upsert after the same injection and secret scan the flusher applies."""
    reason = injection_reason(key, value) or secret_reason(key, value)
    if reason:
        raise InvalidInput(f"refused to store {slot}/{key}: {reason}")
    result = store.upsert(slot, key, value, confidence=confidence, source=source)
    return f"{result.action}: {slot}/{key}"


def forget(store, slot: str, key: str, source: str) -> str:
    return (
        f"forgot: {slot}/{key}"
        if store.delete(slot, key, source=source)
        else f"no fact {slot}/{key}"
    )
