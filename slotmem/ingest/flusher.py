"""The flusher: an LLM reads a transcript plus the facts already stored and proposes facts;
each one is checked against the write policy and the survivors are upserted in one transaction.

    from slotmem import Store
    from slotmem.ingest import flush
    report = flush(Store("agent.db", create=True), open("chat.json").read(), model="gpt-4o-mini")

A client of the Store's public methods, like any other caller.
"""

from __future__ import annotations

import contextlib
import sys

from ..errors import InvalidInput
from ..safety import one_line
from ..validation import slot as check_slot
from .defaults import DEFAULT_CHUNK_CHARS, DEFAULT_SLOTS
from .model import ask, resolve
from .policy import DEFAULT_MIN_CONFIDENCE, VALUE_MAX_CHARS, Policy, restates
from .prompt import DEFAULT_FACTS_BUDGET, PROMPT_VERSION, build_prompt, describe
from .reply import parse_reply
from .report import FlushItem, FlushReport
from .transcripts import Transcript, parse

KNOWN_FACTS = 100  # facts per slot offered to the prompt (it keeps what fits its budget)


def flush(
    store,
    transcript: Transcript | str | bytes,
    model=None,
    slots=DEFAULT_SLOTS,
    source: str | None = None,
    dry_run: bool = False,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    facts_budget: int = DEFAULT_FACTS_BUDGET,
    value_max_chars: int = VALUE_MAX_CHARS,
    progress: bool = False,
) -> FlushReport:
    """Extract facts from ``transcript`` with ``model`` (an llm model id, alias or
    ``llm.Model``; default: llm's default model) and upsert them into ``store``.

    Every proposed fact is in the report. Nothing is written when ``dry_run`` is true,
    when the model fails, or when its reply cannot be parsed.
    """
    if not isinstance(transcript, Transcript):
        transcript = parse(transcript, source=source)
    slots = _check_slots(slots)
    if not 0.0 <= min_confidence <= 1.0:
        raise InvalidInput(f"min_confidence must be in [0, 1], not {min_confidence}")
    model = resolve(model)
    source = source or transcript.source or "transcript"
    report = FlushReport(one_line(source, 200), model.model_id, PROMPT_VERSION, dry_run)
    policy = Policy(slots, min_confidence, value_max_chars)
    known = {slot: _known_facts(store, slot) for slot in slots}
    descriptions = {slot: _description(store, slot) for slot in slots}
    chunks = transcript.chunks(chunk_chars)
    report.chunks = len(chunks)
    accepted: dict[tuple[str, str], FlushItem] = {}
    with _progress(chunks, progress) as bar:
        for index, chunk in enumerate(bar):
            part = f" (part {index + 1} of {len(chunks)})" if len(chunks) > 1 else ""
            system, prompt = build_prompt(descriptions, known, chunk, part, facts_budget)
            text = ask(model, system, prompt)
            for raw in parse_reply(text, model.model_id):
                item = policy.check(raw)
                report.items.append(item)
                if item.action != "rejected":
                    _accept(accepted, item)
                    _remember(known, item)
    _classify(store, list(accepted.values()))
    if not dry_run:
        _write(store, list(accepted.values()), report.provenance())
    return report


def _check_slots(slots) -> tuple[str, ...]:
    if isinstance(slots, str):
        slots = (slots,)
    slots = tuple(dict.fromkeys(check_slot(s) for s in slots))
    if not slots:
        raise InvalidInput("give at least one slot to flush into")
    return slots


def _progress(chunks, enabled: bool):
    if not enabled:
        return contextlib.nullcontext(chunks)
    import click

    return click.progressbar(chunks, label="Reading transcript", file=sys.stderr)


def _description(store, slot: str) -> str:
    policy = store.policy(slot)
    return describe(slot, policy.description if policy is not None else None)


def _known_facts(store, slot: str) -> dict[str, str]:
    "key -> value for the facts already in ``slot``, most used first."
    facts = store.list_facts(slot, limit=KNOWN_FACTS, order="used")
    return {fact.key: fact.value for fact in facts}


def _remember(known: dict, item: FlushItem) -> None:
    "Show later chunks what earlier ones proposed (first, so it survives the budget)."
    facts = known[item.slot]
    facts.pop(item.key, None)
    known[item.slot] = {item.key: item.value, **facts}


def _accept(accepted: dict, item: FlushItem) -> None:
    "Later proposals for the same key win over earlier ones."
    earlier = accepted.pop((item.slot, item.key), None)
    if earlier is not None:
        earlier.action = "rejected"
        earlier.reason = "superseded by a later proposal for the same key"
    accepted[(item.slot, item.key)] = item


def _classify(store, items: list[FlushItem]) -> None:
    "Mark each accepted item created, updated (with the old value) or unchanged."
    for item in items:
        existing = store.get(item.slot, item.key)
        if existing is None:
            item.action = "created"
        elif restates(existing.value, item.value):
            item.action, item.old_value = "unchanged", existing.value
        else:
            item.action, item.old_value = "updated", existing.value


def _write(store, items: list[FlushItem], source: str) -> None:
    "Upsert every created or updated item in one transaction; the Store's verdict is reported."
    items = [item for item in items if item.action in ("created", "updated")]
    if not items:
        return
    rows = [
        {
            "slot": i.slot,
            "key": i.key,
            "value": i.value,
            "confidence": i.confidence,
            "source": source,
        }
        for i in items
    ]
    for item, result in zip(items, store.upsert_many(rows)):
        item.action = result.action
        item.old_value = result.previous.value if result.previous is not None else None
