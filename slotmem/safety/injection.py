"""The injection scan: hidden characters, then the patterns on the text as written, as
normalised and as decoded (base64, hex, URL encoding, escapes, ROT13, backwards), then the model for what they let through."""

from __future__ import annotations

import re

from .decoders import decoded
from .model import weigh
from .normalise import hidden_character, normalised, one_line
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
    for how, plain in decoded(text):
        reason = reason or _scan(plain, f" in {how}")
    return reason


def unsure_reason(*texts: str) -> str | None:
    """For texts the scan lets through: why it is unsure of one of them (the model weighs it
    in the band just below its threshold), or None. A caller with a language model at hand
    may ask it for a second opinion on such a text (``review``)."""
    for text in texts:
        weighed = weigh(text)
        if (
            weighed is not None
            and weighed.model.unsure <= weighed.probability < weighed.model.threshold
        ):
            return f"the scan is unsure ({weighed.probability:.0%}: {', '.join(weighed.why)})"
    return None


def model_reason(text: str) -> str | None:
    weighed = weigh(text)
    if weighed is None or weighed.probability < weighed.model.threshold:
        return None
    where = "" if weighed.part is None else f" in {one_line(weighed.part, 60)!r}"
    return (
        f"possible prompt injection (reads as an instruction to the agent{where},"
        f" {weighed.probability:.0%}: {', '.join(weighed.why)})"
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
