"""The items of ``upsert_many`` checked (the file's and PostgreSQL's): each as
``validation.fact`` and ``validation.expiry`` check one fact, with the same errors.

A batch of plain items (dicts of slot, key, value and optionally confidence and source, each a
``str`` or a number) is checked a column at a time first: each column's texts stripped, measured
and searched for control characters in one pass over them all (a character is one code point,
so no check can match across two texts), the slots once per distinct name. That pass only
answers "all of them pass"; on any doubt (a field it does not handle, a value of another type,
a check failing) the items are checked one by one, which names the first bad item as before. A
bulk load spends about a third of its Python on these checks item by item."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from itertools import repeat

from .. import validation
from ..errors import InvalidInput

EXPIRY = ("ttl", "expires_at")
ITEM_FIELDS = frozenset({"slot", "key", "value", "confidence", "source", "tags", *EXPIRY})
PLAIN_FIELDS = frozenset({"slot", "key", "value", "confidence", "source"})  # the column pass's

_FIELDS = tuple(map(operator.itemgetter, ("slot", "key", "value")))
_CONFIDENCE = operator.methodcaller("get", "confidence", 1.0)
_SOURCE = operator.methodcaller("get", "source")
_NUMBERS = frozenset({int, float})
NoneType = type(None)
_SOURCE_KINDS = frozenset({str, NoneType})


def checked(items: Iterable[Mapping], now: int) -> tuple[list[tuple], list[tuple | None]]:
    """(slot, key, value, confidence, source, expires_at) of each item, checked, and the
    tags each asks for (None: keep the fact's). An invalid item raises InvalidInput naming it
    (``item N: ...``)."""
    items = items if isinstance(items, list) else list(items)
    fast = _columns(items)
    if fast is not None:
        return fast, [None] * len(fast)
    return _one_by_one(items, now)


def _one_by_one(items: list, now: int) -> tuple[list[tuple], list[tuple | None]]:
    found = []
    wanted: list[tuple[str, ...] | None] = []
    for number, item in enumerate(items):
        try:
            if not ITEM_FIELDS.issuperset(item):
                raise InvalidInput(f"unknown field(s) {sorted(set(item) - ITEM_FIELDS)}")
            found.append(
                (
                    *validation.fact(
                        item["slot"],
                        item["key"],
                        item["value"],
                        item.get("confidence", 1.0),
                        item.get("source"),
                    ),
                    validation.expiry(item.get("ttl"), item.get("expires_at"), now),
                )
            )
            given = item.get("tags")
            wanted.append(None if given is None else validation.tags(given))
        except (KeyError, TypeError) as e:
            raise InvalidInput(f"item {number}: needs slot, key and value ({e!r})") from None
        except InvalidInput as e:
            raise InvalidInput(f"item {number}: {e}") from None
    return found, wanted


def _columns(items: list) -> list[tuple] | None:
    """The checked items when every item is a plain one and passes (see the module's text);
    None when the items need checking one by one."""
    if not items or set(map(type, items)) != {dict}:
        return None
    if not PLAIN_FIELDS.issuperset(set().union(*items)):
        return None  # ttl, expires_at, tags or an unknown field: the one-by-one path
    try:
        slots, keys, values = (list(map(field, items)) for field in _FIELDS)
    except KeyError:
        return None
    confidences = list(map(_CONFIDENCE, items))
    sources = list(map(_SOURCE, items))
    if set(map(type, slots)) != {str}:
        return None
    names = set(slots)
    if not all(validation.SLOT_RE.fullmatch(name) for name in names):
        return None
    stripped_keys = _texts(keys, validation.MAX_KEY_CHARS, single_line=True)
    stripped_values = _texts(values, validation.MAX_VALUE_CHARS, single_line=False)
    if stripped_keys is None or stripped_values is None:
        return None
    if not set(map(type, confidences)) <= _NUMBERS:  # no bool (a subclass of int), no str
        return None
    if min(confidences) < 0 or max(confidences) > 1:  # exact for ints of any size
        return None
    try:
        numbers = list(map(float, confidences))
        if any(map(math.isnan, numbers)):  # a NaN passes both comparisons
            return None
    except OverflowError:  # an int too large for a float, beside a NaN
        return None
    kinds = set(map(type, sources))  # first: `None in sources` would call a value's __eq__
    if not kinds <= _SOURCE_KINDS:
        return None
    given = sources if NoneType not in kinds else [text for text in sources if text is not None]
    stripped = _texts(given, validation.MAX_SOURCE_CHARS, single_line=True)
    if stripped is None:
        return None
    checked_sources: list[str | None] = list(stripped)
    if len(stripped) != len(sources):
        it = iter(stripped)
        checked_sources = [None if source is None else next(it) for source in sources]
    return list(zip(slots, stripped_keys, stripped_values, numbers, checked_sources, repeat(None)))


def _texts(texts, limit: int, *, single_line: bool) -> list[str] | None:
    """``texts`` stripped when each passes ``validation.text``; None when one may not."""
    if not texts:
        return []
    if set(map(type, texts)) != {str}:
        return None
    stripped = list(map(str.strip, texts))
    if not all(stripped) or max(map(len, stripped)) > limit:
        return None
    joined = "".join(stripped)
    # isprintable: no control character at all (nor some other characters: then the search);
    # texts without a line break or tab pass on the first (no copy without them to make)
    if not joined.isprintable():
        shown = joined if single_line else joined.replace("\n", "").replace("\t", "")
        pattern = validation.SINGLE_LINE_RE if single_line else validation.CONTROL_RE
        if not shown.isprintable() and pattern.search(joined):
            return None
    if not joined.isascii():
        try:
            joined.encode("utf-8")  # a lone surrogate anywhere: the one-by-one path names it
        except UnicodeEncodeError:
            return None
    return stripped
