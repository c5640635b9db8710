"""Text as an attacker's disguise would read it (the decoding of hidden runs is ``decoders``)."""

from __future__ import annotations

import functools
import re
import unicodedata

VISIBLE_FORMAT_CHARS = {"\u200c", "\u200d"}  # ZWNJ/ZWJ: needed by some scripts and emoji

# Letters of other scripts that look like Latin ones. Unicode's confusables.txt maps them to
# "skeletons" (I -> l, m -> rn) that every pattern would need as well; this table folds the
# look-alikes attackers use to the letter they stand for.
_LOOKALIKES = str.maketrans(
    "аеорсхуіјѕԁһӏкмнтвАЕОРСХУІЈЅКМНТВ"  # Cyrillic
    "αορικντυχεΑΟΡΙΚΝΤΥΧΕΒΖΗΜ"  # Greek
    "օսոɡıɪʟ",  # Armenian, Latin small capitals, dotless i
    "aeopcxyijsdhlkmhtbAEOPCXYIJSKMHTBaopikvtuxeAOPIKNTYXEBZHMounqiil",
)
_LETTERS = re.compile(r"[^\W\d_]+")
_LATIN = re.compile(r"[A-Za-z]")
_LEET = {one: str.maketrans("0134578@$!|+", f"o{one}eastbasilt") for one in "il"}  # 1: i or l
_LEET_CHAR = r"(?:[\w$!|+]|@(?![\w-]+\.\w))"  # an @ in an e-mail address stays
_LEET_WORD = re.compile(f"{_LEET_CHAR}*[a-zA-Z]{_LEET_CHAR}*")
_GAP = re.compile(r"[ ._*\-·/]{1,3}")
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W\d_]" + _GAP.pattern + r"){3,}[^\W\d_](?![^\W_])")


@functools.lru_cache(maxsize=64)  # the patterns and the model read the same text
def normalised(text: str, one: str = "i") -> str:
    """``text`` as an attacker's disguise would read: NFKC, look-alikes folded to Latin,
    leetspeak read as letters (a 1 as ``one``), spaced-out letters joined."""
    text = _folded(unicodedata.normalize("NFKC", text))
    text = "".join(ch for ch in text if ch not in VISIBLE_FORMAT_CHARS)
    table = _LEET[one]
    text = _LEET_WORD.sub(
        lambda m: m.group().translate(table) if re.search(r"[\d@$!|+]", m.group()) else m.group(),
        text,
    )
    return _SPACED.sub(_join_spaced, text)


def _folded(text: str) -> str:
    """Look-alikes folded to Latin where the text is mostly Latin, or in the words that mix
    Latin letters in: a Russian or Greek sentence keeps its own letters."""
    words = _LETTERS.findall(text)
    if 2 * sum(bool(_LATIN.search(word)) for word in words) >= len(words):
        return text.translate(_LOOKALIKES)
    return _LETTERS.sub(
        lambda m: m.group().translate(_LOOKALIKES) if _LATIN.search(m.group()) else m.group(),
        text,
    )


def _join_spaced(match: re.Match) -> str:
    """``i g n o r e  a l l`` -> ``ignore all``: the run's usual separator joins letters, any
    other separator (a wider gap) is a word break."""
    run = match.group()
    gaps = _GAP.findall(run)
    usual = max(set(gaps), key=gaps.count)
    words = _GAP.split(run)
    out = words[0]
    for gap, word in zip(gaps, words[1:]):
        out += word if gap == usual else " " + word
    return out


def hidden_character(text: str) -> str | None:
    """The first invisible format or control character of ``text`` (tab and newlines are
    fine), as ``U+XXXX``."""
    for char in text:
        category = unicodedata.category(char)
        if (category == "Cf" and char not in VISIBLE_FORMAT_CHARS) or (
            category == "Cc" and char not in "\t\n\r"
        ):
            return f"U+{ord(char):04X}"
    return None


def one_line(text: str, limit: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
