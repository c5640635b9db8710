"""The SQL of links between facts (``memory_fact_links`` and ``memory_link_history``,
migrations/0018_links.py): adding and removing one, reading a fact's links in both directions
with the fact at the other end, and the history of removed links. Everything is checked before
it gets here (slotmem.validation.rel)."""

from __future__ import annotations

from ..records import FACT_COLUMNS, Fact
from ..reports import Link, LinkHistoryEntry
from . import rows

_F = ", ".join(f"f.{name} AS f_{name}" for name in FACT_COLUMNS)
_T = ", ".join(f"t.{name} AS t_{name}" for name in FACT_COLUMNS)
_LINKS_SQL = f"""
SELECT l.rel, l.created_at AS l_created_at, l.source AS l_source, {_F}, {_T}
FROM memory_fact_links l
JOIN memory_facts f ON f.seq = l.from_seq
JOIN memory_facts t ON t.seq = l.to_seq
WHERE {{where}} AND {rows.live(":now").replace("expires_at", "f.expires_at")}
  AND {rows.live(":now").replace("expires_at", "t.expires_at")}
ORDER BY {{order}}
"""


def add(conn, from_seq: int, rel: str, to_seq: int, now: int, source: str | None) -> bool:
    """Inside the caller's transaction: the link, unless it is there (False: it was)."""
    cursor = conn.execute(
        """INSERT OR IGNORE INTO memory_fact_links (from_seq, rel, to_seq, created_at, source)
           VALUES (?, ?, ?, ?, ?)""",
        (from_seq, rel, to_seq, now, source),
    )
    return cursor.rowcount > 0


def remove(conn, from_seq: int, rel: str, to_seq: int, now: int, by: str | None) -> bool:
    """Inside the caller's transaction: the link into history (reason ``unlink``) and out of
    the table; False when there was no such link."""
    conn.execute(
        """INSERT INTO memory_link_history
               (from_slot, from_key, rel, to_slot, to_key, created_at, source, removed_at,
                reason, removed_by)
           SELECT f.slot, f.key, l.rel, t.slot, t.key, l.created_at, l.source, ?, 'unlink', ?
           FROM memory_fact_links l
           JOIN memory_facts f ON f.seq = l.from_seq
           JOIN memory_facts t ON t.seq = l.to_seq
           WHERE l.from_seq = ? AND l.rel = ? AND l.to_seq = ?""",
        (now, by, from_seq, rel, to_seq),
    )
    cursor = conn.execute(
        "DELETE FROM memory_fact_links WHERE from_seq = ? AND rel = ? AND to_seq = ?",
        (from_seq, rel, to_seq),
    )
    return cursor.rowcount > 0


def _link(row) -> Link:
    def fact(prefix: str) -> Fact:
        return Fact(*(row[f"{prefix}_{name}"] for name in FACT_COLUMNS))

    return Link(fact("f"), row["rel"], fact("t"), row["l_created_at"], row["l_source"])


def of_seqs(conn, seqs: list[int], now: int) -> list[Link]:
    """The live links from or to the facts ``seqs`` (both ends unexpired): outgoing ones
    first, then incoming, each group in the order made. Each link once."""
    found: dict[tuple, Link] = {}
    for start in range(0, len(seqs), 400):
        part = seqs[start : start + 400]
        names = {f"s{i}": seq for i, seq in enumerate(part)}
        marks = ", ".join(f":{name}" for name in names)
        for column in ("from_seq", "to_seq"):
            sql = _LINKS_SQL.format(
                where=f"l.{column} IN ({marks})", order="l.created_at, l.rel, f.seq, t.seq"
            )
            for row in conn.execute(sql, {**names, "now": now}):
                link = _link(row)
                found.setdefault((link.from_fact.id, link.rel, link.to_fact.id), link)
    return list(found.values())


def history(conn, slot: str | None = None, key: str | None = None) -> list[LinkHistoryEntry]:
    """Removed links, oldest first: all, or those from or to slot/key."""
    where = ""
    params: tuple = ()
    if slot is not None and key is not None:
        where = "WHERE (from_slot = ? AND from_key = ?) OR (to_slot = ? AND to_key = ?)"
        params = (slot, key, slot, key)
    names = ", ".join(
        ("from_slot", "from_key", "rel", "to_slot", "to_key", "created_at", "source")
        + ("removed_at", "reason", "removed_by")
    )
    found = conn.execute(f"SELECT {names} FROM memory_link_history {where} ORDER BY hid", params)
    return [LinkHistoryEntry(*row) for row in found]


def all_rows(conn, slot: str | None = None):
    """Every link as (from slot, from key, rel, to slot, to key, created_at, source), in the
    order made (an export; ``slot``: those with both ends in that slot)."""
    where, params = ("WHERE f.slot = ? AND t.slot = ?", (slot, slot)) if slot else ("", ())
    return conn.execute(
        f"""SELECT f.slot, f.key, l.rel, t.slot, t.key, l.created_at, l.source
            FROM memory_fact_links l
            JOIN memory_facts f ON f.seq = l.from_seq
            JOIN memory_facts t ON t.seq = l.to_seq
            {where} ORDER BY l.created_at, f.seq, l.rel, t.seq""",
        params,
    )
