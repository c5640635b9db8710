"""Dates in and out of the flusher: when a conversation took place, said in the prompt, and what
a relative date in a proposed value is anchored to.

A fact stored as "moved last month" is wrong a month later. The model is told the day each part
of a conversation took place and asked for absolute dates; a value that still speaks of time
relative to that day ("last month", "yesterday", "in two weeks") gets the day it was said
appended, so that it stays true: "Moved to Berlin last month (said on 2026-10-15)."
"""

from __future__ import annotations

import datetime
import re

from ..errors import InvalidInput

UTC = datetime.timezone.utc
# Fields of a JSON message that may say when it was written (OpenAI exports: create_time).
TIME_FIELDS = ("timestamp", "created_at", "create_time", "time", "date", "datetime")

_UNITS = r"(?:days?|weeks?|months?|years?|hours?|minutes?)"
_NUMBER = (
    r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|few|several|couple\s+of)"
)
_WEEKDAYS = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
RELATIVE = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|recently|lately|currently|right\s+now|nowadays"
    r"|(?:last|next|this|coming|past)\s+(?:week|weekend|month|year|summer|winter|spring|autumn"
    rf"|fall|quarter|night|morning|evening|{_WEEKDAYS})"
    rf"|(?:on|by|until|since)\s+{_WEEKDAYS}(?!s)"
    rf"|{_NUMBER}\s+{_UNITS}\s+(?:ago|from\s+now|later|earlier)"
    rf"|(?:in|within|for\s+the\s+(?:next|past|last))\s+{_NUMBER}\s+{_UNITS})\b",
    re.IGNORECASE,
)


def timestamp(value) -> datetime.datetime | None:
    """A message's time from its field: ISO text (UTC unless it names its offset), or epoch
    seconds or milliseconds. None for anything else: a bad time never fails a transcript."""
    if isinstance(value, bool):
        return None
    try:
        if isinstance(value, (int, float)):
            seconds = value / 1000 if abs(value) > 1e11 else value
            return datetime.datetime.fromtimestamp(seconds, UTC)
        if isinstance(value, str) and value.strip():
            moment = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def message_time(item: dict) -> datetime.datetime | None:
    for name in TIME_FIELDS:
        if name in item:
            found = timestamp(item[name])
            if found is not None:
                return found
    return None


def reference(now) -> datetime.datetime:
    """The moment a flush's ``now`` names: a datetime (naive: local time), a date, epoch
    milliseconds, or ISO text (a day, or a time: local unless it names its offset)."""
    if isinstance(now, str):
        text = now.strip()
        try:
            now = (
                datetime.date.fromisoformat(text)
                if len(text) == 10
                else datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
            )
        except ValueError:
            pass
    if isinstance(now, datetime.datetime):
        return now if now.tzinfo else now.astimezone()
    if isinstance(now, datetime.date):
        return datetime.datetime(now.year, now.month, now.day, tzinfo=UTC)
    if isinstance(now, int) and not isinstance(now, bool):
        return from_ms(now)
    raise InvalidInput(f"now must be a date or a time (2026-10-15, 2026-10-15T14:30), not {now!r}")


def from_ms(ms: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ms / 1000, UTC)


def to_ms(moment: datetime.datetime) -> int:
    return round(moment.timestamp() * 1000)


def day(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def spoken(moment: datetime.datetime) -> str:
    """``Thursday, 15 October 2026 (2026-10-15)``: what the prompt says."""
    return f"{moment.strftime('%A')}, {moment.day} {moment.strftime('%B %Y')} ({day(moment)})"


def anchor(value: str, said: datetime.datetime) -> str:
    """``value`` with the day it was said appended when it still holds a relative date."""
    if RELATIVE.search(value) is None or day(said) in value:
        return value
    text = value.rstrip()
    body = text.rstrip(".!")
    return f"{body} (said on {day(said)}){text[len(body) :]}"
