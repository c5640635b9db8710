"""Retention: keep each slot under its cap without losing what is used.

When a slot holds more than ``cap`` facts, the excess is deleted among the facts that were
neither accessed nor updated for ``min_age_days`` and were accessed fewer than
``min_access_count`` times, least used and oldest first. Recent or often used facts are never
pruned, even if the slot stays over its cap, and neither are pinned facts. Every removal is kept in
history (reason 'prune').
"""

from __future__ import annotations

from collections.abc import Callable

from ..records import Fact, PruneReport

DAY_MS = 86_400_000


def prune_slot(
    conn,
    slot: str,
    cap: int,
    min_age_days: float,
    min_access_count: int,
    *,
    now: int,
    dry_run: bool,
    archive: Callable[[int, str, int, str], None],
    forget: Callable[[list[int]], None],
) -> PruneReport:
    """Runs inside the caller's write transaction. ``archive(seq, reason, now, by)`` copies a
    fact into history; ``forget(seqs)`` drops what other indexes (vectors) hold of them."""
    count = conn.execute("SELECT count(*) FROM memory_facts WHERE slot = ?", (slot,)).fetchone()[0]
    report = PruneReport(slot=slot, count=count, cap=cap, dry_run=dry_run)
    excess = count - cap
    if excess <= 0:
        return report
    cutoff = now - int(min_age_days * DAY_MS)
    rows = conn.execute(
        """SELECT * FROM memory_facts
           WHERE slot = ? AND max(last_accessed, updated_at) < ? AND access_count < ?
             AND pinned_at IS NULL
           ORDER BY access_count ASC, last_accessed ASC, seq ASC LIMIT ?""",
        (slot, cutoff, min_access_count, excess),
    ).fetchall()
    report.removed = [Fact.from_row(row) for row in rows]
    report.protected = excess - len(rows)
    if not dry_run:
        for row in rows:
            archive(row["seq"], "prune", now, "prune")
        forget([row["seq"] for row in rows])
        conn.executemany("DELETE FROM memory_facts WHERE seq = ?", [(row["seq"],) for row in rows])
    return report
