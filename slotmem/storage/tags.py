"""The SQL of fact tags (``memory_fact_tags``, migrations/0017_tags.py): reading a batch of
facts' tags in one query, replacing, adding and removing a fact's tags, and the test a filter
puts in a statement. Tags are checked before they get here (slotmem.validation.tags)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import InvalidInput, protected_error
from ..records import Fact
from ..validation import MAX_TAGS

if TYPE_CHECKING:
    from ..reports import UpsertResult

CHUNK = 500  # ids per query: under SQLite's parameter limit on every build
PROTECTED = "protected"  # an upsert's action (and guard) for a protected fact left as it was


def retagged(
    result: UpsertResult, tags: tuple[str, ...] | None, before: tuple[str, ...], guard=False
) -> tuple[tuple[str, ...] | None, UpsertResult]:
    """What an upsert does to its fact's tags, on either backend: the tags to write (None: they
    stay ``before``) and the result, its facts carrying their tags. ``tags`` None keeps them; a
    protected fact's tags are the person's: with ``guard`` an agent's change of them is refused
    (ProtectedFact) or, with ``guard=PROTECTED``, left out."""
    keep = result.action == PROTECTED or tags is None or set(tags) == set(before)
    if not keep and guard and result.fact.protected and result.action == "unchanged":
        if guard != PROTECTED:
            raise protected_error(result.fact.slot, result.fact.key, "retag")
        keep = True
    final = before if keep else tuple(tags or ())
    previous = result.previous
    if previous is not None:
        previous = dataclasses.replace(previous, tags=before)
    fact = dataclasses.replace(result.fact, tags=tuple(sorted(final)))
    return (None if keep else final), dataclasses.replace(result, fact=fact, previous=previous)


def of_ids(conn, ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The tags of the facts ``ids`` (only those that have some), sorted: one query per
    CHUNK ids."""
    found: dict[str, list[str]] = {}
    for start in range(0, len(ids), CHUNK):
        part = list(ids[start : start + CHUNK])
        marks = ", ".join("?" * len(part))
        rows = conn.execute(
            f"""SELECT f.id, t.tag FROM memory_facts f
                JOIN memory_fact_tags t ON t.fact_seq = f.seq
                WHERE f.id IN ({marks}) ORDER BY f.id, t.tag""",
            part,
        )
        for fact_id, tag in rows:
            found.setdefault(fact_id, []).append(tag)
    return {fact_id: tuple(tags) for fact_id, tags in found.items()}


def attach(conn, facts: list[Fact]) -> list[Fact]:
    """``facts`` with their tags read (one query per CHUNK facts)."""
    if not facts:
        return facts
    found = of_ids(conn, [fact.id for fact in facts])
    # only a fact whose tags differ is made anew (most have none, as read from their row):
    # dataclasses.replace costs more than the tags' query itself
    tagged = []
    for fact in facts:
        tags = found.get(fact.id, ())
        tagged.append(fact if fact.tags == tags else dataclasses.replace(fact, tags=tags))
    return tagged


def of_seq(conn, seq: int) -> tuple[str, ...]:
    rows = conn.execute("SELECT tag FROM memory_fact_tags WHERE fact_seq = ? ORDER BY tag", (seq,))
    return tuple(tag for (tag,) in rows)


def replace(conn, seq: int, tags: Iterable[str]) -> None:
    """Inside the caller's transaction: the fact ``seq``'s tags become ``tags``."""
    conn.execute("DELETE FROM memory_fact_tags WHERE fact_seq = ?", (seq,))
    add(conn, seq, tags)


def add(conn, seq: int, tags: Iterable[str]) -> None:
    """Inside the caller's transaction: ``tags`` added to the fact ``seq`` (those it has stay);
    more than MAX_TAGS in all is refused (InvalidInput; the caller's transaction rolls back)."""
    conn.executemany(
        "INSERT OR IGNORE INTO memory_fact_tags (fact_seq, tag) VALUES (?, ?)",
        [(seq, tag) for tag in tags],
    )
    (count,) = conn.execute(
        "SELECT count(*) FROM memory_fact_tags WHERE fact_seq = ?", (seq,)
    ).fetchone()
    if count > MAX_TAGS:
        raise InvalidInput(f"a fact has at most {MAX_TAGS} tags; this would give it {count}")


def remove(conn, seq: int, tags: Iterable[str]) -> None:
    conn.executemany(
        "DELETE FROM memory_fact_tags WHERE fact_seq = ? AND tag = ?", [(seq, tag) for tag in tags]
    )


def filter_sql(tags: Sequence[str], params: dict | list, column: str = "seq") -> list[str]:
    """SQL tests that the fact row's ``column`` (its seq) has every one of ``tags``: each an
    IN over the (tag, fact_seq) index, so a rare tag is read from the index, not found by a
    scan. ``params``: a dict (named ``:tagN`` parameters) or a list (``?``), added to."""
    tests = []
    for i, tag in enumerate(tags):
        if isinstance(params, dict):
            name = f"tag{i}"
            params[name] = tag
            mark = f":{name}"
        else:
            params.append(tag)
            mark = "?"
        tests.append(f"{column} IN (SELECT fact_seq FROM memory_fact_tags WHERE tag = {mark})")
    return tests
