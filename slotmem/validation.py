"""Checks on what callers hand the Store. A failed check raises InvalidInput and writes nothing."""

from __future__ import annotations

import datetime
import math
import re
import unicodedata

from .errors import InvalidInput
from .records import SlotPolicy

SLOT_RE = re.compile(r"[a-z][a-z0-9_.-]{0,63}")
MAX_KEY_CHARS = 200
MAX_VALUE_CHARS = 4000
MAX_SOURCE_CHARS = 500
# Control characters other than tab and newline, which SQLite and FTS5 handle badly or not at all.
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
SINGLE_LINE_RE = re.compile(r"[\x00-\x1f\x7f]")  # and no tab or newline either


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
    bad = (SINGLE_LINE_RE if single_line else CONTROL_RE).search(value)  # one scan each
    if bad:
        bad = CONTROL_RE.search(value) or bad  # a control character is named before a line break
        raise InvalidInput(f"{what} contains a control character ({bad.group()!r})")
    if not value.isascii():  # ASCII is always valid UTF-8 (a flag CPython keeps: no scan)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidInput(f"{what} is not valid Unicode text: {e.reason}") from None
    return value


def key(value) -> str:
    return text(value, "key", MAX_KEY_CHARS, single_line=True)


TAG_RE = re.compile(r"[a-z0-9][a-z0-9_.:-]*")
MAX_TAG_CHARS = 64
MAX_TAGS = 32  # per fact


def tag(value) -> str:
    """One tag: lower case letters, digits and ``_ . : -``, starting with a letter or digit."""
    if not isinstance(value, str) or not TAG_RE.fullmatch(value) or len(value) > MAX_TAG_CHARS:
        raise InvalidInput(
            f"invalid tag {value!r}: use lower case letters, digits, '_', '.', ':', '-', "
            f"starting with a letter or digit (at most {MAX_TAG_CHARS} characters), e.g. 'work'"
        )
    return value


def tags(values, what: str = "tags") -> tuple[str, ...]:
    """Tags, each checked (``tag``), repeats dropped, in their order; a lone string is refused
    (``["work"]``, not ``"work"``: a string is not read as its letters)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InvalidInput(f"{what} must be a list of tags, not {type(values).__name__}")
    checked = tuple(dict.fromkeys(tag(value) for value in values))
    if len(checked) > MAX_TAGS:
        raise InvalidInput(f"{what}: {len(checked)} tags; a fact has at most {MAX_TAGS}")
    return checked


def rel(value) -> str:
    """A link's type (``lives_in``, ``works:at``): the syntax of a tag (``tag``)."""
    if not isinstance(value, str) or not TAG_RE.fullmatch(value) or len(value) > MAX_TAG_CHARS:
        raise InvalidInput(
            f"invalid link type {value!r}: use lower case letters, digits, '_', '.', ':', '-', "
            f"starting with a letter or digit (at most {MAX_TAG_CHARS} characters), e.g. 'lives_in'"
        )
    return value


# Letters of other scripts (and Latin small capitals and phonetic letters) that look like Latin
# ones, after case folding: Cyrillic, Greek, Armenian, then Latin (as slotmem.safety folds some).
_LOOKALIKE_PAIRS = (
    ("аеорсхуіјѕԁһӏкмнтвԝԛѵүѡғ", "aeopcxyijsdhlkmhtbwqvywf"),
    ("αορικντυχεωηγϳ", "aopikvtuxewnyj"),
    ("օսոհցզա", "ounhgqw"),
    ("ɡıɪʟɑȷɩɢʜɴʀʏʙꜱᴀᴄᴅᴇᴊᴋᴍᴏᴘᴛᴜᴠᴡᴢ", "giilajighnrybsacdejkmoptuvwz"),
)
_KEY_LOOKALIKES = str.maketrans(
    "".join(chars for chars, _ in _LOOKALIKE_PAIRS), "".join(to for _, to in _LOOKALIKE_PAIRS)
)
_KEY_LOOKALIKE_CHARS = frozenset("".join(chars for chars, _ in _LOOKALIKE_PAIRS))
_KEY_INVISIBLE = frozenset("\u034f\u115f\u1160\u3164\uffa0")  # joiner, Hangul fillers
_KEY_ENDS = " .,;:!?'\"`*~-_"  # stripped from both ends of a key's form


def key_form(value: str) -> str:
    """What makes two keys one: ``Owner``, ``owner\u200b``, ``ｏｗｎｅｒ``, ``оwner`` (a
    Cyrillic о), ``ᴏᴡɴᴇʀ``, ``ownér``, ``owner.`` and ``OWNER_`` are all ``owner``. Unicode NFKC
    (width and compatibility forms), invisible characters removed (format characters such as
    zero-width spaces and joiners, variation selectors, fillers), case folded, the marks over
    Latin letters and letters that look Latin dropped (accents, a combining dot or overlay:
    ``İ`` is ``i``; ``й`` keeps its mark), spaces, ``_`` and dashes one space, punctuation at either end dropped, and
    letters of other scripts that look Latin folded to Latin where the key has Latin letters or
    is made of look-alikes only (a Russian or Greek key keeps its letters)."""
    if value.isascii():  # most keys: nothing of the rest applies
        form = " ".join(value.lower().split())
        return " ".join(form.replace("_", " ").replace("-", " ").split()).strip(_KEY_ENDS) or form
    form = unicodedata.normalize("NFKC", value)
    form = "".join(ch for ch in form if not _invisible(ch)).casefold()
    form = " ".join(unicodedata.normalize("NFKC", _unmarked(form)).split())
    spaced = "".join(" " if ch == "_" or unicodedata.category(ch) == "Pd" else ch for ch in form)
    form = " ".join(spaced.split()).strip(_KEY_ENDS) or form  # a key of punctuation only: kept
    letters = [ch for ch in form if ch.isalpha()]
    if any(ch.isascii() for ch in letters) or all(ch in _KEY_LOOKALIKE_CHARS for ch in letters):
        form = form.translate(_KEY_LOOKALIKES)
    return form


def _unmarked(text: str) -> str:
    """``text`` without the combining marks that follow a Latin letter, a letter that looks
    Latin, or no letter (a mark carries meaning elsewhere: a Hindi key keeps its)."""
    kept: list[str] = []
    drop = True
    for ch in unicodedata.normalize("NFD", text):
        category = unicodedata.category(ch)
        if unicodedata.combining(ch) or category in ("Mn", "Me"):
            if not drop:
                kept.append(ch)
            continue
        if category != "Mc":  # a spacing vowel sign belongs to the letter before it
            drop = not ch.isalpha() or _marks_dropped(ch)
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def _marks_dropped(letter: str) -> bool:
    """A Latin letter's marks go (``é`` is ``e``); so do those of a letter of another script
    that looks Latin (``ӧ``), never those of one that does not: ``й`` is not ``и`` (Russian
    ``мой`` and ``мои`` are two words)."""
    if unicodedata.name(letter, "").startswith("LATIN"):
        return True
    return letter.casefold() in _KEY_LOOKALIKE_CHARS


def _invisible(char: str) -> bool:
    return (
        unicodedata.category(char) == "Cf"
        or "\ufe00" <= char <= "\ufe0f"
        or "\U000e0100" <= char <= "\U000e01ef"
        or char in _KEY_INVISIBLE
    )


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


def rating(number, what: str = "rating") -> int:
    """An integer from -3 to 3: a person's rating of a fact, or the quality rounded from them."""
    if isinstance(number, bool) or not isinstance(number, int) or not -3 <= number <= 3:
        raise InvalidInput(f"{what} must be an integer from -3 to 3, not {number!r}")
    return number


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


MAX_DAYS = 36_500  # 100 years: an age in days beyond it means never, and overflows a time


def non_negative(number, what: str) -> float:
    """A number of days from 0 to MAX_DAYS (an age in days)."""
    if (
        isinstance(number, bool)
        or not isinstance(number, (int, float))
        or not 0 <= number <= MAX_DAYS
    ):
        raise InvalidInput(f"{what} must be a number of days from 0 to {MAX_DAYS}, not {number!r}")
    return float(number)


def policy(
    slot_name: str,
    cap,
    min_age_days=30,
    min_access_count=3,
    description=None,
    min_relevance=None,
) -> SlotPolicy:
    """A retention policy and relevance floor, each part checked but ``slot_name`` (checked by
    the caller with ``slot``, or ``"*"``: the default policy's)."""
    return SlotPolicy(
        slot_name,
        count(cap, "cap"),
        non_negative(min_age_days, "min_age_days"),
        count(min_access_count, "min_access_count"),
        None if description is None else value(description),
        relevance(min_relevance),
    )


def slots(names) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        names = [names]
    return [slot(name) for name in names]


def selector(name) -> str:
    """A slot, ``PREFIX.*`` (the slot PREFIX and every slot under it: ``user.*`` is ``user``,
    ``user.maja``, ``user.maja.work``) or ``*`` (every slot)."""
    if name == "*":
        return name
    try:
        if isinstance(name, str) and name.endswith(".*"):
            slot(name[:-2])
            return name
        return slot(name)
    except InvalidInput as e:
        raise InvalidInput(f"{e}; or PREFIX.* for every slot under PREFIX, or *") from None


def selectors(names) -> list[str] | None:
    """Slots and ``PREFIX.*`` patterns (a string may list them with commas)."""
    if names is None:
        return None
    if isinstance(names, str):
        names = [name.strip() for name in names.split(",")]
    return list(dict.fromkeys(selector(name) for name in names))


def selects(selector_list, name: str) -> bool:
    """Does one of the selectors take the slot ``name``?"""
    for chosen in selector_list:
        if chosen == "*" or chosen == name:
            return True
        if chosen.endswith(".*") and (name == chosen[:-2] or name.startswith(chosen[:-1])):
            return True
    return False


# -- times -------------------------------------------------------------------------------------
SECOND_MS = 1000
UNIT_MS = {
    "s": SECOND_MS,
    "m": 60 * SECOND_MS,
    "h": 3600 * SECOND_MS,
    "d": 86_400 * SECOND_MS,
    "w": 7 * 86_400 * SECOND_MS,
    "mo": 30 * 86_400 * SECOND_MS,
    "y": 365 * 86_400 * SECOND_MS,
}
_UNIT_WORDS = {
    "s": "s sec secs second seconds",
    "m": "m min mins minute minutes",
    "h": "h hr hrs hour hours",
    "d": "d day days",
    "w": "w wk wks week weeks",
    "mo": "mo month months",
    "y": "y yr yrs year years",
}
_UNITS = {word: unit for unit, words in _UNIT_WORDS.items() for word in words.split()}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
_DURATION_GLUE = re.compile(r"[\s,]+|\band\b")
MAX_TTL_MS = 100 * UNIT_MS["y"]


def duration(value, what: str = "ttl") -> int:
    """Milliseconds > 0 from a ``timedelta``, a number of seconds, or text: ``90s``, ``15m``,
    ``2h``, ``3d``, ``2w``, ``6mo``, ``1y``, combined (``1h30m``) or spelled out (``2 hours``)."""
    if isinstance(value, bool):
        raise InvalidInput(f"{what} must be a duration such as '2h' or '3d', not {value!r}")
    if isinstance(value, datetime.timedelta):
        ms = value.total_seconds() * SECOND_MS
    elif isinstance(value, (int, float)):
        ms = float(value) * SECOND_MS
    elif isinstance(value, str):
        ms = _parse_duration(value, what)
    else:
        raise InvalidInput(f"{what} must be a duration such as '2h' or '3d', not {value!r}")
    if math.isnan(ms) or not 0 < ms <= MAX_TTL_MS:
        raise InvalidInput(f"{what} must be more than 0 and at most 100 years, not {value!r}")
    return max(1, round(ms))


def _parse_duration(text: str, what: str) -> float:
    rest, total, found = text.strip().lower(), 0.0, False
    position = 0
    while position < len(rest):
        glue = _DURATION_GLUE.match(rest, position)
        if glue and glue.end() > position:
            position = glue.end()
            continue
        part = _DURATION_PART.match(rest, position)
        if part is None or part.group(2) not in _UNITS:
            raise InvalidInput(
                f"{what} {text!r} is not a duration: use a number and a unit "
                "(s, m, h, d, w, mo, y), e.g. '2h', '3d' or '1h30m'"
            )
        total += float(part.group(1)) * UNIT_MS[_UNITS[part.group(2)]]
        found, position = True, part.end()
    if not found:
        raise InvalidInput(f"{what} must not be empty")
    return total


def moment(value, now: int, what: str = "since", *, end: bool = False) -> int:
    """Epoch milliseconds from an int (milliseconds), a ``datetime`` (naive: local time), a
    ``date`` or ISO text (``2026-10-01``, ``2026-10-01 14:30``, ``2026-10-01T14:30:00Z``:
    local time unless it names its offset), or a duration meaning that long before ``now``
    (``7d``, ``2h``). A day alone is its first moment, or with ``end`` the first moment of the
    next day (so that ``until=<day>`` includes that day)."""
    if isinstance(value, bool):
        raise InvalidInput(f"{what} must be a date, a time or a duration, not {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, datetime.datetime):
        return _ms(value)
    if isinstance(value, datetime.date):
        return _day_ms(value, end)
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a date, a time or a duration, not {value!r}")
    text = value.strip()
    try:
        if len(text) == 10:
            return _day_ms(datetime.date.fromisoformat(text), end)
        return _ms(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        pass
    try:
        return now - duration(text, what)
    except InvalidInput:
        raise InvalidInput(
            f"{what} {value!r} is neither a date (2026-10-01), a time (2026-10-01 14:30) nor "
            "a duration before now (7d, 2h)"
        ) from None


def _ms(moment_: datetime.datetime) -> int:
    return round(moment_.timestamp() * SECOND_MS)  # naive: local time


def _day_ms(day: datetime.date, end: bool) -> int:
    if end:
        day += datetime.timedelta(days=1)
    return _ms(datetime.datetime(day.year, day.month, day.day))


def window(since, until, now: int) -> tuple[int | None, int | None]:
    """(since, until) in epoch milliseconds, each None when not given: since inclusive, until
    exclusive (a day given as ``until`` counts whole)."""
    start = None if since is None else moment(since, now, "since")
    stop = None if until is None else moment(until, now, "until", end=True)
    if start is not None and stop is not None and stop <= start:
        raise InvalidInput("until must be later than since")
    return start, stop


def expiry(ttl, expires_at, now: int) -> int | None:
    """When a fact written now expires: ``ttl`` after now, or at ``expires_at`` (None: never)."""
    if ttl is not None and expires_at is not None:
        raise InvalidInput("give ttl or expires_at, not both")
    if ttl is not None:
        return now + duration(ttl)
    if expires_at is None:
        return None
    when = moment(expires_at, now, "expires_at")
    if when <= now:
        raise InvalidInput("expires_at is not in the future")
    return when
