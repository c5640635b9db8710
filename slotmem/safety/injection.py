"""The injection scan: hidden characters, then the patterns on the text as written, as
normalised and as decoded from base64, then the model for what they let through."""

from __future__ import annotations

import re

from .model import model
from .normalise import decoded_base64, hidden_character, normalised, one_line
from .rules import PATTERNS, SQUEEZED


def injection_reason(*texts: str) -> str | None:
    """Why these texts look like instructions aimed at the agent (or carry hidden
    characters), or None if they look like plain facts."""
    for text in texts:
        reason = pattern_reason(text) or model_reason(text)
        if reason:
            return reason
    return None


def pattern_reason(text: str) -> str | None:
    """The scan without the model: hidden characters and the patterns."""
    hidden = hidden_character(text)
    if hidden:
        return f"possible prompt injection: hidden character {hidden}"
    reason = _scan(text, "")
    for decoded in decoded_base64(text):
        reason = reason or _scan(decoded, " in base64")
    return reason


def model_reason(text: str) -> str | None:
    verdict = model().verdict(text)
    if verdict is None:
        return None
    probability, why = verdict
    return (
        "possible prompt injection (reads as an instruction to the agent,"
        f" {probability:.0%}: {', '.join(why)})"
    )


def _scan(text: str, how: str) -> str | None:
    variants = [(text, how)]
    for one in "il":
        plain = normalised(text, one)
        if all(plain != seen for seen, _ in variants):
            variants.append((plain, how or " after normalising"))
    for variant, note in variants:
        lowered = variant.lower()
        for pattern, lower, why in PATTERNS:
            match = pattern.search(lowered if lower else variant)
            if match:
                return f"possible prompt injection ({why}{note}): {one_line(match.group(), 60)!r}"
    squeezed = re.sub(r"[^a-z]", "", normalised(text).lower())
    match = SQUEEZED.search(squeezed)
    if match:
        return f"possible prompt injection (instruction override, spaced out): {match.group()!r}"
    return None
