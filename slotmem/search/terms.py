"""User text -> search terms. Pure Python, no database; never raises.

Whatever the text holds (quotes, FTS5 operators, NUL bytes, lone surrogates, emoji, 100k
characters), the result is a small list of plain terms that slotmem double-quotes before FTS5
sees them:

- ``words``: lower-cased, diacritic-free word tokens for the porter index (what FTS5's
  ``porter unicode61 remove_diacritics 2`` tokenizer would make of the text, before stemming),
  English stopwords dropped (and two-letter words the index cannot tell from one: ``hi`` is
  what porter makes of ``his``), one token per porter stem, short tokens kept (``go``, ``ai``,
  ``42``, ``c`` from ``c#``), apostrophes split (``Joanna's`` -> ``joanna``);
- ``grams``: Chinese, Japanese and Korean runs (no spaces between words) as character bigrams
  (a lone character stays a unigram), searched in the trigram index.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from .stemmer import stem

MAX_TERMS = 16  # cost grows with terms; questions average 5 after stopwords
MAX_INPUT_CHARS = 20_000
MAX_TOKEN_CHARS = 128

# NLTK's English list (179 words) plus words that only fill questions ("would", "ever", ...).
STOPWORDS = frozenset([
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "you're", "you've",
    "you'll", "you'd", "your", "yours", "yourself", "yourselves", "he", "him", "his", "himself",
    "she", "she's", "her", "hers", "herself", "it", "it's", "its", "itself", "they", "them",
    "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "that'll",
    "these", "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has",
    "had", "having", "do", "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or",
    "because", "as", "until", "while", "of", "at", "by", "for", "with", "about", "against",
    "between", "into", "through", "during", "before", "after", "above", "below", "to", "from",
    "up", "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once",
    "here", "there", "when", "where", "why", "how", "all", "any", "both", "each", "few", "more",
    "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so", "than",
    "too", "very", "s", "t", "can", "will", "just", "don", "don't", "should", "should've",
    "now", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren", "aren't", "couldn", "couldn't",
    "didn", "didn't", "doesn", "doesn't", "hadn", "hadn't", "hasn", "hasn't", "haven",
    "haven't", "isn", "isn't", "ma", "mightn", "mightn't", "mustn", "mustn't", "needn",
    "needn't", "shan", "shan't", "shouldn", "shouldn't", "wasn", "wasn't", "weren", "weren't",
    "won", "won't", "wouldn", "wouldn't", "would", "could", "might", "must", "shall", "may",
    "also", "ever", "many", "much"
])  # fmt: skip

# What the index holds for the stopwords (facts are indexed whole): a word of two letters that
# stems to one of these ("hi", "ha", "wa") would only ever match "his", "has", "was".
STOPWORD_STEMS = frozenset(stem(word) for word in STOPWORDS)

# Scripts written without spaces between words (and Hangul, whose particles attach to words).
# migrations/0003 holds the same ranges as a GLOB pattern (tests/test_terms.py checks they agree).
CJK_RANGES = (
    (0x1100, 0x11FF), (0x3005, 0x3007), (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF),
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0x20000, 0x2FFFF),
)  # fmt: skip


@functools.cache
def _cjk_run() -> re.Pattern:
    """A run of CJK characters (compiled at first use: 1.6 ms, which an ASCII question,
    ``parse``'s usual case, never needs)."""
    return re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]+")


_WORD = re.compile(r"[^\W_]+")
_APOSTROPHE = re.compile("['\u2019\u02bc\uff07]")


@dataclass(frozen=True)
class Terms:
    words: tuple[str, ...] = ()
    grams: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.words or self.grams)


def parse(text, max_terms: int = MAX_TERMS) -> Terms:
    """Words and CJK grams of ``text``, at most ``max_terms`` in all, in text order."""
    try:
        limit = max(0, int(max_terms))
        text = clean(text)
        if text.isascii():  # no CJK run or curly apostrophe (an ASCII one splits words alike),
            # and folding is lower-casing: the same terms, sooner
            return Terms(tuple(_ascii_words(text.lower(), limit)))
        text = _APOSTROPHE.sub(" ", text)
        grams = _grams(_cjk_run().findall(text))[:limit]
        words = _words(_cjk_run().sub(" ", text), limit - len(grams))
        return Terms(tuple(words), tuple(grams))
    except Exception:  # noqa: BLE001 - the contract is "never raises"; no input is known to get here
        return Terms()


def clean(text) -> str:
    """Text without lone surrogates, NUL, control or format characters.

    Not NFKC-normalized: the index is not either, so "²" or "ﬁ" must stay what they are."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "ignore")
    elif not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[:MAX_INPUT_CHARS].encode("utf-8", "ignore").decode("utf-8")
    if text.isascii():  # the same, without a lookup per character
        return text.translate(_ASCII_CONTROLS)
    text = "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)
    return text


# ASCII's characters of category C: U+0000-U+001F and U+007F (tests/test_terms.py checks).
_ASCII_CONTROLS = dict.fromkeys([*range(0x20), 0x7F], " ")


def fold(word: str) -> str:
    """Case-fold each character on its own (simple folding: "ς" is "σ", "ß" stays) and strip
    diacritics from Latin letters only, as ``unicode61 remove_diacritics 2`` does."""
    if word.isascii():  # the same, without a lookup per character (tests/test_terms.py)
        return word.lower()
    return "".join(_fold_char(ch) for ch in word)


def _fold_char(ch: str) -> str:
    folded = ch.casefold()
    folded = folded if len(folded) == 1 else ch.lower()
    parts = unicodedata.normalize("NFD", folded)
    if not _is_latin(parts[0]) or folded in _FTS5_KEEPS:
        return folded  # FTS5 strips diacritics from Latin letters only
    return "".join(c for c in parts if not unicodedata.combining(c))


_FTS5_KEEPS = frozenset("ǡǣǽǿ")  # Latin letters unicode61 leaves alone (tests/test_terms.py)


def _is_latin(c: str) -> bool:
    return "a" <= c <= "z" or "\u00c0" <= c <= "\u024f" or "\u1e00" <= c <= "\u1eff"


def _words(text: str, limit: int) -> list[str]:
    folded = (word for raw in _WORD.findall(text) for word in _WORD.findall(fold(raw)))
    return list(_chosen(folded, limit).values())  # folding can expose separators


def _chosen(words: Iterable[str], limit: int) -> dict[str, str]:
    """stem -> the first word with that stem, of ``words`` (folded tokens), up to ``limit``."""
    chosen: dict[str, str] = {}
    for word in words:
        if len(chosen) >= limit:
            break
        if word in STOPWORDS or len(word) > MAX_TOKEN_CHARS:
            continue
        stemmed = stem(word)
        if len(word) > 2 or stemmed not in STOPWORD_STEMS:
            chosen.setdefault(stemmed, word)
    return chosen


def stems(text) -> frozenset[str]:
    """The stems of ``parse(text).words`` (what a key is matched by: relevance.key_stems)."""
    text = clean(text)
    if text.isascii():
        return frozenset(_ascii_chosen(text.lower(), MAX_TERMS))
    return frozenset(stem(word) for word in parse(text).words)


def _ascii_words(text: str, limit: int) -> list[str]:
    """``_words`` of lower-cased ASCII text: each token is folded already
    (tests/test_key_stems.py compares the two)."""
    return list(_ascii_chosen(text, limit).values())


def _ascii_chosen(text: str, limit: int) -> dict[str, str]:
    """stem -> the first word with that stem, of ``_ascii_words``."""
    return _chosen(_WORD.findall(text), limit)


def tokens(text: str) -> list[str]:
    """Every word token of ``text`` as the index's tokenizer makes it (folded, before stemming;
    stopwords kept): the words a fact's text is indexed under."""
    return [word for raw in _WORD.findall(text) for word in _WORD.findall(fold(raw))]


def _grams(runs: list[str]) -> list[str]:
    grams: dict[str, None] = {}
    for run in runs:
        if len(run) == 1:
            grams.setdefault(run, None)
        for i in range(len(run) - 1):
            grams.setdefault(run[i : i + 2], None)
    return list(grams)


def quote(term: str) -> str:
    """One FTS5 string: double quotes around, inner double quotes doubled."""
    return '"' + term.replace('"', '""') + '"'
