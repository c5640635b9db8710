"""The model's reply: the schema it is asked for, and a parser that finds the facts in it."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ModelError
from ..safety import one_line


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


def parse_reply(text: str, model_id: str = "the model") -> list:
    """The list of fact objects in a reply: plain JSON, a fenced code block, JSON with
    prose around it, or with trailing commas. Raise ModelError when none can be found."""
    text = (text or "").strip()
    candidates = [text]
    candidates += re.findall(r"```(?:json|JSON)?\s*\n?(.*?)```", text, re.DOTALL)
    for candidate in candidates:
        for attempt in (candidate, _strip_trailing_commas(candidate)):
            facts = _facts_in(attempt)
            if facts is not None:
                return facts
    preview = one_line(text, 80) or "an empty reply"
    raise ModelError(
        f"Could not find a JSON list of facts in the reply from model {model_id!r} "
        f"(it began: {preview!r}); nothing was written. Try again or use a model that "
        "supports schemas"
    )


def _strip_trailing_commas(text: str) -> str:
    return re.sub(r",(\s*[}\]])", r"\1", text)


_JSON_START = re.compile(r"[\[{]")


def _facts_in(text: str) -> list | None:
    """The first top-level JSON value in ``text`` shaped like a list of facts, or None.
    Values nested inside other JSON values are not considered."""
    decoder = json.JSONDecoder()
    position = 0
    while True:
        match = _JSON_START.search(text, position)
        if match is None:
            return None
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            position = match.start() + 1
            continue
        facts = _as_fact_list(value)
        if facts is not None:
            return facts
        position = end


def _as_fact_list(value) -> list | None:
    if isinstance(value, dict) and isinstance(value.get("facts"), list):
        return value["facts"]
    if isinstance(value, dict) and {"key", "value"} <= value.keys():
        return [value]
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        return value
    return None
