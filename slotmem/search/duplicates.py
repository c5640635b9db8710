"""Near-duplicate facts: pairs of facts of one slot that say the same thing under two keys.

Two measures, the vector one when the file has semantic search on:

- **vector**: the cosine similarity of the two facts' stored vectors; each fact's nearest
  neighbours in its slot are the candidates.
- **lexical**: how much of one fact's words (their stems, key and value) the other holds, each
  word weighted by its idf in the slot: the weight they share / the weight of the smaller one.
  A rare word shared says much, a common one little, and a rare word that only one of them
  has ("Marta lives in Porto", "Jonas lives in Porto") says they differ. Paraphrases share
  few words, so this finds fewer pairs than vectors do, but few false ones.

A pair at or above the threshold is reported with the newer fact as the one to keep. The
thresholds were chosen on the development half of ``benchmarks/dedupe.py`` (the most pairs
found with at most 2 false ones per 500 facts); docs/benchmarks.md has the held-out figures.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..records import Fact
from . import terms as text_terms
from .stemmer import stem

THRESHOLDS = {"vector": 0.83, "lexical": 0.87}
NEIGHBOURS = 10  # nearest facts compared with each fact (vector)
MAX_TERMS = 64  # words of a fact compared (lexical)
COMMON = 0.05  # a word in more than this share of the slot's facts proposes no pair (lexical)
_KEY_SPLIT = re.compile(r"[._\-]+")


@dataclass(frozen=True)
class Pair:
    slot: str
    keep: Fact  # the newer of the two
    drop: Fact
    similarity: float
    method: str  # "vector" or "lexical"

    def to_dict(self) -> dict:
        return {
            "slot": self.slot,
            "keep": self.keep.key,
            "drop": self.drop.key,
            "similarity": self.similarity,
            "method": self.method,
            "keep_value": self.keep.value,
            "drop_value": self.drop.value,
        }


class StoredVectors(Protocol):
    """What the vector measure needs of the file's vectors (slotmem.vectors.Semantic has it)."""

    def stored(self, seqs: list[int]) -> dict[int, bytes]: ...

    def knn(self, blob: bytes, slots: list[str] | None, k: int) -> list[tuple[int, float]]: ...


def by_words(conn, slot: str, threshold: float, *, now: int) -> list[Pair]:
    """The slot's pairs whose weighted word overlap is at least ``threshold``."""
    facts = _facts(conn, slot, now)
    words = {seq: _words(fact) for seq, fact in facts.items()}
    df: dict[str, int] = defaultdict(int)
    for found in words.values():
        for word in found:
            df[word] += 1
    n = len(facts)
    idf = {word: math.log(1 + (n - d + 0.5) / (d + 0.5)) for word, d in df.items()}
    postings: dict[str, list[int]] = defaultdict(list)
    for seq, found in words.items():
        for word in found:
            if df[word] <= max(2, COMMON * n):
                postings[word].append(seq)
    seen: set[tuple[int, int]] = set()
    pairs = []
    for seqs in postings.values():
        for i, a in enumerate(seqs):
            for b in seqs[i + 1 :]:
                if (a, b) in seen:
                    continue
                seen.add((a, b))
                shared = sum(idf[w] for w in words[a] & words[b])
                smaller = min(sum(idf[w] for w in words[a]), sum(idf[w] for w in words[b]))
                similarity = shared / smaller if smaller else 0.0
                if similarity >= threshold:
                    pairs.append(_pair(slot, facts[a], facts[b], similarity, "lexical"))
    return pairs


def by_vectors(
    conn, slot: str, threshold: float, *, now: int, vectors: StoredVectors
) -> list[Pair]:
    """The slot's pairs whose vectors' cosine similarity is at least ``threshold``."""
    facts = _facts(conn, slot, now)
    seen: set[tuple[int, int]] = set()
    pairs = []
    for seq, blob in vectors.stored(list(facts)).items():
        for other, distance in vectors.knn(blob, [slot], NEIGHBOURS + 1):
            pair = (min(seq, other), max(seq, other))
            if other == seq or other not in facts or pair in seen:
                continue
            seen.add(pair)
            similarity = 1.0 - distance
            if similarity >= threshold:
                pairs.append(_pair(slot, facts[seq], facts[other], similarity, "vector"))
    return pairs


def _facts(conn, slot: str, now: int) -> dict[int, Fact]:
    rows = conn.execute(
        "SELECT * FROM memory_facts WHERE slot = ? AND (expires_at IS NULL OR expires_at > ?)",
        (slot, now),
    )
    return {row["seq"]: Fact.from_row(row) for row in rows}


def _words(fact: Fact) -> frozenset[str]:
    text = _KEY_SPLIT.sub(" ", fact.key) + " " + fact.value
    parsed = text_terms.parse(text, MAX_TERMS)
    return frozenset([stem(word) for word in parsed.words] + list(parsed.grams))


def _pair(slot: str, a: Fact, b: Fact, similarity: float, method: str) -> Pair:
    newer: Callable[[Fact], tuple] = lambda fact: (fact.updated_at, fact.created_at, fact.id)
    keep, drop = (a, b) if newer(a) >= newer(b) else (b, a)
    return Pair(slot, keep, drop, round(similarity, 4), method)
