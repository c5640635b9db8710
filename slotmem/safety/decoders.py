"""Text hidden in an encoding a model reads but a pattern does not: base64, base32, hex, binary,
Morse, URL (percent) encoding, HTML and ``\\u`` escapes, ROT13 and the other Caesar shifts, and
text written backwards (whole, or the part after a colon or on a line of its own). What a run
decodes to is decoded once more (base64 of base64). Each decoder returns what it found only
when that reads as text, so a hash, a UUID or a colour code decodes to nothing."""

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
_BASE32 = re.compile(r"\b[A-Z2-7]{16,}={0,6}")
_BINARY = re.compile(r"(?:\b[01]{8}\b[\s,]*){4,}")
# letters of dots and dashes, words split by a slash or a wider gap: four letters or more
_MORSE = re.compile(r"(?<![\w.-])(?:[.-]{1,7}(?:\s*/\s*|\s+)){3,}[.-]{1,7}(?![\w.-])")
_MORSE_LETTERS = (
    ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- "
    ".-- -..- -.-- --.. ----- .---- ..--- ...-- ....- ..... -.... --... ---.. ----. .-.-.- "
    "--..-- ..--.. .----. -.-.-- -..-. ---... .--.-. -....- -.--. -.--.-"
)
_MORSE_CODE = dict(zip(_MORSE_LETTERS.split(), "abcdefghijklmnopqrstuvwxyz0123456789.,?'!/:@-()"))
_SHIFTS = {
    shift: str.maketrans(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "".join(chr(ord(base) + (i + shift) % 26) for base in "aA" for i in range(26)),
    )
    for shift in range(1, 26)
    if shift != 13  # ROT13 is its own decoder
}
_PARTS = re.compile(r"[:\n]")
_ACCENTED = re.compile(r"[^\x00-\x7f]")  # a Caesar shift turns ASCII letters only
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
    text: ``"base64"``, ``"base32"``, ``"hex"``, ``"binary"``, ``"Morse"``,
    ``"URL encoding"``, ``"escapes"``, ``"ROT13"``, ``"Caesar shift"``, ``"reverse"``; and
    what those decode to in turn (``"base64 in base64"``)."""
    found = _runs(text)
    for how, plain in list(found):
        found += [(f"{again} in {how}", twice) for again, twice in _runs(plain)]
    common = _common(text)
    for how, turned in (("ROT13", codecs.encode(text, "rot13")), ("reverse", text[::-1])):
        if _common(turned) >= max(2, common + 1):
            found.append((how, turned))
    if not any(how in ("ROT13", "reverse") for how, _ in found):
        found += [("Caesar shift", part) for part in _shifted(text)]
        found += [("reverse", part[::-1]) for part in _reversed_parts(text)]
    return tuple(found)


def _runs(text: str) -> list[tuple[str, str]]:
    """The runs of ``text`` in an encoding of bytes or of letters, decoded."""
    found = [("base64", run) for run in _base64(text)]
    found += [("base32", run) for run in _base32(text)]
    found += [("binary", run) for run in _binary(text)]
    found += [("Morse", run) for run in _morse(text)]
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
    return found


def _base32(text: str) -> list[str]:
    found: list[str] = []
    for run in _BASE32.findall(text):
        try:
            raw = base64.b32decode(run.rstrip("=") + "=" * (-len(run.rstrip("=")) % 8))
        except (binascii.Error, ValueError):
            continue
        _readable(raw, found)
    return found


def _binary(text: str) -> list[str]:
    found: list[str] = []
    for run in _BINARY.findall(text):
        _readable(bytes(int(bits, 2) for bits in re.findall(r"[01]{8}", run)), found)
    return found


def _morse(text: str) -> list[str]:
    found = []
    for run in _MORSE.finditer(text):
        words = re.split(r"\s*/\s*|\s{2,}", run.group().strip())
        letters = [[_MORSE_CODE.get(code) for code in word.split()] for word in words]
        if all(None not in word for word in letters) and sum(map(len, letters)) >= 4:
            found.append(" ".join("".join(word) for word in letters))  # type: ignore[arg-type]
    return found


def _shifted(text: str) -> list[str]:
    """The parts of ``text`` (the whole, the part after a colon, a line) that a Caesar shift
    other than ROT13 turns into English: four words or more, at least 70% of them among the
    10,000 commonest English words, against under 40% as written."""
    if len(text) > 2000:
        return []
    found = []
    for part in {text, *_PARTS.split(text)}:
        words = _WORD.findall(part.lower())
        if len(words) < 4 or _english(words) >= 0.4 or _ACCENTED.search(part):
            continue
        head = " ".join(words[:8])  # the shift is chosen on the first words, checked on all
        best = max(_SHIFTS.values(), key=lambda table: _english(head.translate(table).split()))
        turned = part.translate(best)
        if _english(_WORD.findall(turned.lower())) >= 0.7:
            found.append(turned.strip())
    return found


def english_share(words: list[str]) -> float:
    """The share of ``words`` (lower-cased) among the 10,000 commonest English words."""
    return _english(words)


def _english(words: list[str]) -> float:
    return sum(word in _english_words() for word in words) / len(words) if words else 0.0


@functools.cache
def _english_words() -> frozenset[str]:
    """The 10,000 commonest English words (``data/common-words.txt.gz``)."""
    import gzip
    from importlib.resources import files

    raw = files("slotmem").joinpath("data/common-words.txt.gz").read_bytes()
    return frozenset(gzip.decompress(raw).decode().split())


def _reversed_parts(text: str) -> list[str]:
    """The parts of ``text`` (after a colon, or on a line of its own) that read as English
    backwards and not forwards."""
    parts = _PARTS.split(text)
    if len(parts) < 2:
        return []
    return [
        part
        for part in parts
        if _common(part[::-1]) >= max(2, _common(part) + 2) and len(part) <= 2000
    ]


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
