"""User text -> a safe FTS5 MATCH expression.

Never raises: whatever the text holds (quotes, operators, NUL bytes, lone surrogates, emoji),
the result is either ``None`` (nothing worth searching for) or an OR-join of double-quoted word
tokens, which FTS5 always parses.
"""

from __future__ import annotations

import re
import unicodedata

MAX_TERMS = 16

# A standard English stopword list (the NLTK list, less words that carry meaning in short
# queries such as "not", "no" and "again").
STOPWORDS = frozenset(
    ["a", "about", "above", "after", "against", "all", "am", "an", "and", "any", "are", "aren't", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "couldn't", "did", "didn't", "do", "does", "doesn't", "doing", "don't", "down", "during", "each", "few", "for", "from", "further", "had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd", "he'll", "he's", "her", "here", "here's", "hers", "herself", "him", "himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if", "in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me", "more", "most", "mustn't", "my", "myself", "nor", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves", "out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's", "should", "shouldn't", "so", "some", "such", "than", "that", "that's", "the", "their", "theirs", "them", "themselves", "then", "there", "there's", "these", "they", "they'd", "they'll", "they're", "they've", "this", "those", "through", "to", "too", "under", "until", "up", "very", "was", "wasn't", "we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what", "what's", "when", "when's", "where", "where's", "which", "while", "who", "who's", "whom", "why", "why's", "with", "won't", "would", "wouldn't", "you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself", "yourselves", "s", "t", "d", "ll", "m", "re", "ve", "y", "just", "also", "will", "shall", "may", "might", "must", "us"]
)

_WORD_RE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_CONTRACTION_TAIL = re.compile(r"['’](?:s|d|ll|m|re|ve|t)$")


def clean(text: str) -> str:
    """Drop what cannot be text: lone surrogates, NUL and control characters; NFKC-normalize."""
    if not isinstance(text, str):
        text = str(text)
    text = text.encode("utf-8", "ignore").decode("utf-8")
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    return unicodedata.normalize("NFKC", text)


def terms(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """Lower-cased word tokens, possessives stripped, stopwords and duplicates removed, capped."""
    seen: dict[str, None] = {}
    for match in _WORD_RE.finditer(clean(text).lower()):
        word = match.group()
        if word in STOPWORDS:
            continue
        word = _CONTRACTION_TAIL.sub("", word).replace("’", "'")
        for part in word.split("'"):
            if part and part not in STOPWORDS and (len(part) > 1 or part.isdigit()):
                seen.setdefault(part, None)
        if len(seen) >= max_terms:
            break
    return list(seen)[:max_terms]


def match_expression(words: list[str]) -> str | None:
    """``"a" OR "b"``: every token quoted, so no FTS5 operator or column filter can leak in."""
    if not words:
        return None
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in words)


def build(text: str, max_terms: int = MAX_TERMS) -> str | None:
    return match_expression(terms(text, max_terms))
