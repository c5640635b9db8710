"""Retention: keep each slot under its cap without losing what is used, and remove what expired.

- **Expired facts** (``expires_at`` passed) go first, whatever the cap, pinned or not: they are
  no longer returned by anything, so keeping them would only hide them (history reason
  ``expired``).
- **Over the cap**, when a slot holds more than ``cap`` live facts, the excess is deleted among
  the facts that were neither accessed nor updated for ``min_age_days`` and were accessed fewer
  than ``min_access_count`` times, least used and oldest first. Recent or often used facts are
  never pruned, even if the slot stays over its cap, and neither are pinned facts.
- **Protected facts** (a person wrote or protected them) are never pruned over the cap, whatever
  their rating, age or use: an agent may rate a fact, and a rating must not let it delete what a
  person wrote. ``include_protected=True`` (``slotmem prune --include-protected``) is how a
  person asks for them to be pruned like the others. An expired protected fact is removed: its
  expiry was set by whoever wrote it, and agents cannot change a protected fact's expiry.
- **Facts rated badly** (quality <= ``LOW_QUALITY`` from ``slotmem rate``) are prunable whatever
  their age and use, and go first: a wrong fact keeps being read because it keeps matching.

Every removal is kept in history (reason ``prune`` or ``expired``). A slot without a policy of
its own follows the file's default policy (``DEFAULT_POLICY`` until ``set_default``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..records import Fact, SlotPolicy
from . import rows

if TYPE_CHECKING:
    from ..reports import PruneReport

DAY_MS = 86_400_000
LOW_QUALITY = -2
DEFAULT_DESCRIPTION = "the policy of every slot without one"
DEFAULT_POLICY = SlotPolicy("*", 500, 30, 3, DEFAULT_DESCRIPTION)
DEFAULT_SETTING = "default_policy"  # in memory_settings, as JSON


def prune_slot(
    conn,
    slot: str,
    cap: int,
    min_age_days: float,
    min_access_count: int,
    *,
    now: int,
    dry_run: bool,
    forget: Callable[[list[int]], None],
    include_protected: bool = False,
) -> PruneReport:
    """Runs inside the caller's write transaction. ``forget(seqs)`` drops what other indexes
    (vectors) hold of the facts removed; ``include_protected``: protected facts may go too."""
    expired = conn.execute(
        "SELECT * FROM memory_facts WHERE slot = ? AND expires_at <= ? ORDER BY expires_at, seq",
        (slot, now),
    ).fetchall()
    count = conn.execute(
        f"SELECT count(*) FROM memory_facts WHERE slot = ? AND {rows.live('?')}", (slot, now)
    ).fetchone()[0]
    from ..reports import PruneReport

    report = PruneReport(slot=slot, count=count, cap=cap, dry_run=dry_run)
    report.expired = [Fact.from_row(row) for row in expired]
    prunable = []
    excess = count - cap
    if excess > 0:
        cutoff = now - int(min_age_days * DAY_MS)
        prunable = conn.execute(
            f"""SELECT * FROM memory_facts
               WHERE slot = ? AND pinned_at IS NULL AND {rows.live("?")}
                 AND (protected_at IS NULL OR ?)
                 AND (quality <= ? OR (max(last_accessed, updated_at) < ? AND access_count < ?))
               ORDER BY min(quality, 0), access_count, last_accessed, seq LIMIT +?""",
            (slot, now, include_protected, LOW_QUALITY, cutoff, min_access_count, excess),
        ).fetchall()
        report.removed = [Fact.from_row(row) for row in prunable]
        report.protected = excess - len(prunable)
    if not dry_run:
        rows.remove(conn, [row["seq"] for row in expired], "expired", now, "prune", forget)
        rows.remove(conn, [row["seq"] for row in prunable], "prune", now, "prune", forget)
    return report


def has_default(conn) -> bool:
    """Was the default policy set in this file (else DEFAULT_POLICY applies)?"""
    row = conn.execute("SELECT 1 FROM memory_settings WHERE name = ?", (DEFAULT_SETTING,))
    return row.fetchone() is not None


def default_policy(conn) -> SlotPolicy:
    """The policy of every slot that has none of its own."""
    row = conn.execute("SELECT value FROM memory_settings WHERE name = ?", (DEFAULT_SETTING,))
    found = row.fetchone()
    if found is None:
        return DEFAULT_POLICY
    import json  # here: only a file with a default policy of its own holds one

    saved = json.loads(found[0])
    return SlotPolicy(
        "*", saved["cap"], saved["min_age_days"], saved["min_access_count"], DEFAULT_DESCRIPTION
    )


def set_default(conn, policy: SlotPolicy) -> None:
    """Inside the caller's transaction: ``policy`` becomes the default policy."""
    import json

    value = json.dumps(
        {
            "cap": policy.cap,
            "min_age_days": policy.min_age_days,
            "min_access_count": policy.min_access_count,
        }
    )
    conn.execute(
        "INSERT INTO memory_settings VALUES (?, ?) "
        "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        (DEFAULT_SETTING, value),
    )
