"""Which terms a search runs, looked up in the indexes' vocabularies (``fts5vocab``).

A term's document frequency (df) decides three things. A term no fact contains is dropped (it
cannot match). A very common term (in more than 5% of the facts, and more than 1,000 of them)
is dropped, unless fewer than ``FLOOR`` terms would remain (then the ``FLOOR`` rarest stay): it
says little and costs a scan of its postings. And the postings scored per search stay within
``POSTINGS_BUDGET``: terms are taken rarest first, and a term beyond the budget only has its
newest postings scored (``cap``), so a search made only of common words still answers, in
bounded time (with numpy, ``common.py`` scores such a question over every posting of every word
instead: ``Plan.every``). A hybrid search plans within the smaller ``HYBRID_BUDGET``: its semantic leg
brings candidates too, so the lexical leg needs fewer postings to find its share.

Word terms are looked up by their porter stem (what the index stores); a CJK bigram is looked
up as the prefix of the trigrams that start with it (the trigram index pads each text with two
spaces, so every character starts a trigram) and matches any of them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from dataclasses import dataclass

from .stemmer import stem
from .terms import Terms, quote

WORDS = "memory_facts_fts"
CJK = "memory_facts_cjk"
VOCAB = {WORDS: "memory_facts_vocab", CJK: "memory_facts_cjk_vocab"}
COMMON_FRACTION = 0.05
COMMON_MIN = 1_000
FLOOR = 4
POSTINGS_BUDGET = 8_000
HYBRID_BUDGET = 500  # in a hybrid search the semantic leg brings candidates as well
# ... unless its search by words alone, which it runs too, keeps every posting of every word
# and they number at most this: then its leg runs that plan, and both are one statement
# (lexical.search_both). At 1M facts a rare-word question's hybrid search took 0.80-0.88 of
# the time; at 100k nothing moved; 8,000 cost sentences across slots 1.28x (docs/benchmarks.md)
SHARED_BUDGET = 2_000
MAX_EXPANSIONS = 64  # trigrams one CJK gram may expand to (the most frequent are kept)


@dataclass(frozen=True)
class Arm:
    """One term of a search: what it matches, in which index, how often, how far it is scored."""

    term: str
    table: str
    match: str
    df: int
    cap: int | None = None  # score only the newest `cap` postings (None: all)


@dataclass(frozen=True)
class Plan:
    arms: tuple[Arm, ...]
    facts: int  # rows in the word index: the N of idf
    dropped: tuple[str, ...] = ()  # terms left out as too common
    every: tuple[Arm, ...] = ()  # every term some fact holds, uncapped (common.py scores them)

    def __bool__(self) -> bool:
        return bool(self.arms)


def plan(conn, terms: Terms, budget: int | None = None, freqs: DocFreqs | None = None) -> Plan:
    """Look the terms up and choose the arms to run (no arms: nothing can match) within
    ``budget`` postings (default ``POSTINGS_BUDGET``). ``freqs`` remembers word dfs between
    searches (a Store keeps one)."""
    freqs = freqs or DocFreqs()
    if not terms.grams:  # N and the words' dfs in one statement: one snapshot, no BEGIN
        stems = {word: stem(word) for word in terms.words}
        read = freqs.read(conn, set(stems.values()))
        if read is not None:
            facts, found = read
            arms = [Arm(word, WORDS, quote(word), found[stems[word]]) for word in terms.words]
            return choose(arms, facts, budget)
    with snapshot(conn):
        facts = indexed_rows(conn, WORDS)
        arms = _word_arms(conn, terms.words, freqs) + _gram_arms(conn, terms.grams)
    return choose(arms, facts, budget)


def choose(arms: list[Arm], facts: int, budget: int | None = None) -> Plan:
    """The plan among ``arms`` (each with its df, of ``facts`` facts): terms no fact holds
    left out, too common ones dropped, the rest within ``budget`` postings. Any storage that
    knows its dfs plans with it (slotmem.pg.search)."""
    arms = [arm for arm in arms if arm.df]
    chosen = _budget(_prune(arms, facts), budget or POSTINGS_BUDGET)
    kept = {arm.term for arm in chosen}
    dropped = tuple(arm.term for arm in arms if arm.term not in kept)
    return Plan(tuple(chosen), facts, dropped, tuple(arms))


def shareable(chosen: Plan) -> bool:
    """Whether a hybrid search's leg runs ``chosen``, its search by words alone's plan, in
    place of its own budgeted one: no word dropped or capped, at most ``SHARED_BUDGET``
    postings in all."""
    if chosen.dropped or any(arm.cap is not None for arm in chosen.arms):
        return False
    return sum(arm.df for arm in chosen.arms) <= SHARED_BUDGET


@contextlib.contextmanager
def snapshot(conn):
    """One read transaction around the lookups: N and every df then describe the same state of
    the index. Read in separate statements while another process writes, a df could exceed N."""
    if conn.in_transaction:  # the caller's transaction is a snapshot already
        yield
        return
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")  # it only read


def _word_arms(conn, words, freqs: DocFreqs) -> list[Arm]:
    stems = {word: stem(word) for word in words}
    found = freqs.lookup(conn, set(stems.values()))
    return [Arm(word, WORDS, quote(word), found[stems[word]]) for word in words]


def _gram_arms(conn, grams) -> list[Arm]:
    arms, facts = [], indexed_rows(conn, CJK) if grams else 0
    for gram in grams:
        upper = gram[:-1] + chr(ord(gram[-1]) + 1)
        rows = conn.execute(
            f"SELECT term, doc FROM {VOCAB[CJK]} WHERE term >= ? AND term < ? "
            "ORDER BY doc DESC LIMIT +?",
            (gram, upper, MAX_EXPANSIONS),
        ).fetchall()
        if rows:
            match = " OR ".join(sorted(quote(term) for term, _ in rows))
            df = min(facts, sum(doc for _, doc in rows))  # a fact may hold several expansions
            arms.append(Arm(gram, CJK, match, df))
    return arms


class DocFreqs:
    """Word dfs from fts5vocab, remembered while the word index stays as it is.

    fts5vocab counts a term's postings on every lookup, so a question of common words would pay
    a scan of each word's postings before searching. FTS5 rewrites its
    structure record (``_data`` row 10) with every change to the index, so that record keys
    the memo: a write by any process starts it afresh (access counts do not touch the index).
    """

    MAX_TERMS = 20_000

    def __init__(self):
        self._memo: tuple[bytes | None, dict[str, int]] = (None, {})
        self.postings: object | None = None  # common.Postings, made by the first search needing it
        self.weights: object | None = None  # weights.Weights, the same way

    def read(self, conn, terms) -> tuple[int, dict[str, int]] | None:
        """(N, {term: df}) as ``indexed_rows`` and ``lookup`` give them, read in one statement
        (one snapshot of the index, as in ``snapshot``, without a transaction around it: a
        rare-word search's plan cost 4 statements, BEGIN and ROLLBACK among them); the
        structure record read with them says whether the remembered dfs still hold. None when
        the index changed twice meanwhile or its averages record is empty (then ``plan``
        looks them up in a transaction, as before)."""
        terms = set(terms)
        state, known = self._memo
        for _ in range(2):
            unknown = [term for term in terms if term not in known]
            row = conn.execute(_read_sql(len(unknown)), unknown).fetchone()
            seen = None if row[0] is None else bytes(row[0])
            if seen != state and not known:  # nothing remembered: all were read
                state = seen
                self._memo = (state, known)
            if seen == state and len(known) <= self.MAX_TERMS:
                if not row[1]:
                    return None
                known.update(zip(unknown, (df or 0 for df in row[2:])))
                return varint(bytes(row[1])), {term: known[term] for term in terms}
            state, known = seen, {}
            self._memo = (state, known)  # each search keeps the memo of the state it saw
        return None

    def lookup(self, conn, terms) -> dict[str, int]:
        """{term: number of facts holding it (0 when none)}."""
        row = conn.execute(f"SELECT block FROM {WORDS}_data WHERE id = 10").fetchone()
        state = bytes(row[0]) if row else None
        memo = self._memo
        if memo[0] != state or len(memo[1]) > self.MAX_TERMS:
            memo = self._memo = (state, {})  # each search keeps the memo of the state it saw
        known = memo[1]
        for term in terms:
            if term not in known:  # one equality lookup: fts5vocab seeks straight to the term
                found = conn.execute(
                    f"SELECT doc FROM {VOCAB[WORDS]} WHERE term = ?", (term,)
                ).fetchone()
                known[term] = found[0] if found else 0
        return {term: known[term] for term in terms}


@functools.lru_cache(maxsize=32)
def _read_sql(unknown: int) -> str:
    """``DocFreqs.read``'s statement: the structure record, the averages record, then the df
    of each of ``unknown`` terms (NULL when no fact holds it)."""
    data = f"(SELECT block FROM {WORDS}_data WHERE id = "
    df = f"(SELECT doc FROM {VOCAB[WORDS]} WHERE term = ?)"
    return f"SELECT {', '.join([data + '10)', data + '1)'] + [df] * unknown)}"


def _prune(arms: list[Arm], facts: int) -> list[Arm]:
    if len(arms) <= FLOOR:  # all of them, however common (the FLOOR rarest stay)
        return arms
    common = max(COMMON_FRACTION * facts, COMMON_MIN)
    kept = [arm for arm in arms if arm.df <= common]
    if len(kept) < FLOOR:
        rarest = sorted(arms, key=lambda arm: arm.df)[:FLOOR]
        kept = [arm for arm in arms if arm in rarest]
    return kept


def _budget(arms: list[Arm], budget: int) -> list[Arm]:
    """Rarest first: a term fits in what is left of the budget, or is capped to it, or (when
    less than a quarter is left) is left out. The rarest term always runs."""
    left, caps = budget, dict[str, int | None]()
    for arm in sorted(arms, key=lambda arm: arm.df):
        if arm.df <= left:
            caps[arm.term] = None
        elif not caps or left >= budget // 4:
            caps[arm.term] = left
        else:
            break
        left -= arm.df
    return [
        arm if arm.cap == caps[arm.term] else dataclasses.replace(arm, cap=caps[arm.term])
        for arm in arms
        if arm.term in caps
    ]


def slot_tag(slot: str) -> str:
    """The token the word index holds for a fact's slot (migrations/0004_slot_tags.py)."""
    return quote("slot" + slot.encode().hex() + "x")


def indexed_rows(conn, table: str) -> int:
    """Rows in an FTS5 index, from its averages record (O(1); count(*) would scan)."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    if row and row[0]:
        return varint(bytes(row[0]))
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def varint(data: bytes) -> int:
    """SQLite's varint: 7 bits per byte, high bit set on all but the last (the 9th has 8)."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value
