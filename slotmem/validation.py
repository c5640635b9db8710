"""Checks on what callers hand the Store. A failed check raises InvalidInput and writes nothing."""

from __future__ import annotations

import math
import re

from .errors import InvalidInput

SLOT_RE = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 4000
MAX_SOURCE_CHARS = 500
# Control characters other than tab and newline, which SQLite and FTS5 handle badly or not at all.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def slot(name) -> str:
    if not isinstance(name, str) or not SLOT_RE.fullmatch(name):
        raise InvalidInput(
            f"invalid slot {name!r}: use lower case letters, digits, '_', '.', '-', "
            "starting with a letter (at most 64 characters), e.g. 'user'"
        )
    return name


def text(value, what: str, limit: int, *, single_line: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    value = value.strip()
    if not value:
        raise InvalidInput(f"{what} must not be empty")
    if len(value) > limit:
        raise InvalidInput(f"{what} is {len(value)} characters long; the limit is {limit}")
    bad = _CONTROL_RE.search(value) or (single_line and re.search(r"[\n\t]", value))
    if bad:
        raise InvalidInput(f"{what} contains a control character ({bad.group()!r})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidInput(f"{what} is not valid Unicode text: {e.reason}") from None
    return value


def key(value) -> str:
    return text(value, "key", MAX_KEY_CHARS, single_line=True)


def value(content) -> str:
    return text(content, "value", MAX_VALUE_CHARS)


def source(value) -> str | None:
    return None if value is None else text(value, "source", MAX_SOURCE_CHARS, single_line=True)


def fact(slot_name, key_text, content, confidence_value, source_text) -> tuple:
    """(slot, key, value, confidence, source), each checked."""
    return (
        slot(slot_name),
        key(key_text),
        value(content),
        confidence(confidence_value),
        source(source_text),
    )


def confidence(number) -> float:
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise InvalidInput(f"confidence must be a number in [0, 1], not {number!r}")
    number = float(number)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise InvalidInput(f"confidence must be in [0, 1], not {number}")
    return number


def relevance(number, what: str = "min_relevance") -> float | None:
    """None (no floor), or a probability in [0, 1]."""
    if number is None:
        return None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not 0 <= number <= 1:
        raise InvalidInput(f"{what} must be a number from 0 to 1, not {number!r}")
    return float(number)


def positive_int(number, what: str) -> int:
    """An integer of at least 1 (a search's limit)."""
    return _integer(number, what, 1, "a positive integer")


def count(number, what: str) -> int:
    """An integer of at least 0 (a cap, an access count, a listing's limit)."""
    return _integer(number, what, 0, "an integer >= 0")


def _integer(number, what: str, least: int, kind: str) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number < least:
        raise InvalidInput(f"{what} must be {kind}, not {number!r}")
    return number


def non_negative(number, what: str) -> float:
    """A number of at least 0 (an age in days)."""
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not number >= 0:
        raise InvalidInput(f"{what} must be a number >= 0, not {number!r}")
    return float(number)


def slots(names) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    return [slot(name) for name in names]
