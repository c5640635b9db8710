"""Common-word questions scored over every posting, in numpy.

The plan (``plan.py``) keeps a search of common words within a postings budget by dropping the
words in more than 5% of the facts and scoring only the newest postings of the rest, so such a
question's best facts are mostly never looked at: at 100k facts the top 10 held 0.09 of the top
10 over every posting (docs/benchmarks.md). Here, when the plan dropped or capped a word, every
word of the question is scored over all its postings instead, in two steps:

1. **Candidates.** Each word's postings (the fact seqs that hold it) are kept in memory as a
   numpy array (``Postings``); a fact's presence score is the sum over the words it holds of
   ``idf^1.5 + coordination`` (what ``lexical.py`` scores with tf = 1), added up over the facts
   the postings hold (``held``: not over an array of every seq, which at 1M facts cost a
   sentence question 15 ms of its 21), and the ``CANDIDATES`` best are kept (of the asked
   slots: a slot's facts are the postings of its tag, ``plan.slot_tag``).
2. **Exact scores.** For those facts only, each matched word's bm25 term frequency is counted
   from the fact's text (``terms.py``'s tokenizer and FTS5's porter stemmer, the length from
   FTS5's ``_docsize``) and the rows go to ``lexical.py``'s statement in place of the FTS5
   arms: confidence, feedback, recency, filters and order are today's.

FTS5 itself cannot do step 2 cheaply: bm25 on a ``detail=none`` index re-reads every matched
row, and restricting an arm to a few hundred rowids makes FTS5 seek each one (milliseconds).

The postings in memory are keyed by the word index's structure record (``_data`` row 10, which
FTS5 rewrites with every change, by any process; see ``plan.DocFreqs``): after a change, a word
is read again on its next use (about 20 ms CPU for a word in a quarter of 1M facts; checking the
old postings against the index, to append only the new ones, cost nearly as much). At most
``MAX_BYTES`` are kept, the least recently used words let go first; a question whose postings
would not fit is planned as before. Inside a transaction (whose writes may roll back and leave
the structure record as it was) the search is planned as before.

numpy is optional (the ``semantic`` and ``ui`` extras): without it, or with ``ENABLED`` off, the
plan's budget applies as before.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from . import plan as planning
from . import relevance
from .stemmer import stem
from .terms import tokens

ENABLED = True
CANDIDATES = 300  # facts scored exactly per search (recall 0.99 at 100k, docs/benchmarks.md)
MAX_BYTES = 64 << 20  # postings kept in memory, per Store
K1, B = 1.2, 0.75  # FTS5's bm25 constants


@functools.cache
def numpy() -> Any:
    """numpy, or None when it is not installed."""
    try:
        import numpy as np
    except ImportError:
        return None
    return np


def available() -> bool:
    return ENABLED and numpy() is not None


def applies(chosen: planning.Plan | None) -> bool:
    """Whether the plan left words out or capped them (a common-word question) and every term
    is a word (CJK grams are planned as before)."""
    if not chosen or not (chosen.dropped or any(arm.cap is not None for arm in chosen.arms)):
        return False  # numpy is imported only when needed (a lexical `context` never is)
    return all(arm.table == planning.WORDS for arm in chosen.every) and available()


@dataclass
class _Entry:
    seqs: Any  # sorted numpy int32 (or int64) array
    state: bytes | None  # the word index's structure record when it was read


class Postings:
    """Words' postings in memory, fresh against the word index (see the module's docstring)."""

    def __init__(self, max_bytes: int | None = None):
        self.max_bytes = MAX_BYTES if max_bytes is None else max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def nbytes(self) -> int:
        return sum(entry.seqs.nbytes for entry in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def cached(self, match: str, state: bytes | None) -> Any:
        """The seqs ``get`` would return, when they are in memory as of ``state`` (None: not;
        nothing is read)."""
        with self._lock:
            entry = self._entries.get(match)
        return entry.seqs if entry is not None and entry.state == state else None

    def get(self, conn, match: str, state: bytes | None) -> Any:
        """The sorted seqs of the facts the FTS5 query ``match`` finds in the word index, as of
        ``state`` (the structure record read in the same transaction)."""
        with self._lock:
            entry = self._entries.pop(match, None)
        if entry is None or entry.state != state:  # new, or the index changed since
            entry = _read(conn, match, state)
        with self._lock:
            self._entries[match] = entry
            size = self.nbytes
            while size > self.max_bytes and len(self._entries) > 1:
                _, old = self._entries.popitem(last=False)
                size -= old.seqs.nbytes
        return entry.seqs


def postings_of(freqs: planning.DocFreqs | None) -> Postings:
    """The Store's postings in memory (kept beside its document frequencies); a fresh, empty
    one without."""
    if freqs is None:
        return Postings()
    if not isinstance(freqs.postings, Postings):
        freqs.postings = Postings()
    return freqs.postings


def _read(conn, match: str, state: bytes | None) -> _Entry:
    """One word's postings, read in one statement (one string: a row per posting through the
    sqlite3 module would cost several times as much)."""
    np = numpy()
    row = conn.execute(
        f"SELECT group_concat(rowid) FROM {planning.WORDS} WHERE {planning.WORDS} MATCH ?",
        (match,),
    ).fetchone()
    text = row[0] if row else None
    seqs = np.fromstring(text, dtype=np.int64, sep=",") if text else np.zeros(0, dtype=np.int64)
    seqs.sort()  # FTS5 returns rowids in order; cheap to be sure
    if len(seqs) and seqs[-1] < 2**31:
        seqs = seqs.astype(np.int32)  # half the bytes
    return _Entry(seqs, state)


def structure(conn) -> bytes | None:
    """The word index's structure record: it changes with every change to the index."""
    row = conn.execute(f"SELECT block FROM {planning.WORDS}_data WHERE id = 10").fetchone()
    return bytes(row[0]) if row else None


def hits(
    conn,
    chosen: planning.Plan,
    ranking,
    postings: Postings,
    slots: list[str] | None,
    tf: bool = True,
    explain: bool = True,
) -> list[tuple] | None:
    """The rows of ``lexical.py``'s statement (seq, match, mass, matched, specific, parts) for
    the best ``CANDIDATES`` facts by presence over every posting of the plan's ``every`` arms
    (numbered in that order); None when the postings would not fit in memory. Without
    ``explain``, ``parts`` (what only an explanation reads) is empty."""
    np = numpy()
    arms = chosen.every
    if not fits(arms, postings.max_bytes) or len(arms) > 16:  # terms.MAX_TERMS is 16
        return None
    state = structure(conn)
    lists = [postings.get(conn, arm.match, state) for arm in arms]
    tags = [postings.get(conn, planning.slot_tag(slot), state) for slot in slots or ()]
    seqs, bits = held(lists, tags if slots else None)
    if not len(seqs):
        return []
    score = presence(ranking, chosen.facts, arms)[bits]  # each fact's presence score
    found = _best(np, score, CANDIDATES)
    return _rows(conn, chosen, ranking, seqs[found].tolist(), bits[found].tolist(), tf, explain)


def held(lists, tags=None):
    """(seqs, bits): the facts in any of the sorted seq arrays ``lists`` (of one of the sorted
    ``tags`` arrays, a slot's facts, when given), ascending, and for each which lists hold it
    (bit i: ``lists[i]``, at most 16). Over the postings alone: an array over every seq, and
    a choice of the best among a million (np.partition), cost a sentence question at 1M facts
    15 ms of its 21 (docs/benchmarks.md)."""
    np = numpy()
    postings = sum(len(seqs) for seqs in lists)
    if tags is not None and postings * 8 >= sum(len(tagged) for tagged in tags):
        # many postings (a common word): each of the slots' facts looked up in an array over
        # the held seqs
        top = max((int(seqs[-1]) for seqs in lists if len(seqs)), default=-1)
        dense = np.zeros(top + 1, dtype=np.uint16)
        for i, seqs in enumerate(lists):
            dense[seqs] |= np.uint16(1 << i)
        parts = [tagged[: np.searchsorted(tagged, top, side="right")] for tagged in tags]
        seqs = np.unique(np.concatenate([part[dense[part] != 0] for part in parts] or [[]]))
        seqs = seqs.astype(np.int64)
        return seqs, dense[seqs]
    # each posting as one integer (seq, list), sorted: a run of one seq holds its lists
    keys = np.sort(
        np.concatenate([(seqs.astype(np.int64) << 4) | i for i, seqs in enumerate(lists)])
    )
    seqs = keys >> 4
    if not len(seqs):
        return seqs, np.zeros(0, dtype=np.uint16)
    starts = np.flatnonzero(np.concatenate(([True], seqs[1:] != seqs[:-1])))
    marks = (np.uint16(1) << (keys & 15).astype(np.uint16)).astype(np.uint16)
    seqs, bits = seqs[starts], np.bitwise_or.reduceat(marks, starts)
    if tags is not None:  # few postings: each held fact looked up in the slots' facts
        keep = np.zeros(len(seqs), dtype=bool)
        for tagged in tags:
            if len(tagged):
                where = np.minimum(np.searchsorted(tagged, seqs), len(tagged) - 1)
                keep |= tagged[where] == seqs
        seqs, bits = seqs[keep], bits[keep]
    return seqs, bits


def fits(arms, max_bytes: int | None = None) -> bool:
    """Whether the arms' postings fit in ``max_bytes`` (default ``MAX_BYTES``; 4 bytes a
    posting)."""
    return sum(arm.df for arm in arms) * 4 <= (MAX_BYTES if max_bytes is None else max_bytes)


def presence(ranking, facts: int, arms) -> Any:
    """The presence score of a fact by the arms it holds, as a numpy float32 array: entry
    ``bits`` (bit i set: the fact holds ``arms[i]``) is the sum over those arms of
    ``idf^1.5 + coordination`` (PostgreSQL cuts its candidates by the same table,
    slotmem/pg/common.py)."""
    weights = [ranking.idf(facts, arm.df) + ranking.coordination for arm in arms]
    return by_bits(weights).astype(numpy().float32)


def by_bits(weights: list[float]) -> Any:
    """A float64 array whose entry ``bits`` is the sum of the ``weights`` whose bit is set."""
    np = numpy()
    masks = np.arange(1 << len(weights), dtype=np.uint32)
    held = (masks[:, None] >> np.arange(len(weights), dtype=np.uint32)) & 1
    return held @ np.array(weights, dtype=np.float64)


def _best(np, score, k: int):
    """The indexes of the ``k`` highest positive scores; of equal ones at the boundary, the
    highest indexes (the newest facts, as the plan's budget would take)."""
    if len(score) > k:
        bound = np.partition(score, len(score) - k)[len(score) - k]
        if bound > 0:
            above = np.flatnonzero(score > bound)
            tied = np.flatnonzero(score == bound)
            return np.concatenate((above, tied[len(tied) - (k - len(above)) :]))
    return np.flatnonzero(score > 0)


def _rows(
    conn,
    chosen: planning.Plan,
    ranking,
    seqs: list[int],
    bits: list[int],
    tf: bool,
    explain: bool = True,
) -> list[tuple]:
    """Per candidate (``bits``: which arms each of ``seqs`` holds, bit i ``chosen.every[i]``):
    (seq, match, mass, matched, specific, parts), the arms' parts summed as lexical.py's
    statement sums them (``parts``: its explanation, "arm:raw ...")."""
    from .lexical import fts5_idf

    arms = chosen.every
    idfs = [ranking.idf(chosen.facts, arm.df) for arm in arms]
    fts5 = [fts5_idf(chosen.facts, arm.df) for arm in arms]
    masses = [relevance.weight(ranking, chosen.facts, arm.df) for arm in arms]
    specific = [relevance.specificity(arm.term) for arm in arms]
    stems = [stem(arm.term) for arm in arms]
    tf = tf and not ranking.presence
    average = _average_length(conn) if tf else 1.0
    texts = _texts(conn, seqs) if tf else {}
    coordination, key_weight, value_weight = (
        ranking.coordination,
        ranking.key_weight,
        ranking.value_weight,
    )
    out: list[tuple] = []
    for seq, held in zip(seqs, bits):
        if tf:
            key, value, length = texts.get(seq, ("", "", average))
            key_stems, value_stems = _stems(key), _stems(value)
            norm = K1 * (1 - B + B * length / average)
        match = mass = best = 0.0
        matched, parts = 0, []
        for i in range(len(arms)):
            if not held >> i & 1:
                continue
            if tf:
                word = stems[i]
                f = key_weight * key_stems.count(word) + value_weight * value_stems.count(word)
                f = f or 1.0  # FTS5 found the word where the tokenizer here did not
                share = f * (K1 + 1) / (f + norm)
                match += idfs[i] * share + coordination
                if explain:
                    parts.append(f"{i}:{-share * fts5[i]!r}")
            else:
                match += idfs[i] + coordination
                if explain:
                    parts.append(f"{i}:")
            mass += masses[i]
            best = max(best, specific[i])
            matched += 1
        out.append((seq, match, mass, matched, best, " ".join(parts)))
    return out


def _stems(text: str) -> list[str]:
    """The stem of each of ``text``'s tokens, as the index counts them (a candidate holds a few
    of the question's words: counting those in the list costs less than counting every stem)."""
    words = _ASCII_WORD.findall(text.lower()) if text.isascii() else tokens(text)
    memo = _STEMMED
    try:
        return list(map(memo.__getitem__, words))
    except KeyError:  # a word not seen yet (or the memo cleared by another thread meanwhile)
        if len(memo) > STEMS_REMEMBERED:
            memo.clear()
        found = []
        for word in words:
            stemmed = memo.get(word)
            if stemmed is None:
                stemmed = memo[word] = stem(word)
            found.append(stemmed)
        return found


_ASCII_WORD = re.compile(r"[a-z0-9]+")  # terms.tokens on ASCII text, lower-cased already
STEMS_REMEMBERED = 200_000  # token -> stem, for the words of the candidates' texts
_STEMMED: dict[str, str] = {}


def _texts(conn, seqs: list[int]) -> dict[int, tuple[str, str, float]]:
    """seq -> (key, value, the fact's length in tokens over every column, as FTS5 counts)."""
    if not seqs:
        return {}
    marks = ",".join(str(int(seq)) for seq in seqs)
    rows = conn.execute(
        f"SELECT f.seq, f.key, f.value, d.sz FROM memory_facts f "
        f"JOIN {planning.WORDS}_docsize d ON d.id = f.seq WHERE f.seq IN ({marks})"
    ).fetchall()
    return {seq: (key, value, float(_varints_sum(bytes(size)))) for seq, key, value, size in rows}


def _average_length(conn) -> float:
    """FTS5's average row length in tokens (every column), from its averages record."""
    row = conn.execute(f"SELECT block FROM {planning.WORDS}_data WHERE id = 1").fetchone()
    values = _varints(bytes(row[0])) if row and row[0] else []
    if len(values) < 2 or not values[0]:
        return 1.0
    return sum(values[1:]) / values[0]


def _varints(data: bytes) -> list[int]:
    values, i = [], 0
    while i < len(data):
        value, i = _varint_at(data, i)
        values.append(value)
    return values


def _varints_sum(data: bytes) -> int:
    if data.isascii():  # every varint one byte (each below 128): the bytes are the values
        return sum(data)
    return sum(_varints(data))


def _varint_at(data: bytes, i: int) -> tuple[int, int]:
    value = 0
    for n in range(9):
        byte = data[i + n]
        if n == 8:
            return (value << 8) | byte, i + 9
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, i + n + 1
    return value, i + 9  # pragma: no cover
