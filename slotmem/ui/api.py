"""The pages' answers as JSON, for scripts and other tools: ``/api/facts`` (the facts page's
filters, and ``limit``), ``/api/search`` and ``/api/context``. Times are ISO-8601 in UTC. They
change nothing and count no access."""

from __future__ import annotations

from ..agents.context import DEFAULT_BUDGET_TOKENS, DEFAULT_SLOTS, build
from ..errors import InvalidInput
from ..records import with_iso_times
from .pages import listing, number

MAX_LIMIT = 1000


def facts(store, params: dict) -> dict:
    limit = number(params, "limit", 50, 1, MAX_LIMIT)
    found = store.list_facts(limit=limit, **listing(params))
    return {"facts": [with_iso_times(fact.to_dict()) for fact in found], "slots": store.slots()}


def search(store, params: dict) -> dict:
    text = (params.get("q") or "").strip()
    if not text:
        raise InvalidInput("give the text to search for: /api/search?q=...")
    hits = store.query_facts(
        text,
        slots=params.get("slot") or None,
        limit=number(params, "limit", 10, 1, MAX_LIMIT),
        explain=True,
        track_access=False,
        semantic=params.get("lexical") != "1",
    )
    return {"query": text, "hits": [with_iso_times(hit.to_dict()) for hit in hits]}


def context(store, params: dict) -> dict:
    message = (params.get("message") or "").strip()
    if not message:
        raise InvalidInput("give the message: /api/context?message=...")
    slots = [s for s in (params.get("slots") or "").split(",") if s.strip()] or list(DEFAULT_SLOTS)
    budget = number(params, "budget", DEFAULT_BUDGET_TOKENS, 1, 1_000_000)
    built = build(store, message, slots, budget_tokens=budget, explain=True, track_access=False)
    data = built.to_dict()
    for part in [*(section["facts"] for section in data["sections"]), data["cut"]]:
        part[:] = [with_iso_times(item) for item in part]
    return data


ROUTES = {"/api/facts": facts, "/api/search": search, "/api/context": context}
