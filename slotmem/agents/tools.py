"""The agent-facing memory operations shared by the llm toolbox and the MCP server."""

from __future__ import annotations

from ..errors import InvalidInput
from ..safety import injection_reason, secret_reason


def recall(
    store, query: str, slot: str = "", limit: int = 10, min_relevance: float | None = None
) -> list[dict]:
    """The facts relevant to ``query``, best first: hits below the floor stay out (the call's
    ``min_relevance``, else each slot's, else the default), so a query about nothing
    remembered gets an empty list, not the nearest facts."""
    if min_relevance is not None:
        floors: dict[str, float] = {}
        lowest = min_relevance
    elif slot:
        floors, lowest = {}, store.min_relevance(slot)
    else:  # every slot, each with its own floor: ask with the lowest, then apply each
        floors = {p.slot: store.min_relevance(p.slot) for p in store.policies()}
        lowest = min([store.min_relevance(), *floors.values()])
    with store.tracking() as track:
        hits = store.query_facts(
            query,
            slots=[slot] if slot else None,
            limit=limit if not floors else 3 * limit,
            min_relevance=lowest,
            track_access=False,
        )
        default = store.min_relevance() if min_relevance is None else min_relevance
        hits = [h for h in hits if h.relevance >= floors.get(h.fact.slot, default)][:limit]
        present = track([h.fact.id for h in hits])
    return [
        {
            "slot": h.fact.slot,
            "key": h.fact.key,
            "value": h.fact.value,
            "confidence": h.fact.confidence,
            "relevance": round(h.relevance, 4),
            "pinned": h.fact.pinned,
        }
        for h in hits
        if h.fact.id in present
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
