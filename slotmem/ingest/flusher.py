"""The flusher: an LLM reads a transcript plus the facts already stored and proposes facts;
each one is checked against the write policy and the survivors are upserted in one transaction.

    from slotmem import Store
    from slotmem.ingest import flush
    report = flush(Store("agent.db", create=True), Path("chat.json"), model="gpt-4o-mini")

A client of the Store's public methods, like any other caller.
"""

from __future__ import annotations

import contextlib
import re
import sys

from ..errors import InvalidInput
from ..safety import one_line
from ..validation import slot as check_slot
from . import cursor
from .dates import day, from_ms, reference
from .defaults import DEFAULT_CHUNK_CHARS, DEFAULT_SLOTS
from .messages import to_transcript
from .model import ask, check_options, resolve
from .policy import DEFAULT_MIN_CONFIDENCE, VALUE_MAX_CHARS, Policy, rejected, restates
from .prompt import DEFAULT_FACTS_BUDGET, PROMPT_VERSION, build_prompt, continuation, describe
from .reply import parse_reply
from .report import FlushItem, FlushReport
from .transcripts import Transcript

CUT_OFF = "the reply was cut off inside this fact (the model's output limit)"
MAX_CONTINUATIONS = 2  # requests for the rest of a reply cut off at the model's output limit
KNOWN_FACTS = 100  # most used facts per slot offered after the relevant ones
PER_SENTENCE = 10  # hits asked of a slot for each sentence of a chunk (benchmarks/key_reuse.py)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_LABEL = re.compile(r"^(?:\[\d{4}-\d\d-\d\d\]\s*)?(?:[\w.-]{1,20}:\s)?")  # "[day] user: "


def flush(
    store,
    transcript,
    model=None,
    slots=DEFAULT_SLOTS,
    source: str | None = None,
    dry_run: bool = False,
    min_confidence: float = DEFAULT_MIN_CONFIDENCE,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    facts_budget: int = DEFAULT_FACTS_BUDGET,
    value_max_chars: int = VALUE_MAX_CHARS,
    progress: bool = False,
    now=None,
    options: dict | None = None,
    from_start: bool = False,
    allow_protected: bool = False,
    second_opinion: bool = False,
) -> FlushReport:
    """Extract facts from ``transcript`` with ``model`` (an llm model id, alias or
    ``llm.Model``; default: llm's default model) and upsert them into ``store``.

    ``transcript``: text or bytes (plain text, JSON or JSON Lines messages), a Transcript
    (``read_path``, ``from_llm_logs``), a path, an open file, or a list of messages: dicts
    ``{role, content}``, llm responses, LangChain messages (``slotmem.ingest.messages``).

    ``source`` (default: the transcript's, such as its file name) names the conversation: a
    flush under a name flushed before sends the model only the messages after the ones it
    read then, with the last few of those as context (``slotmem.ingest.cursor``), and moves the
    cursor on in the transaction that writes the facts. ``from_start`` reads it all again.
    Without a source (text or messages given directly) the whole transcript is read.

    ``options``: model options, as ``llm -o`` takes them (``{"temperature": 0.1}``).

    A fact a person protected is not changed (reported rejected) unless ``allow_protected``.

    ``now`` (a datetime, a date, epoch milliseconds or ISO text) is when the conversation took
    place; by default each chunk's own timestamps where the transcript has them, else the
    store's clock. The model is told that day and asked for absolute dates.

    ``second_opinion``: the model is also asked about each fact the write scan is unsure of
    (``slotmem.safety.review``), and a fact it calls an instruction to the agent is rejected.

    Every proposed fact is in the report. Nothing is written (and the cursor stays) when
    ``dry_run`` is true, when the model fails, or when its reply cannot be parsed.
    """
    transcript = to_transcript(transcript, source)
    slots = _check_slots(slots)
    if not 0.0 <= min_confidence <= 1.0:
        raise InvalidInput(f"min_confidence must be in [0, 1], not {min_confidence}")
    model = resolve(model)
    options = check_options(model, options)
    named = source or transcript.source
    source = named or "transcript"
    report = FlushReport(one_line(source, 200), model.model_id, PROMPT_VERSION, dry_run)
    turns = transcript.turns
    plan = cursor.plan(store, named, turns, from_start)
    report.messages, report.skipped = len(turns) - plan.start, plan.start
    report.context = len(plan.context)
    if plan.note:
        report.notes.append(plan.note)
    if plan.start >= len(turns):
        report.notes.append(f"nothing new in {source!r} since its last flush")
        return report
    new = Transcript(turns[plan.start :], transcript.format, transcript.source, at=transcript.at)
    if plan.context and new.at is None:
        new.at = max((t.at for t in plan.context if t.at is not None), default=None)
    earlier = cursor.render_context(plan.context)
    policy = Policy(
        slots, min_confidence, value_max_chars, _reviewer(model) if second_opinion else None
    )
    fixed = None if now is None else reference(now)
    today = from_ms(store.clock())
    descriptions = {slot: _description(store, slot) for slot in slots}
    chunks = new.dated_chunks(chunk_chars)
    report.chunks = len(chunks)
    accepted: dict[tuple[str, str], FlushItem] = {}
    with _progress(chunks, progress) as bar:
        for index, (chunk, said) in enumerate(bar):
            when = fixed or said or today
            part = f" (part {index + 1} of {len(chunks)})" if len(chunks) > 1 else ""
            known = {slot: known_facts(store, slot, chunk, accepted) for slot in slots}
            system, prompt = build_prompt(
                descriptions, known, chunk, part, facts_budget, when, earlier if index == 0 else ""
            )
            report.sent_chars += len(chunk) + (len(earlier) if index == 0 else 0)
            facts, cuts = _ask_for_facts(model, system, prompt, options, report, part)
            for raw in facts:
                item = policy.check(raw, when)
                report.items.append(item)
                if item.action != "rejected":
                    _accept(accepted, item)
            report.items += [rejected(cut, CUT_OFF) for cut in cuts]
    _classify(store, list(accepted.values()), store.clock(), allow_protected)
    if not dry_run:
        with store.transaction():
            _write(store, list(accepted.values()), report.provenance(), allow_protected)
            if named is not None:
                store.advance_flush_cursor(named, len(turns), cursor.prefix_hash(transcript))
    return report


def _ask_for_facts(model, system: str, prompt: str, options: dict, report, part: str):
    """The facts the model proposes for one chunk, and the facts its replies ended inside. A
    reply cut off in its list of facts (the model's output limit) is followed by a request for
    the rest, MAX_CONTINUATIONS times at most; still cut off, the report says so."""
    reply = parse_reply(ask(model, system, prompt, options), model.model_id)
    facts, cuts = list(reply.facts), [reply.cut] if reply.cut is not None else []
    asked = 0
    while reply.truncated and asked < MAX_CONTINUATIONS:
        asked += 1
        more = ask(model, system, continuation(prompt, facts), options)
        reply = parse_reply(more, model.model_id, empty_ok=True)
        facts += [fact for fact in reply.facts if fact not in facts]
        cuts += [reply.cut] if reply.cut is not None else []
    report.continuations += asked
    if reply.truncated:
        report.notes.append(
            f"the model's reply{part} was cut off at its output limit, and again after "
            f"asking {asked} times for the rest: facts after the {len(facts)} read may be "
            "missing (a smaller --chunk-size or a higher max_tokens option may help)"
        )
    return facts, cuts


def _reviewer(model):
    from ..safety.review import second_opinion

    def ask_model(system: str, prompt: str) -> str:
        return model.prompt(prompt, system=system).text()

    return lambda key, value: second_opinion(ask_model, key, value)


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


def known_facts(store, slot: str, chunk: str, proposed: dict | None = None) -> dict[str, str]:
    """key -> value of the facts of ``slot`` the model sees beside ``chunk``, the most useful
    first (the prompt keeps what fits its budget): what earlier chunks proposed, the pinned
    facts, the facts most relevant to the chunk (each sentence searched in the slot, a fact
    ranked by its best relevance), then the most used. A fact restated with a new value is
    then shown under its key, however rarely it was read, and its key is reused."""
    facts: dict[str, str] = {}
    for item in reversed(list((proposed or {}).values())):  # the latest first
        if item.slot == slot:
            facts.setdefault(item.key, item.value)
    for fact in store.list_facts(slot, limit=None, order="pinned", pinned=True):
        facts.setdefault(fact.key, fact.value)
    best: dict[str, tuple[float, str]] = {}  # key -> (its best relevance, value)
    for sentence in sentences(chunk):
        for hit in store.query_facts(
            sentence, slots=[slot], limit=PER_SENTENCE, track_access=False
        ):
            if hit.relevance > best.get(hit.fact.key, (-1.0, ""))[0]:
                best[hit.fact.key] = (hit.relevance, hit.fact.value)
    for key, (_, value) in sorted(best.items(), key=lambda item: (-item[1][0], item[0])):
        facts.setdefault(key, value)
    for fact in store.list_facts(slot, limit=KNOWN_FACTS, order="used"):
        facts.setdefault(fact.key, fact.value)
    return facts


def sentences(chunk: str) -> list[str]:
    """The chunk's sentences, without the role and day labels of its turns (a search for
    "user" would find every fact about the user), each once."""
    found = (_LABEL.sub("", part).strip() for part in _SENTENCE.split(chunk))
    return list(dict.fromkeys(part for part in found if part))


def _accept(accepted: dict, item: FlushItem) -> None:
    "Later proposals for the same key win over earlier ones."
    earlier = accepted.pop((item.slot, item.key), None)
    if earlier is not None:
        earlier.action = "rejected"
        earlier.reason = "superseded by a later proposal for the same key"
    accepted[(item.slot, item.key)] = item


def _classify(store, items: list[FlushItem], now: int, allow_protected: bool) -> None:
    """Mark each accepted item created, updated (with the old value) or unchanged; one whose
    ttl ran out before this flush is rejected (it was true only while it lasted), and so is a
    change to a fact a person protected unless ``allow_protected``."""
    for item in items:
        if item.expires_at is not None and item.expires_at <= now:
            item.action = "rejected"
            item.reason = f"its ttl ({item.ttl}) ran out on {day(from_ms(item.expires_at))}"
            continue
        existing = store.get(item.slot, item.key)
        if existing is None:
            item.action = "created"
        elif restates(existing.value, item.value):
            item.action, item.old_value = "unchanged", existing.value
        elif existing.protected and not allow_protected:  # a model's reading of a chat
            item.action, item.old_value = "rejected", existing.value
            item.reason = protected_reason(item.slot, existing.key)
        else:
            item.action, item.old_value = "updated", existing.value


def protected_reason(slot: str, key: str) -> str:
    return f"{slot}/{key} is protected (a person wrote it)"


PROTECTED = "protected"  # upsert_many's action for a protected fact it left as it was


def _write(store, items: list[FlushItem], source: str, allow_protected: bool) -> None:
    """Upsert every created or updated item in one transaction; the Store's verdict is
    reported. A fact a person protected since ``_classify`` read it is left as it is (checked
    inside the write transaction), reported rejected, unless ``allow_protected``."""
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
            "expires_at": i.expires_at,
        }
        for i in items
    ]
    results = store.upsert_many(rows, skip_protected=not allow_protected)
    for item, result in zip(items, results):
        item.action = result.action
        item.old_value = result.previous.value if result.previous is not None else None
        if result.action == PROTECTED:
            item.action, item.reason = "rejected", protected_reason(item.slot, result.fact.key)
