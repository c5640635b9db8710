"""Keys spelled two ways: facts of one slot whose keys have one form (``Owner`` and ``owner``:
slotmem.validation.key_form). No write makes them any more (migrations/0013_key_forms.py); a file
written before may hold them, each still read by its exact key. ``slotmem doctor`` lists them."""

from __future__ import annotations

from .health import check_row

SHOWN = 5  # groups named in the doctor's row


def same_keys(conn) -> list[tuple[str, list[str]]]:
    """(slot, keys) for each form more than one key of a slot has, keys oldest first."""
    groups = conn.execute(
        """SELECT slot, key_form FROM memory_facts GROUP BY slot, key_form
           HAVING count(*) > 1 ORDER BY slot, key_form"""
    ).fetchall()
    return [
        (
            slot,
            [
                key
                for (key,) in conn.execute(
                    "SELECT key FROM memory_facts WHERE slot = ? AND key_form = ? ORDER BY seq",
                    (slot, form),
                )
            ],
        )
        for slot, form in groups
    ]


def check(conn) -> dict:
    """The doctor's row: keys spelled two ways, if any."""
    groups = same_keys(conn)
    shown = "; ".join(
        f"{slot}/" + ", ".join(repr(k) for k in keys) for slot, keys in groups[:SHOWN]
    )
    more = f" and {len(groups) - SHOWN} more" if len(groups) > SHOWN else ""
    return check_row(
        "one spelling per key",
        not groups,
        f"{len(groups)} key(s) spelled more than one way: {shown}{more}" if groups else "ok",
        "keep one spelling of each: 'slotmem forget SLOT/KEY' the others (a write to any "
        "spelling goes to the oldest)",
    )
