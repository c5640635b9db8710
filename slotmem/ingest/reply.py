"""The model's reply: the schema it is asked for, and a parser that finds every fact in it.

Models think aloud first (``<think>...</think>``, with drafts in it), wrap JSON in prose and
markdown fences, write single quotes, comments, trailing commas, bare quotes inside values and
Python literals (``True``, ``None``), nest the list under other keys or in a JSON string, send
several blocks, echo the schema back, or stop mid-reply at their output limit. ``parse_reply``
sets the reasoning aside, finds each JSON value in the rest with a small scanner (``scan.py``:
strings, comments and brackets, so that prose, fences and several blocks split cleanly), reads
each strictly, else with its bare quotes escaped, else through ``json_repair``, and collects the
facts from all of them. A value cut off at the end of the reply is read up to the
last complete fact; the fact it ended inside is returned apart (``Reply.cut``) and the reply is
marked ``truncated`` (the flusher then asks the model for the rest). A reply that mentions more
facts than could be read is a ModelError naming how many: no fact is lost without a line saying
so.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ModelError
from ..safety import one_line
from .scan import FACT_FIELDS, Segment, repair_strings, segments, value_fields


class ProposedFact(BaseModel):
    model_config = ConfigDict(extra="forbid")
    slot: str = Field(description="One of the slots listed in the instructions")
    key: str = Field(description="Short lower-case identifier, reused from known facts")
    value: str = Field(description="One self-contained sentence")
    confidence: float = Field(description="0.0 to 1.0")
    ttl: str | None = Field(
        default=None, description='How long a transient fact stays true ("6h", "3d"); none'
    )


class Extraction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    facts: list[ProposedFact]


# Keys a model puts its list of facts under; a list under any other key is read as that slot's
# facts when they name no slot ({"user": [...], "project": [...]}).
CONTAINERS = {
    "facts",
    "fact",
    "memories",
    "memory",
    "items",
    "results",
    "result",
    "data",
    "output",
    "response",
    "extracted_facts",
    "new_facts",
    "proposed_facts",
}
MAX_DEPTH = 5  # how deep facts are looked for inside other JSON
_TAGS = "think|thinking|thought|thoughts|reasoning|reflection|scratchpad"
_REASONING_BLOCK = re.compile(rf"(?im)^[ \t]*<({_TAGS})(?:\s[^>]*)?>.*?</\1\s*>", re.DOTALL)
_REASONING_CLOSE = re.compile(rf"(?im)^[ \t]*</(?:{_TAGS})\s*>[ \t]*$")
_REASONING_OPEN = re.compile(rf"(?im)^[ \t]*<(?:{_TAGS})(?:\s[^>]*)?>")
_ONE_FENCE = re.compile(r"```[\w-]*\s*(.*?)\s*```", re.DOTALL)
_CURLY = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"'})


@dataclass
class Reply:
    """What a reply held: ``facts`` (raw objects, in order, each checked by the write policy),
    ``cut``, the fact the reply ended inside (its fields as far as they got), ``truncated``
    when the list of facts was cut off, and ``schemas``, JSON schemas echoed back."""

    facts: list = field(default_factory=list)
    cut: dict | None = None
    truncated: bool = False
    schemas: int = 0


def parse_reply(text: str, model_id: str = "the model", *, empty_ok: bool = False) -> Reply:
    """The facts in a reply (see the module's docstring). Raise ModelError when none can be
    found (unless ``empty_ok`` and the reply has no JSON at all: an empty continuation), or
    when the reply mentions facts that could not be read."""
    text = (text or "").strip()
    answer, in_reasoning = without_reasoning(text)
    answer = _unwrapped(answer)
    reply, found, markers = _collect(answer)
    if not found and not reply.schemas and (respelled := _respelled(answer)) != answer:
        reply, found, markers = _collect(respelled)  # HTML-escaped, or in typographic quotes
    if not found and not reply.schemas and (_open_fence(answer) or in_reasoning):
        found = reply.truncated = True  # cut off inside a fence or its reasoning, before JSON
    read = sum(_counted(raw) for raw in reply.facts) + _counted(reply.cut)
    if markers > read:
        missing = markers - read
        raise ModelError(
            f"Could not read {missing} of the {markers} facts in the reply from model "
            f"{model_id!r} (it began: {_preview(answer)!r}); nothing was written. Try again or "
            "use a model that supports schemas"
        )
    if not found and not (empty_ok and not reply.schemas):
        raise ModelError(_not_found(text, answer, model_id, reply.schemas))
    return reply


def _collect(text: str) -> tuple[Reply, bool, int]:
    "The facts of every JSON value in ``text``, whether any held facts, how many it mentions."
    reply, found, markers = Reply(), False, 0
    seen: set[str] = set()
    for segment in segments(text):
        piece = text[segment.start : segment.end]
        facts, cut, truncated, schema = _read_segment(piece, segment)
        if schema:
            reply.schemas += 1
            continue
        markers += value_fields(piece)
        if facts is None and cut is None:
            continue
        found = True
        for raw in facts or []:
            fingerprint = json.dumps(raw, sort_keys=True, default=str)
            if fingerprint not in seen:  # the same fact twice (a draft, then the answer)
                seen.add(fingerprint)
                reply.facts.append(raw)
            else:
                markers -= _counted(raw)
        if cut is not None:
            reply.cut = cut
        reply.truncated = reply.truncated or truncated
    return reply, found, markers


def without_reasoning(text: str) -> tuple[str, bool]:
    """The reply without the reasoning a model wrote before its answer (``<think>...</think>``
    and the like: drafts, the instructions' example, JSON it talked about), and whether the
    reply ended inside such a block. Tags count at the start of a line (a value may mention
    them); a closing tag alone on its line with no opening one (the opening tag was in the
    model's prompt, as DeepSeek-R1's template does) ends the reasoning that began the reply."""
    text = _REASONING_BLOCK.sub("\n", text)
    closes = list(_REASONING_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    opened = _REASONING_OPEN.search(text)
    if opened is not None:
        return text[: opened.start()].strip(), True
    return text.strip(), False


def _unwrapped(text: str) -> str:
    "A reply that is a JSON string (or a fence holding one) holding JSON: the JSON inside."
    for _ in range(MAX_DEPTH):
        fenced = _ONE_FENCE.fullmatch(text)
        inner = fenced.group(1) if fenced else text
        if not inner.startswith(('"', "'")):
            break
        value = _load(inner)
        if not isinstance(value, str) or not value.strip().startswith(("{", "[")):
            break
        text = value.strip()
    return text


def _respelled(text: str) -> str:
    "The reply with HTML entities decoded, and typographic double quotes made plain."
    if re.search(r"&(?:quot|#34|#x22);", text):
        text = html.unescape(text)
    return text.translate(_CURLY)


def _open_fence(text: str) -> bool:
    "Does the reply end inside a markdown fence (or inside its opening backticks)?"
    return text.count("```") % 2 == 1 or text.endswith("`") and not text.endswith("```")


def _not_found(text: str, answer: str, model_id: str, schemas: int) -> str:
    what = "only the JSON schema it was given, echoed back" if schemas else None
    if what is None and text and not answer:
        what = "only its reasoning, no answer after it"
    return (
        f"Could not find a JSON list of facts in the reply from model {model_id!r} "
        f"({what or 'it began: ' + repr(_preview(text))}); nothing was written. Try again or "
        "use a model that supports schemas"
    )


def _preview(text: str) -> str:
    return one_line(text, 80) or "an empty reply"


def _counted(raw) -> int:
    "1 for a fact the scanner counts (``scan.value_fields``): a value and a fact's field."
    if not isinstance(raw, dict):
        return 0
    names = {str(name).strip().lower() for name in raw}
    return int("value" in names and bool(names & FACT_FIELDS))


# -- reading one value ---------------------------------------------------------------------------


def _read_segment(piece: str, segment: Segment):
    """(facts or None, the cut fact or None, truncated, is a schema) of one JSON value."""
    value = _load(piece)
    if _is_schema(value):
        return None, None, not segment.closed, True
    if segment.closed:
        return find_facts(value), None, False, False
    cut_at = _cut_fact_start(segment)
    if cut_at is not None:  # cut inside a fact of a list: the facts before it, and it
        head, tail = piece[: cut_at - segment.start], piece[cut_at - segment.start :]
        cut = _load(tail)
        facts = find_facts(_load(head)) if head.strip() else None
        return facts or [], cut if isinstance(cut, dict) else {}, True, False
    facts = find_facts(value)
    if any(bracket == "[" for bracket, _ in segment.stack):
        return facts or [], None, True, False  # cut between two facts
    if isinstance(value, dict) and facts is not None and not _is_fact(value):
        return facts, None, False, False  # the list closed; only what followed it was cut
    if isinstance(value, dict) and set(value) & set(ProposedFact.model_fields):
        return [], value, True, False  # a reply of one fact, cut off
    return [], None, True, False  # cut before anything could be read


def _cut_fact_start(segment: Segment) -> int | None:
    "Where the fact the reply ended inside began: the first object still open in a list."
    brackets = [bracket for bracket, _ in segment.stack]
    if "[" not in brackets:
        return None
    for bracket, position in segment.stack[brackets.index("[") + 1 :]:
        if bracket == "{":
            return position
    return None


def _load(text: str):
    """``text`` read as JSON: strictly; else with its strings repaired (``scan.repair_strings``:
    bare quotes, markdown's ``\\_``, a path's backslashes) and raw newlines allowed in them; else
    by json-repair."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    text = repair_strings(text)
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    import json_repair

    try:
        return json_repair.loads(text)
    except Exception:  # noqa: BLE001 - whatever the repairer cannot read is not JSON
        return None


def _is_schema(value) -> bool:
    if not isinstance(value, dict):
        return False
    if "$schema" in value or "$defs" in value:
        return True
    return value.get("type") in ("object", "array") and ("properties" in value or "items" in value)


# -- facts inside a value --------------------------------------------------------------------------


def find_facts(value, slot: str | None = None, depth: int = 0) -> list | None:
    """The fact objects in a JSON value, or None when it holds no list of facts: the value
    itself (a fact, or a list with one), a list under ``facts`` or another key (under a key
    that is not a container name, such as ``"user"``, a fact without a slot gets that one), a
    list encoded as a JSON string. Items of a list of facts that are not facts are kept (the
    write policy rejects them as malformed, with the reason)."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(value, str) and depth and value.strip()[:1] in ("[", "{"):
        return find_facts(_load(value), slot, depth + 1)
    if isinstance(value, list):
        if not value:
            return [] if depth == 0 else None
        if any(_is_fact(_lower(item)) for item in value):
            return [_with_slot(_lower(item), slot) for item in value]
        nested = [find_facts(item, slot, depth + 1) for item in value]
        if any(found is not None for found in nested):
            return [fact for found in nested if found for fact in found]
        return None
    if not isinstance(value, dict) or _is_schema(value):
        return None
    value = {str(name).strip().lower(): inner for name, inner in value.items()}  # "Key", "VALUE"
    if _is_fact(value):
        return [_with_slot(value, slot)]
    facts, found = [], False
    for name, inner in value.items():
        container = name in CONTAINERS
        if container and isinstance(inner, list) and not any(_is_fact(i) for i in inner):
            if inner and all(isinstance(i, (dict, list)) for i in inner):
                deeper = find_facts(inner, slot, depth + 1)
                if deeper is not None:
                    facts += deeper
                    found = True
                    continue
            facts += inner  # [] (nothing to remember), or items the policy will reject
            found = True
            continue
        result = find_facts(inner, slot if container else str(name), depth + 1)
        if result is not None:
            facts += result
            found = True
    return facts if found else None


def _lower(item):
    if not isinstance(item, dict):
        return item
    return {str(name).strip().lower(): inner for name, inner in item.items()}


# What models write instead of the fields asked for: the policy reads them where the field itself
# is missing (a "slot" synonym only when it names a slot).
SYNONYMS = {
    "value": ("fact", "text", "content", "statement", "memory", "description", "detail"),
    "key": ("name", "topic", "subject", "attribute", "label", "id"),
    "slot": ("category", "namespace", "scope", "type"),
}


def _is_fact(item) -> bool:
    if not isinstance(item, dict) or _is_schema(item):
        return False
    fields = set(item)
    if "value" in fields or {"key", "slot"} <= fields:
        return bool(fields & {"key", "slot"})  # {"name": "retries", "value": 3} is not one
    return bool(fields & set(SYNONYMS["value"])) and bool(fields & {"key", *SYNONYMS["key"]})


def _with_slot(item, slot: str | None):
    if slot is None or not isinstance(item, dict) or "slot" in item:
        return item
    return {"slot": slot, **item}
