"""How SlotmemStore writes LangGraph's namespaces, keys and values as slotmem's slots, keys and
fact texts, and reads them back exactly as they were (docs/agents.md#langgraph).

- **Namespaces**: a label of lower-case letters, digits, ``_`` and single ``-`` is itself;
  any other label is ``-`` and its UTF-8 in lower-case base32 (``"Maja"`` -> ``-jvqwuyi``), or
  ``x--`` and the same for a first label (a slot starts with a letter: ``("Users",)`` is the
  slot ``x--kvzwk4tt``). A plain label never holds ``--``, so neither form can be a plain one.
- **Keys**: a key slotmem holds as it is (at most 200 characters, no surrounding spaces or
  control characters, already in its ``validation.key_form``: lower case, NFKC) is itself. Any
  other is ``~`` and its base32 (``"Timezone"`` -> ``~krux...``), so ``Timezone`` and
  ``timezone`` stay two items as in LangGraph; a key whose base32 would pass 200 characters is
  ``~0`` and 40 hex digits of its SHA-256, its text then a JSON ``{"key": ..., "value": ...}``.
- **Values**: ``{"content": "text"}`` is the text; any other dict its JSON. A text longer than a
  fact (4,000 characters) is cut into pieces, the first in the item's fact, piece ``n`` in the
  fact ``~1<hash>.<n>`` of the same slot (protected, so no agent and no prune removes one
  alone); read back whole.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import InvalidNamespaceError

from .. import validation
from ..errors import InvalidInput

PLAIN_LABEL = re.compile(r"[a-z0-9_][a-z0-9_-]*")
FIRST = "x--"  # an encoded first label: a slot starts with a letter
HASHED = "~0"  # a key too long to encode: its hash, the key in the text
PART = "~1"  # piece n of a long text
_UNSAFE_JSON = re.compile(r"[\x7f\ud800-\udfff]")  # JSON leaves them, a fact refuses them


def _b32(text: str) -> str:
    return base64.b32encode(text.encode("utf-8", "surrogatepass")).decode().lower().rstrip("=")


def _unb32(code: str) -> str | None:
    code = code.upper()
    try:
        return base64.b32decode(code + "=" * (-len(code) % 8)).decode("utf-8", "surrogatepass")
    except (binascii.Error, ValueError):
        return None


# -- namespaces ---------------------------------------------------------------------------------
def _plain_label(label: str) -> bool:
    return bool(PLAIN_LABEL.fullmatch(label)) and "--" not in label


def slot_of(namespace: tuple[str, ...]) -> str:
    """The slot a namespace maps to (InvalidNamespaceError when it cannot)."""
    if not namespace:
        raise InvalidNamespaceError("a namespace needs at least one label")
    labels = []
    for position, label in enumerate(namespace):
        if not isinstance(label, str) or not label or "." in label:
            raise InvalidNamespaceError(f"invalid namespace label {label!r} in {namespace}")
        if _plain_label(label) and (position or label[0].isalpha()):
            labels.append(label)
        else:
            labels.append(("-" if position else FIRST) + _b32(label))
    slot = ".".join(labels)
    if not validation.SLOT_RE.fullmatch(slot):
        raise InvalidNamespaceError(
            f"namespace {namespace} is too long for a slot ({slot!r}): its labels, joined by "
            "dots (and any label other than lower-case letters, digits, '_' and '-' as base32), "
            "must fit in 64 characters"
        )
    return slot


def namespace_of(slot: str) -> tuple[str, ...]:
    """The namespace of a slot: its dot-separated labels, the encoded ones decoded."""
    return tuple(_label(part) for part in slot.split("."))


def _label(part: str) -> str:
    for mark in ("-", FIRST):
        if part.startswith(mark):
            label = _unb32(part[len(mark) :])
            if label is not None and _b32(label) == part[len(mark) :]:
                return label
    return part  # a slot named so by someone else: keep it


# -- keys -----------------------------------------------------------------------------------------
def _plain_key(key: str) -> bool:
    if key.startswith("~"):
        return False
    try:
        return validation.key(key) == key and validation.key_form(key) == key
    except InvalidInput:
        return False


def stored_key(key: str) -> str:
    """The fact key of a LangGraph key (see the module's description)."""
    if not isinstance(key, str):
        raise InvalidInput(f"a key must be a string, not {type(key).__name__}")
    if _plain_key(key):
        return key
    code = "~" + _b32(key)
    if len(code) <= validation.MAX_KEY_CHARS:
        return code
    return HASHED + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def part_key(stored: str, number: int) -> str:
    """The fact holding piece ``number`` (1, 2, ...) of the text of the fact ``stored``."""
    return f"{PART}{hashlib.sha256(stored.encode()).hexdigest()[:40]}.{number}"


def is_part(stored: str) -> bool:
    return stored.startswith(PART)


# -- values ---------------------------------------------------------------------------------------
def _json(value: Any, separators: tuple[str, str] | None = None) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=separators)
    except (TypeError, ValueError) as e:
        raise InvalidInput(f"a value must be JSON: {e}") from None
    return _UNSAFE_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _plain(text: str) -> bool:
    """Text a fact holds unchanged, and that reads back as text, not JSON."""
    try:
        return validation.value(text) == text and not text.startswith("{")
    except InvalidInput:
        return False


def encode_value(value: Mapping[str, Any]) -> str:
    """A LangGraph value as a fact's text: its content alone when that is all it is."""
    if not isinstance(value, Mapping):
        raise InvalidInput(f"a value must be a dict, not {type(value).__name__}")
    content = value.get("content")
    if set(value) == {"content"} and isinstance(content, str) and _plain(content):
        return content
    return _json(dict(value))


def decode_value(text: str) -> dict[str, Any]:
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"content": text}


def item_text(key: str, value: Mapping[str, Any]) -> str:
    """The whole text of an item (it may need pieces: ``pieces``)."""
    if stored_key(key).startswith(HASHED):
        if not isinstance(value, Mapping):
            raise InvalidInput(f"a value must be a dict, not {type(value).__name__}")
        return _json({"key": key, "value": dict(value)})
    return encode_value(value)


def pieces(text: str) -> list[str]:
    """``text`` in pieces that each fit a fact as they are; joined, they are ``text``."""
    limit = validation.MAX_VALUE_CHARS
    if len(text) <= limit:
        return [text]
    found, start = [], 0
    while start < len(text):
        end = min(start + limit, len(text))
        # a fact's text is stripped: no piece may begin or end with a space
        while end < len(text) and end > start and (text[end - 1].isspace() or text[end].isspace()):
            end -= 1
        if end == start:  # a run of spaces longer than a fact: escape every space (JSON)
            compact = _json(json.loads(text), separators=(",", ":"))
            return pieces(re.sub(r"\s", lambda m: f"\\u{ord(m.group()):04x}", compact))
        found.append(text[start:end])
        start = end
    return found


def is_whole(text: str) -> bool:
    """A text that needs no further pieces: anything but the start of a cut JSON text."""
    if not text.startswith("{"):
        return True
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def decode_item(stored: str, text: str) -> tuple[str, dict[str, Any]]:
    """(key, value) of the fact ``stored`` whose whole text is ``text``."""
    if stored.startswith(HASHED):
        try:
            wrapped = json.loads(text)
            return wrapped["key"], wrapped["value"]
        except (ValueError, KeyError, TypeError):
            return stored, {"content": text}
    key = stored
    if stored.startswith("~"):
        decoded = _unb32(stored[1:])
        if decoded is not None and _b32(decoded) == stored[1:]:
            key = decoded
    return key, decode_value(text)
