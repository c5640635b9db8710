"""The injection scan: hidden characters, then the patterns on the text as written, as
normalised and as decoded from base64."""

from __future__ import annotations

import re

from .normalise import decoded_base64, hidden_character, normalised, one_line
from .rules import PATTERNS, SQUEEZED


def injection_reason(*texts: str) -> str | None:
    """Why these texts look like instructions aimed at the agent (or carry hidden
    characters), or None if they look like plain facts."""
    for text in texts:
        hidden = hidden_character(text)
        if hidden:
            return f"possible prompt injection: hidden character {hidden}"
        reason = _scan(text, "") or _scan_decoded(text)
        if reason:
            return reason
    return None


def _scan(text: str, how: str) -> str | None:
    variants = [(text, how)]
    for one in "il":
        plain = normalised(text, one)
        if all(plain != seen for seen, _ in variants):
            variants.append((plain, how or " after normalising"))
    for variant, note in variants:
        for pattern, why in PATTERNS:
            match = pattern.search(variant)
            if match:
                return f"possible prompt injection ({why}{note}): {one_line(match.group(), 60)!r}"
    squeezed = re.sub(r"[^a-z]", "", normalised(text).lower())
    match = SQUEEZED.search(squeezed)
    if match:
        return f"possible prompt injection (instruction override, spaced out): {match.group()!r}"
    return None


def _scan_decoded(text: str) -> str | None:
    for decoded in decoded_base64(text):
        reason = _scan(decoded, " in base64")
        if reason:
            return reason
    return None
