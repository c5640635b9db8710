"""Text hidden in an encoding a model reads but a pattern does not: base64, hex, URL (percent)
encoding, HTML and ``\\u`` escapes, ROT13, and text written backwards. Each decoder returns what
it found only when that reads as text, so a hash, a UUID or a colour code decodes to nothing."""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import re
import urllib.parse

_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
# 8 or more bytes: plain pairs, pairs split by spaces, colons or dashes, or \x / 0x escapes
_HEX = re.compile(
    r"(?:\\x[0-9a-fA-F]{2}){8,}|(?:0x[0-9a-fA-F]{2}[\s,]*){8,}"
    r"|\b(?:[0-9a-fA-F]{2}[\s:-]?){8,}\b"
)
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
_ENTITY = re.compile(r"&#?\w+;")
_WORD = re.compile(r"[a-z]+")
# Words any English instruction uses: ROT13 or reversed text that decodes to more of them
# than it shows was written that way on purpose.
_COMMON = frozenset(
    re.findall(
        r"\S+",
        "the and to of a you your all is in for that this with from now on be it are not never "
        "any every send ignore instructions previous rules user system prompt tell reveal always "
        "secret password passwords forward include must should will no her his their after each "
        "when if as do don't keys key api data upload email memory note assistant model agent "
        "answer reply what who before",
    )
)


@functools.lru_cache(maxsize=64)  # the patterns and the model read the same text
def decoded(text: str) -> tuple[tuple[str, str], ...]:
    """(how, text) for each run of ``text`` hidden in an encoding that decodes to readable
    text: ``"base64"``, ``"hex"``, ``"URL encoding"``, ``"escapes"``, ``"ROT13"``,
    ``"reverse"``."""
    found = [("base64", run) for run in _base64(text)]
    found += [("hex", run) for run in _hex(text)]
    if _PERCENT.search(text):
        found.append(("URL encoding", urllib.parse.unquote_plus(text, errors="replace")))
        found += [("base64", run) for run in _base64(found[-1][1])]
    if _ESCAPE.search(text) or _ENTITY.search(text):
        unescaped = _ESCAPE.sub(
            lambda m: codecs.decode(m.group(), "unicode_escape"), html.unescape(text)
        )
        if unescaped != text:
            found.append(("escapes", unescaped))
    plain = _common(text)
    for how, turned in (("ROT13", codecs.encode(text, "rot13")), ("reverse", text[::-1])):
        if _common(turned) >= max(2, plain + 1):
            found.append((how, turned))
    return tuple(found)


def _base64(text: str) -> list[str]:
    found: list[str] = []
    for run in _BASE64.findall(text):
        padded = run + "=" * (-len(run) % 4)
        try:
            raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            continue
        _readable(raw, found)
    return found


def _hex(text: str) -> list[str]:
    found: list[str] = []
    for run in _HEX.findall(text):
        digits = re.sub(r"\\x|0x|[^0-9a-fA-F]", "", run)
        if len(digits) % 2 == 0:
            _readable(bytes.fromhex(digits), found)
    return found


def _readable(raw: bytes, found: list[str]) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return
    letters = sum(c.isalpha() or c == " " for c in text)
    if text.isprintable() and letters > 0.6 * len(text):
        found.append(text)


def _common(text: str) -> int:
    return sum(word in _COMMON for word in _WORD.findall(text.lower()))
