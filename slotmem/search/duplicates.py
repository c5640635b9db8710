"""Near-duplicate facts: pairs of facts of one slot that say the same thing under two keys.

The candidates are, when the file has semantic search on, each fact's ``NEIGHBOURS`` nearest
facts in its slot by their stored vectors; else the pairs that share a word few of the slot's
facts hold. Each candidate is measured three ways, over its words (the stems of key and value,
each weighted by its idf in the slot, read as if the slot held at least ``MIN_FACTS`` facts):

- cosine   = the cosine similarity of the two facts' vectors (the vector method only);
- overlap  = the weight of the words they share / the weight of the smaller fact's words;
- conflict = for each fact, the rarest word it has that the other lacks (its idf over that of
             a word only one fact holds, so 1 = no other fact says it); the smaller of the two.
             "Marta lives in Porto." and "Jonas lives in Porto." each name someone the other
             does not: they are about two people. "Current phase of Vertex: design." and
             "Vertex is in design." differ in words a whole family of facts is phrased with,
             and "Drinks a flat white at the Corner Cafe." holds all that "Has a flat white."
             says: when one of the two adds nothing specific, they can be one fact.

and scored

    score = σ(a + b × cosine + c × overlap + d × conflict)        σ(x) = 1 / (1 + e^-x)

an estimate of the chance that the pair is a duplicate, with one set of constants for each
method (b = 0 for the lexical one). The constants are a logistic regression on the candidates of
memories whose seeded duplicates are of the development half of ``benchmarks/dedupe.py``'s
families, and the thresholds (``THRESHOLDS``, what ``--threshold`` replaces) the lowest scores
at which those memories hold at most one false pair per 500 facts: ``benchmarks/fit_dedupe.py``
fits both. The vector constants are those of the default embedding model (all-MiniLM-L6-v2):
another model's cosines are on another scale. docs/benchmarks.md has the held-out figures.

A pair at or above the threshold is reported with the newer fact as the one to keep.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from ..records import Fact
from ..reports import Change, ChangeReport
from . import terms as text_terms
from .relevance import sigmoid
from .stemmer import stem

# (a, b, c, d) of the score: intercept, cosine, overlap, conflict. Fitted by
# benchmarks/fit_dedupe.py, as are the thresholds.
VECTOR = (-11.58, 23.23, 4.52, -18.1)
LEXICAL = (8.16, 9.24, -26.94)  # (a, c, d): no cosine
THRESHOLDS = {"vector": 0.3, "lexical": 0.2}
NEIGHBOURS = 10  # nearest facts compared with each fact (vector)
MAX_TERMS = 64  # words of a fact compared
COMMON = 0.05  # a word in more than this share of the slot's facts proposes no pair (lexical)
MIN_FACTS = 100  # below this many facts in a slot, idf reads as if there were this many
_KEY_SPLIT = re.compile(r"[._\-]+")


@dataclass(frozen=True)
class Pair:
    slot: str
    keep: Fact  # the newer of the two
    drop: Fact
    similarity: float  # the score
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


@dataclass(frozen=True)
class Candidate:
    """Two facts of one slot and what the score reads of them."""

    a: Fact
    b: Fact
    overlap: float
    conflict: float
    cosine: float | None = None  # None: the lexical method

    def score(self) -> float:
        if self.cosine is None:
            a, c, d = LEXICAL
            x = a + c * self.overlap + d * self.conflict
        else:
            a, b, c, d = VECTOR
            x = a + b * self.cosine + c * self.overlap + d * self.conflict
        return sigmoid(x)


class StoredVectors(Protocol):
    """What the vector method needs of the file's vectors (slotmem.vectors.Semantic has it)."""

    def stored(self, seqs: list[int]) -> dict[int, bytes]: ...

    def knn(self, blob: bytes, slots: list[str] | None, k: int) -> list[tuple[int, float]]: ...


def by_words(conn, slot: str, threshold: float, *, now: int) -> list[Pair]:
    """The slot's pairs found by words whose score is at least ``threshold``."""
    return _pairs(slot, candidates(conn, slot, now=now), threshold, "lexical")


def by_words_of(slot: str, facts: dict[int, Fact], threshold: float) -> list[Pair]:
    """by_words over ``facts`` (seq -> live Fact of ``slot``), read by the caller (a memory on
    PostgreSQL reads them in its own SQL)."""
    return _pairs(slot, candidates_of(slot, facts), threshold, "lexical")


def by_vectors_of(
    slot: str, facts: dict[int, Fact], threshold: float, *, vectors: StoredVectors
) -> list[Pair]:
    """by_vectors over ``facts`` (seq -> live Fact of ``slot``), read by the caller, and
    ``vectors`` (a memory on PostgreSQL: its pgvector leg, slotmem.pg.vectors)."""
    return _pairs(slot, candidates_of(slot, facts, vectors), threshold, "vector")


def by_vectors(
    conn, slot: str, threshold: float, *, now: int, vectors: StoredVectors
) -> list[Pair]:
    """The slot's pairs found by vectors whose score is at least ``threshold``."""
    return _pairs(slot, candidates(conn, slot, now=now, vectors=vectors), threshold, "vector")


def candidates(
    conn, slot: str, *, now: int, vectors: StoredVectors | None = None
) -> list[Candidate]:
    """The slot's candidate pairs, measured: nearest neighbours when ``vectors`` is given,
    else pairs that share an uncommon word."""
    return candidates_of(slot, _facts(conn, slot, now), vectors)


def candidates_of(
    slot: str, facts: dict[int, Fact], vectors: StoredVectors | None = None
) -> list[Candidate]:
    """candidates over ``facts`` (seq -> live Fact of ``slot``), read by the caller."""
    words = _Words(facts)
    if vectors is None:
        return [words.measure(a, b) for a, b in words.pairs()]
    found: dict[tuple[int, int], float] = {}
    for seq, blob in vectors.stored(list(facts)).items():
        for other, distance in vectors.knn(blob, [slot], NEIGHBOURS + 1):
            if other != seq and other in facts:
                found.setdefault((min(seq, other), max(seq, other)), 1.0 - distance)
    return [words.measure(a, b, cosine) for (a, b), cosine in found.items()]


class _Words:
    """The words of a slot's facts and their weights."""

    def __init__(self, facts: dict[int, Fact]):
        self.facts = facts
        self.of = {seq: _words(fact) for seq, fact in facts.items()}
        self.df: dict[str, int] = defaultdict(int)
        for found in self.of.values():
            for word in found:
                self.df[word] += 1
        self.n = len(facts)
        self.scale = max(self.n, MIN_FACTS)
        self.top = self.idf(1)  # a word only one fact holds

    def idf(self, df: int) -> float:
        return math.log(1 + (self.scale - df + 0.5) / (df + 0.5))

    def mass(self, words: Iterable[str]) -> float:
        return sum(self.idf(self.df[word]) for word in words)

    def pairs(self) -> set[tuple[int, int]]:
        """The pairs that share a word at most ``COMMON`` of the facts hold."""
        postings: dict[str, list[int]] = defaultdict(list)
        for seq, found in self.of.items():
            for word in found:
                if self.df[word] <= max(2, COMMON * self.n):
                    postings[word].append(seq)
        return {
            (a, b) for seqs in postings.values() for i, a in enumerate(seqs) for b in seqs[i + 1 :]
        }

    def measure(self, a: int, b: int, cosine: float | None = None) -> Candidate:
        """The candidate of the facts whose rowids are ``a`` and ``b``."""
        words_a, words_b = self.of[a], self.of[b]
        smaller = min(self.mass(words_a), self.mass(words_b))
        overlap = self.mass(words_a & words_b) / smaller if smaller else 0.0
        conflict = min(self._rarest(words_a - words_b), self._rarest(words_b - words_a))
        return Candidate(self.facts[a], self.facts[b], overlap, conflict / self.top, cosine)

    def _rarest(self, words: frozenset[str]) -> float:
        return self.idf(min(self.df[word] for word in words)) if words else 0.0


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


def _pairs(slot: str, found: list[Candidate], threshold: float, method: str) -> list[Pair]:
    newer: Callable[[Fact], tuple] = lambda fact: (fact.updated_at, fact.created_at, fact.id)
    pairs = []
    for candidate in found:
        score = candidate.score()
        if score >= threshold:
            a, b = candidate.a, candidate.b
            keep, drop = (a, b) if newer(a) >= newer(b) else (b, a)
            pairs.append(Pair(slot, keep, drop, round(score, 4), method))
    return pairs


def merge_pairs(
    pairs: Iterable, report: ChangeReport, fresh: Callable | None = None, merge=None
) -> None:
    """Each pair's dropped fact merged into the one it keeps, in order, into ``report``; a
    pair whose fact an earlier merge took is passed over. A real run (both backends' dedupe)
    gives ``fresh(pair)``, the pair read again inside its transaction (None: passed over, a
    person protected or changed a fact since), and ``merge(keep, drop)``; a dry run neither."""
    gone: set[str] = set()
    for pair in pairs:
        if pair.keep.id in gone or pair.drop.id in gone:
            continue
        if fresh is not None:
            pair = fresh(pair)
            if pair is None:
                continue
        gone.add(pair.drop.id)
        note = f"merged into {pair.keep.key} ({pair.method} score {pair.similarity:.2f})"
        report.changes.append(
            Change("merged", pair.slot, pair.drop.key, pair.keep.value, pair.drop.value, note)
        )
        if merge is not None:
            merge(pair.keep, pair.drop)
