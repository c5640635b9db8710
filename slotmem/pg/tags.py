"""Fact tags on PostgreSQL (``memory_fact_tags``, migrations/0002_tags.sql): the SQL of
slotmem.storage.tags in PostgreSQL's words. Tags are checked before they get here
(slotmem.validation.tags)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from ..errors import InvalidInput
from ..records import Fact
from ..validation import MAX_TAGS


def attach(conn, facts: list[Fact]) -> list[Fact]:
    """``facts`` with their tags read (one query)."""
    if not facts:
        return facts
    rows = conn.execute(
        """SELECT f.id, t.tag FROM memory_facts f JOIN memory_fact_tags t ON t.fact_seq = f.seq
           WHERE f.id = ANY(%s) ORDER BY f.id, t.tag""",
        ([fact.id for fact in facts],),
    )
    found: dict[str, list[str]] = {}
    for row in rows:
        found.setdefault(row["id"], []).append(row["tag"])
    return [dataclasses.replace(fact, tags=tuple(found.get(fact.id, ()))) for fact in facts]


def of_seq(conn, seq: int) -> tuple[str, ...]:
    rows = conn.execute(
        "SELECT tag FROM memory_fact_tags WHERE fact_seq = %s ORDER BY tag", (seq,)
    ).fetchall()
    return tuple(row["tag"] for row in rows)


def replace(conn, seq: int, tags: Iterable[str]) -> None:
    conn.execute("DELETE FROM memory_fact_tags WHERE fact_seq = %s", (seq,))
    add(conn, seq, tags)


def add(conn, seq: int, tags: Iterable[str]) -> None:
    """``tags`` added to the fact ``seq``; more than MAX_TAGS in all is refused (InvalidInput;
    the caller's transaction rolls back)."""
    conn.execute(
        """INSERT INTO memory_fact_tags (fact_seq, tag) SELECT %s, tag FROM unnest(%s::text[]) tag
           ON CONFLICT DO NOTHING""",
        (seq, list(tags)),
    )
    count = conn.execute(
        "SELECT count(*) AS n FROM memory_fact_tags WHERE fact_seq = %s", (seq,)
    ).fetchone()["n"]
    if count > MAX_TAGS:
        raise InvalidInput(f"a fact has at most {MAX_TAGS} tags; this would give it {count}")


def remove(conn, seq: int, tags: Iterable[str]) -> None:
    conn.execute(
        "DELETE FROM memory_fact_tags WHERE fact_seq = %s AND tag = ANY(%s)", (seq, list(tags))
    )


def filter_sql(tags: Sequence[str], params: dict | list, column: str = "seq") -> list[str]:
    """Tests that the fact row's ``column`` has every one of ``tags`` (named ``%(tagN)s``
    parameters with a dict, ``%s`` with a list)."""
    tests = []
    for i, tag in enumerate(tags):
        if isinstance(params, dict):
            params[f"tag{i}"] = tag
            mark = f"%(tag{i})s"
        else:
            params.append(tag)
            mark = "%s"
        tests.append(f"{column} IN (SELECT fact_seq FROM memory_fact_tags WHERE tag = {mark})")
    return tests
