"""The SQL that writes fact rows and their history: shared by the Store and the storage modules
that restore, import and merge facts, so that every path archives a row the same way."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from itertools import chain
from typing import TYPE_CHECKING

from .. import validation
from ..errors import InvalidInput
from ..records import FACT_COLUMNS, Fact
from . import db

if TYPE_CHECKING:
    from ..reports import HistoryEntry

UPSERT_SQL = """
INSERT INTO memory_facts
    (id, slot, key, value, confidence, source, created_at, updated_at, last_accessed,
     protected_at, expires_at, key_form)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (slot, key) DO UPDATE SET
    value = excluded.value, confidence = excluded.confidence, source = excluded.source,
    updated_at = excluded.updated_at, expires_at = excluded.expires_at,
    protected_at = coalesce(memory_facts.protected_at, excluded.protected_at)
"""
ROW_PLACES = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"  # one row of UPSERT_SQL's parameters
ROW_WIDTH = ROW_PLACES.count("?")
# Rows per multi-row UPSERT (upsert_rows): SQLite's 32,766 bound parameters since 3.32 allow
# 2,730; fewer when the library allows fewer (999 before 3.32: 83).
MOST_ROWS = 2048
FEWEST_ROWS = 999 // ROW_WIDTH  # what any SQLite allows (a build may lower the default limit)
# History keeps every column of the fact as it was (reason, when and by whom beside them).
KEPT = ", ".join(name for name in FACT_COLUMNS if name != "id")
ARCHIVE_SQL = f"""
INSERT INTO memory_fact_history (fact_id, {KEPT}, reason, changed_at, changed_by)
SELECT id, {KEPT}, ?, ?, ? FROM memory_facts WHERE seq = ?
"""
INSERT_SQL = (
    f"INSERT INTO memory_facts ({', '.join(FACT_COLUMNS)}, key_form) "
    f"VALUES ({', '.join('?' * (len(FACT_COLUMNS) + 1))})"
)
# Keys of one form (validation.key_form) are one key: see migrations/0013_key_forms.py.
SAME_KEY_SQL = "SELECT * FROM memory_facts WHERE slot = ? AND key_form = ? ORDER BY seq LIMIT 1"
OVERWRITE_SQL = (
    f"UPDATE memory_facts SET {', '.join(f'{name} = ?' for name in FACT_COLUMNS)} WHERE seq = ?"
)
# HistoryEntry's fields but its version, in order (tests/test_imports.py compares them)
HISTORY_FIELDS = (
    "fact_id", "slot", "key", "value", "confidence", "quality", "source", "reason", "changed_at",
    "changed_by", "created_at", "updated_at", "last_accessed", "access_count", "pinned_at",
    "protected_at", "expires_at",
)  # fmt: skip
INSERT_HISTORY_SQL = (
    f"INSERT INTO memory_fact_history ({', '.join(HISTORY_FIELDS)}) "
    f"VALUES ({', '.join('?' * len(HISTORY_FIELDS))})"
)
LIVE = "(expires_at IS NULL OR expires_at > {now})"  # a fact not expired at {now}


def live(now: str = ":now") -> str:
    """The SQL test of a fact that has not expired (``now``: a parameter or a value)."""
    return LIVE.format(now=now)


def upsert_rows(conn, rows: Sequence[tuple], most: int | None = None) -> None:
    """``conn.executemany(UPSERT_SQL, rows)``, written as few statements of many rows each
    (``INSERT ... VALUES (...), (...), ... ON CONFLICT ...``): the same rows, triggers and
    conflicts, in the same order.

    Why: a statement that writes an FTS5 table through a trigger runs inside a statement
    savepoint, and FTS5 writes the words it holds in memory to the index at every savepoint, so
    each row of an ``executemany`` became a segment of its own that FTS5 then merged with the
    others (most of a bulk load's time: docs/benchmarks.md). One statement of many rows writes
    one segment per statement. ``most``: rows per statement (default: as many as SQLite's
    bound-parameter limit allows, at most MOST_ROWS); the statements come in a few sizes
    (``most``, an eighth of it, ..., one row), so few of them fill the connection's cache."""
    most = most or _most_rows(conn)
    start, count = 0, len(rows)
    while count - start > 1:
        size = most
        while size > count - start:
            size = max(size // 8, 1)
        if size == 1:
            break
        end = start + size * ((count - start) // size)
        for part in range(start, end, size):
            params = list(chain.from_iterable(rows[part : part + size]))
            try:
                conn.execute(_upsert_sql(size), params)
            except db.OperationalError as e:  # refused before it ran: nothing of it written
                if size <= FEWEST_ROWS or "too many SQL variables" not in str(e):
                    raise
                # a library built with a lower limit than its version's default, where the
                # driver cannot read the limit (Python 3.10: no getlimit)
                upsert_rows(conn, rows[part:], FEWEST_ROWS)
                return
        start = end
    if start < count:
        conn.executemany(UPSERT_SQL, rows[start:])


def _most_rows(conn) -> int:
    """Rows per multi-row UPSERT: SQLite's bound-parameter limit over a row's (``getlimit``
    where the driver has it; else what the library's version allows by default)."""
    getlimit = getattr(conn, "getlimit", None)
    if getlimit is not None and hasattr(db.driver, "SQLITE_LIMIT_VARIABLE_NUMBER"):
        limit = getlimit(db.driver.SQLITE_LIMIT_VARIABLE_NUMBER)
    else:
        limit = 32766 if db.driver.sqlite_version_info >= (3, 32, 0) else 999
    return max(1, min(MOST_ROWS, limit // ROW_WIDTH))  # (a lower limit: upsert_rows retries)


@functools.lru_cache(maxsize=16)
def _upsert_sql(size: int) -> str:
    """UPSERT_SQL with ``size`` rows of parameters."""
    return UPSERT_SQL.replace(ROW_PLACES, ", ".join([ROW_PLACES] * size))


def slot_names(conn) -> list[str]:
    """Every slot that holds a fact (expired ones too), in order: one index seek per slot."""
    found = conn.execute(
        """WITH RECURSIVE s(slot) AS (
               SELECT min(slot) FROM memory_facts
               UNION ALL
               SELECT (SELECT min(slot) FROM memory_facts WHERE slot > s.slot) FROM s
               WHERE s.slot IS NOT NULL)
           SELECT slot FROM s WHERE slot IS NOT NULL"""
    )
    return [slot for (slot,) in found]


def archive(conn, seq: int, reason: str, now: int, by: str | None) -> None:
    """Copy the fact ``seq`` into history as it is now, with why, when and by whom."""
    conn.execute(ARCHIVE_SQL, (reason, now, by, seq))


def remove(
    conn,
    seqs: list[int],
    reason: str,
    now: int,
    by: str | None,
    forget: Callable[[list[int]], None],
) -> None:
    """Inside the caller's transaction: the facts ``seqs`` into history (as ``archive``), out
    of the vector index (``forget(seqs)``) and out of the table."""
    conn.executemany(ARCHIVE_SQL, [(reason, now, by, seq) for seq in seqs])
    forget(seqs)
    conn.executemany("DELETE FROM memory_facts WHERE seq = ?", [(seq,) for seq in seqs])


def insert(conn, fact: Fact) -> None:
    """A whole fact row, every column as given (a restored or imported fact). A key that is
    another fact's key in a look-alike spelling (``Owner`` beside ``owner``) is refused."""
    form = validation.key_form(fact.key)
    clash = conn.execute(SAME_KEY_SQL, (fact.slot, form)).fetchone()
    if clash is not None and clash["key"] != fact.key:
        raise InvalidInput(look_alike(fact.slot, fact.key, clash["key"]))
    conn.execute(INSERT_SQL, [*(getattr(fact, name) for name in FACT_COLUMNS), form])


def look_alike(slot: str, key: str, existing: str) -> str:
    return (
        f"{slot}/{key!r} is the key {slot}/{existing!r} spelled another way (keys that differ "
        f"only in case, width, accents, invisible characters, look-alike letters, '_' or "
        f"'-' for a space, or punctuation at an end are one key): use "
        f"{existing!r}"
    )


def overwrite(conn, seq: int, fact: Fact) -> None:
    """Every column of the row ``seq`` set to ``fact``'s (the old row archived first)."""
    conn.execute(OVERWRITE_SQL, [*(getattr(fact, name) for name in FACT_COLUMNS), seq])


def entry(fact: Fact, reason: str, changed_at: int, by: str | None) -> HistoryEntry:
    """``fact`` as a history entry: as it was before a change made at ``changed_at``."""
    from ..reports import HistoryEntry

    kept = {name: getattr(fact, name) for name in FACT_COLUMNS if name != "id"}
    return HistoryEntry(
        fact_id=fact.id, reason=reason, changed_at=changed_at, changed_by=by, **kept
    )


def insert_history(conn, entries: list[HistoryEntry]) -> None:
    conn.executemany(
        INSERT_HISTORY_SQL, [[getattr(e, name) for name in HISTORY_FIELDS] for e in entries]
    )


def history(
    conn,
    *,
    slot: str | None = None,
    key: str | None = None,
    since: int | None = None,
    until: int | None = None,
    reasons: tuple[str, ...] = (),
    fact_id: str | None = None,
    limit: int | None = None,
) -> list[HistoryEntry]:
    """History entries, newest first, each with its version (1 = the oldest of its slot/key)."""
    from ..reports import HistoryEntry

    tests: list[str] = []
    params: list = []
    for column, value in (("slot", slot), ("key", key), ("fact_id", fact_id)):
        if value is not None:
            tests.append(f"h.{column} = ?")
            params.append(value)
    if since is not None:
        tests.append("h.changed_at >= ?")
        params.append(since)
    if until is not None:
        tests.append("h.changed_at < ?")
        params.append(until)
    if reasons:
        tests.append(f"h.reason IN ({', '.join('?' * len(reasons))})")
        params.extend(reasons)
    where = f"WHERE {' AND '.join(tests)}" if tests else ""
    sql = f"""SELECT {", ".join(f"h.{name}" for name in HISTORY_FIELDS)},
                     (SELECT count(*) FROM memory_fact_history v
                      WHERE v.slot = h.slot AND v.key = h.key AND v.hid <= h.hid) AS version
              FROM memory_fact_history h {where} ORDER BY h.hid DESC"""
    if limit is not None:
        sql += " LIMIT +?"
        params.append(limit)
    return [HistoryEntry(*row) for row in conn.execute(sql, params)]
