"""A fact as the terms FTS5 indexes for it, so that PostgreSQL scores what the file scores.

The file's word index tokenizes key, value and slot tag with ``porter unicode61
remove_diacritics 2``. Rather than re-implement that tokenizer, a fact is run through FTS5
itself: an in-memory SQLite table with the same tokenizer (and ``detail=full``, whose
``fts5vocab`` instance table lists every token), one per thread. What comes out is exact by
construction: the distinct terms, each term's occurrences in key and in value, and the row's
length in tokens (all three columns: FTS5's bm25 counts the slot tag's token too)."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..storage import db

TOKENIZE = "porter unicode61 remove_diacritics 2"  # migrations/0008's word index
_local = threading.local()


@dataclass(frozen=True)
class Document:
    terms: list[str]  # distinct, sorted
    freqs: dict[str, list[int]]  # term -> [in key, in value], for those not [0, 1]
    length: int  # tokens in key, value and slot tag


def slot_tag(slot: str) -> str:
    """The slot's token as the file indexes it (migrations/0004: 'slot' || lower(hex(slot)) || 'x')."""
    return "slot" + slot.encode().hex() + "x"


def _conn():
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = db.driver.connect(":memory:", check_same_thread=False)
        conn.execute(
            f"CREATE VIRTUAL TABLE t USING fts5(key, value, slot_tag, tokenize='{TOKENIZE}')"
        )
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        _local.conn = conn
    return conn


def documents(facts: list[tuple[str, str, str]]) -> list[Document]:
    """(slot, key, value) -> Document, in order."""
    if not facts:
        return []
    conn = _conn()
    conn.execute("BEGIN")
    try:
        conn.executemany(
            "INSERT INTO t (rowid, key, value, slot_tag) VALUES (?, ?, ?, ?)",
            [(i + 1, key, value, slot_tag(slot)) for i, (slot, key, value) in enumerate(facts)],
        )
        counts: list[dict[str, list[int]]] = [{} for _ in facts]
        lengths = [0] * len(facts)
        found = conn.execute("SELECT doc, term, col, count(*) FROM v GROUP BY doc, term, col")
        for doc, term, col, n in found:
            lengths[doc - 1] += n
            if col != "slot_tag":
                counts[doc - 1].setdefault(term, [0, 0])[0 if col == "key" else 1] += n
    finally:
        conn.execute("ROLLBACK")  # the table stays empty
    out = []
    for (slot, _, _), held, length in zip(facts, counts, lengths):
        terms = sorted({*held, slot_tag(slot)})
        freqs = {term: kv for term, kv in held.items() if kv != [0, 1]}
        out.append(Document(terms, freqs, length))
    return out
