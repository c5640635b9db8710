"""The naive baseline the benchmarks compare against: every word of the text OR-ed in one FTS5
MATCH, each double-quoted (what slotmem ran before it planned and scored terms one by one)."""

from __future__ import annotations

from slotmem.search.terms import parse, quote


def or_query(text) -> str | None:
    """``"a" OR "b"`` for the word terms of ``text``; None when it has none."""
    return " OR ".join(quote(word) for word in parse(text).words) or None
