"""Slots of another slotmem file, through the Store's own export and import (one format, one set
of checks: slotmem.storage.transfer): the other file is opened read-only and exported slot by
slot, and each export is imported as ``slotmem import`` imports a file."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ... import validation
from ...reports import ChangeReport
from .common import ImportFileError


def import_slots(
    store,
    other: str | os.PathLike,
    slots=None,
    *,
    mode: str = "merge",
    dry_run: bool = False,
) -> ChangeReport:
    """Import ``slots`` (None: every slot) of the slotmem file ``other`` into ``store``, each
    with its facts, history, feedback and policy (``mode``: merge, replace or skip-existing, as
    Store.import_records). Every slot is checked before any is written; each is then imported
    in its own transaction."""
    from ...store import Store

    other = Path(other)
    if other.exists() and Path(store.path).exists() and other.samefile(store.path):
        raise ImportFileError(f"{other} is the memory being imported into")
    if isinstance(slots, str):
        slots = [s.strip() for s in slots.split(",")]
    names = None if slots is None else list(dict.fromkeys(validation.slot(s) for s in slots))
    if names == []:
        raise ImportFileError("give at least one slot to import")
    with Store(other, readonly=True) as source:
        if names is not None:
            present = set(source.slots()) | {p.slot for p in source.policies()}
            absent = [n for n in names if n not in present]
            if absent:
                raise ImportFileError(
                    f"{other} has no slot {', '.join(absent)} "
                    f"(it has {', '.join(sorted(present)) or 'none'}); nothing was imported"
                )
        chosen: list[str | None] = list(names) if names is not None else [None]
        exports = [
            (slot, [json.dumps(record) for record in source.export(slot)]) for slot in chosen
        ]
    label = other.name
    for slot, lines in exports:  # every slot checked before any is written
        store.import_records(lines, mode=mode, dry_run=True, name=_name(label, slot))
    report = ChangeReport(dry_run=dry_run)
    for slot, lines in exports:
        done = store.import_records(lines, mode=mode, dry_run=dry_run, name=_name(label, slot))
        report.changes += done.changes
        for kind, n in done.records.items():
            report.records[kind] = report.records.get(kind, 0) + n
    return report


def _name(label: str, slot: str | None) -> str:
    return f"{label} (slot {slot})" if slot else label
