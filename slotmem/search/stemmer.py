"""The Porter stemmer exactly as SQLite FTS5's ``porter`` tokenizer applies it.

slotmem looks query terms up in the index's vocabulary (``fts5vocab``), which holds stems, so it
needs the very stem FTS5 stores: ``stem("playing") == "play"``. This is a port of
``fts5PorterCb`` (sqlite/ext/fts5/fts5_tokenize.c): the original Porter (1980) rules applied to
the UTF-8 bytes of a token the ``unicode61`` tokenizer has already case-folded; tokens shorter
than 3 or longer than 64 bytes pass through. tests/test_stemmer.py compares it with FTS5 itself.
"""

from __future__ import annotations

import functools

MAX_BYTES = 64
STEMS_CACHED = 16_384  # tokens of at most 128 characters: a few MB at most

# Within a step, the first rule whose suffix matches is the only one tried (its condition may
# still fail), and rules are grouped by the suffix's second-to-last letter, as in FTS5's
# generated code. (suffix, replacement) pairs.
_STEP2 = {
    "a": [("ational", "ate"), ("tional", "tion")],
    "c": [("enci", "ence"), ("anci", "ance")],
    "e": [("izer", "ize")],
    "g": [("logi", "log")],
    "l": [("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous")],
    "o": [("ization", "ize"), ("ation", "ate"), ("ator", "ate")],
    "s": [("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous")],
    "t": [("aliti", "al"), ("iviti", "ive"), ("biliti", "ble")],
}
_STEP3 = {
    "a": [("ical", "ic")],
    "s": [("ness", "")],
    "t": [("icate", "ic"), ("iciti", "ic")],
    "u": [("ful", "")],
    "v": [("ative", "")],
    "z": [("alize", "al")],
}
_STEP4 = {
    "a": ["al"], "c": ["ance", "ence"], "e": ["er"], "i": ["ic"], "l": ["able", "ible"],
    "n": ["ant", "ement", "ment", "ent"], "o": ["ion", "ou"], "s": ["ism"], "t": ["ate", "iti"],
    "u": ["ous"], "v": ["ive"], "z": ["ize"],
}  # fmt: skip


@functools.lru_cache(maxsize=STEMS_CACHED)
def stem(token: str) -> str:
    """The FTS5 porter stem of one lower-cased token (``unicode61`` output), remembered for
    the last ``STEMS_CACHED`` tokens (a search stems the same words of its candidates' keys
    again and again; ``stem.__wrapped__`` computes it afresh)."""
    raw = token.encode("utf-8", "surrogatepass").decode("latin-1")  # one char per byte, as in C
    return _stem(raw).encode("latin-1").decode("utf-8", "replace")


def _stem(z: str) -> str:
    if len(z) > MAX_BYTES or len(z) < 3 or (z.isdigit() and z.isascii()):
        return z  # every rule needs a letter: digits pass through (ids in keys: fact.48213)
    z = _step1a(z)
    z = _step1b(z)
    if z[-1] == "y" and _has_vowel(z[:-1]):
        z = z[:-1] + "i"
    z = _replace(z, _STEP2)
    z = _replace(z, _STEP3)
    z = _step4(z)
    if z[-1] == "e" and (_m_gt1(z[:-1]) or (_m_eq1(z[:-1]) and not _ostar(z[:-1]))):
        z = z[:-1]
    if len(z) > 1 and z.endswith("ll") and _m_gt1(z[:-1]):
        z = z[:-1]
    return z


def _is_vowel(c: str, y_is_vowel: bool) -> bool:
    return c in "aeiou" or (y_is_vowel and c == "y")


def _gobble_vc(z: str, prev_consonant: bool) -> int:
    """Index just past the first vowel-then-consonant sequence of z, or 0."""
    consonant = prev_consonant
    i = 0
    while i < len(z):
        consonant = not _is_vowel(z[i], consonant)
        if not consonant:
            break
        i += 1
    for j in range(i + 1, len(z)):
        consonant = not _is_vowel(z[j], consonant)
        if consonant:
            return j + 1
    return 0


def _m_gt0(z: str) -> bool:
    return bool(_gobble_vc(z, False))


def _m_gt1(z: str) -> bool:
    n = _gobble_vc(z, False)
    return bool(n and _gobble_vc(z[n:], True))


def _m_eq1(z: str) -> bool:
    n = _gobble_vc(z, False)
    return bool(n and not _gobble_vc(z[n:], True))


def _ostar(z: str) -> bool:
    """Ends consonant-vowel-consonant, the last not w, x or y."""
    if not z or z[-1] in "wxy":
        return False
    mask, consonant = 0, False
    for c in z:
        consonant = not _is_vowel(c, consonant)
        mask = (mask << 1) + consonant
    return mask & 7 == 5


def _has_vowel(z: str) -> bool:
    return any(_is_vowel(c, i > 0) for i, c in enumerate(z))


def _step1a(z: str) -> str:
    if z[-1] != "s":
        return z
    if z[-2] == "e":
        if (len(z) > 4 and z[-4:-2] == "ss") or (len(z) > 3 and z[-3] == "i"):
            return z[:-2]
        return z[:-1]
    return z if z[-2] == "s" else z[:-1]


def _step1b(z: str) -> str:
    if z.endswith("eed") and len(z) > 3:
        return z[:-1] if _m_gt0(z[:-3]) else z
    for suffix in ("ed", "ing"):
        if z.endswith(suffix) and len(z) > len(suffix) and _has_vowel(z[: -len(suffix)]):
            return _step1b2(z[: -len(suffix)])
    return z


def _step1b2(z: str) -> str:
    if len(z) > 2 and z[-2:] in ("at", "bl", "iz"):
        return z + "e"
    last = z[-1]
    if not _is_vowel(last, False) and last not in "lsz" and len(z) > 1 and last == z[-2]:
        return z[:-1]
    if _m_eq1(z) and _ostar(z):
        return z + "e"
    return z


def _replace(z: str, rules: dict) -> str:
    if len(z) < 2:
        return z
    for suffix, replacement in rules.get(z[-2], ()):
        if len(z) > len(suffix) and z.endswith(suffix):
            base = z[: -len(suffix)]
            return base + replacement if _m_gt0(base) else z
    return z


def _step4(z: str) -> str:
    if len(z) < 2:
        return z
    for suffix in _STEP4.get(z[-2], ()):
        if len(z) > len(suffix) and z.endswith(suffix):
            base = z[: -len(suffix)]
            if suffix == "ion":
                return base if base[-1:] in ("s", "t") and _m_gt1(base) else z
            return base if _m_gt1(base) else z
    return z
