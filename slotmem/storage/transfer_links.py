"""Links between facts in an export (slotmem.storage.transfer): one ``link`` record per live
link, ``{"type": "link", "from_slot", "from_key", "rel", "to_slot", "to_key", "created_at",
"source"}``, after the facts, counted in the end marker as every record is. An export made
before links has none and imports as before.

On import a link's two facts must be in the file or already in this memory (else the line is
refused and nothing is imported); a link already there is left as it is, in every mode. A
file that is not this memory's own export (``keeps_protected``) adds no link from a protected
fact, as it changes none."""

from __future__ import annotations

from collections.abc import Iterator

from .. import validation
from ..errors import InvalidInput
from . import links as fact_links
from . import transfer_episodes

KIND = "link"
FIELDS = ("from_slot", "from_key", "rel", "to_slot", "to_key", "created_at", "source")


def export(conn, slot: str | None) -> Iterator[dict]:
    """The link records of ``slot`` (both ends in it; None: of the whole file), oldest first."""
    for row in fact_links.all_rows(conn, slot):
        yield {"type": KIND, **dict(zip(FIELDS, row))}


def parse(record: dict, now: int) -> tuple:
    """A link record, checked: (from_slot, from_key, rel, to_slot, to_key, created_at,
    source); raises InvalidInput naming the field."""
    transfer_episodes.check_fields(record, FIELDS, FIELDS[:5])
    created = record.get("created_at", now)
    if isinstance(created, bool) or not isinstance(created, int) or created < 0:
        raise InvalidInput(f"created_at must be milliseconds since the epoch, not {created!r}")
    source = record.get("source")
    return (
        validation.slot(record["from_slot"]),
        validation.key(record["from_key"]),
        validation.rel(record["rel"]),
        validation.slot(record["to_slot"]),
        validation.key(record["to_key"]),
        created,
        validation.source(source),
    )


def apply(
    conn, links: list[tuple[int, tuple]], in_file: set, dry_run: bool, keep_protected: bool
) -> int:
    """Add the file's links (``in_file``: the (slot, key) of the file's facts, there after a
    dry run too); returns how many are new. A link whose fact is nowhere raises InvalidInput
    naming its line (the caller's transaction rolls back)."""
    added = 0
    for number, (from_slot, from_key, rel, to_slot, to_key, created, source) in links:
        ends = []
        for slot, key in ((from_slot, from_key), (to_slot, to_key)):
            row = conn.execute(
                "SELECT seq, protected_at FROM memory_facts WHERE slot = ? AND key = ?",
                (slot, key),
            ).fetchone()
            if row is None and (slot, key) not in in_file:
                raise InvalidInput(
                    f"line {number}: no fact {slot}/{key} to link; nothing was imported"
                )
            ends.append(row)
        start, end = ends
        if start is None or end is None:  # a dry run: the file's fact is not written
            added += 1
            continue
        if keep_protected and start["protected_at"] is not None:
            continue
        there = conn.execute(
            "SELECT 1 FROM memory_fact_links WHERE from_seq = ? AND rel = ? AND to_seq = ?",
            (start["seq"], rel, end["seq"]),
        ).fetchone()
        if there is None:
            added += 1
            if not dry_run:
                fact_links.add(conn, start["seq"], rel, end["seq"], created, source)
    return added
