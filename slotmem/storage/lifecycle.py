"""Bringing facts back and folding them together: restore a value from history, undo what one
flush wrote, merge two facts into one.

Each runs inside the caller's write transaction (or, with ``dry_run``, only reads), archives
every value it replaces (so each of these can itself be undone from history), and is handed
what it needs: a connection, the time, and ``forget(seqs)`` to drop facts from the vector index.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable

from .. import validation
from ..errors import InvalidInput
from ..records import Fact
from ..reports import Change, ChangeReport, HistoryEntry
from . import rows

Forget = Callable[[list[int]], None]


def find_entry(conn, slot: str, key: str, version: int | None) -> HistoryEntry:
    """The history entry ``version`` of slot/key (None: the newest)."""
    return pick_entry(rows.history(conn, slot=slot, key=key), slot, key, version)


def pick_entry(
    entries: list[HistoryEntry], slot: str, key: str, version: int | None
) -> HistoryEntry:
    """Among slot/key's history ``entries`` (newest first), ``version`` (None: the newest)."""
    if not entries:
        raise InvalidInput(f"{slot}/{key} has no history: there is nothing to restore")
    for entry in entries:
        if version is None or entry.version == version:
            return entry
    raise InvalidInput(
        f"{slot}/{key} has no version {version}: its versions are 1 to {entries[0].version} "
        f"('slotmem history {slot} {key}' lists them)"
    )


def restore(conn, entry: HistoryEntry, *, now: int, by: str) -> tuple[Fact, Fact | None]:
    """``entry``'s value back as its slot/key's current one: (the fact now, the fact it
    replaced or None). The replaced fact goes to history (reason ``restore``). A fact that is
    gone comes back with its id, creation time, access counts and pin; an expiry already
    passed is dropped, so that what is restored is seen. ``updated_at`` is now: the restore is
    the latest change, and a restored fact is not pruned again at once."""
    row = _row(conn, entry.slot, entry.key)
    if row is None:
        fact = revived(entry, _id_taken(conn, entry.fact_id), now)
        rows.insert(conn, fact)
        return fact, None
    old = Fact.from_row(row)
    rows.archive(conn, row["seq"], "restore", now, by)
    fact = with_value(old, entry, now)
    rows.overwrite(conn, row["seq"], fact)
    return fact, old


def revived(entry: HistoryEntry, id_taken: bool, now: int) -> Fact:
    """A fact that is gone, as ``entry`` brings it back: its id (a new one when ``id_taken``),
    creation time, access counts and pin; changed now."""
    return Fact(
        entry.fact_id if not id_taken else secrets.token_hex(8),
        entry.slot,
        entry.key,
        entry.value,
        entry.confidence,
        entry.quality,
        entry.source,
        entry.created_at,
        now,
        entry.last_accessed,
        entry.access_count,
        pinned_at=entry.pinned_at,
        protected_at=entry.protected_at,
        expires_at=_still(entry.expires_at, now),
    )


def with_value(fact: Fact, entry: HistoryEntry, now: int) -> Fact:
    """``fact`` holding ``entry``'s value again (its confidence, source and expiry), changed now."""
    return dataclasses.replace(
        fact,
        value=entry.value,
        confidence=entry.confidence,
        source=entry.source,
        updated_at=now,
        expires_at=_still(entry.expires_at, now),
    )


def _still(expires_at: int | None, now: int) -> int | None:
    """An expiry that has not passed (one that has is dropped: what is brought back is seen)."""
    return expires_at if expires_at is not None and expires_at > now else None


def flush_source(source: str) -> Callable[[str | None], bool]:
    """Does a fact's ``source`` say it was written by a flush of ``source`` (a transcript name
    such as ``chat.json``, or a whole provenance ``flush:chat.json|model:...|prompt:...``)?"""
    prefix = f"flush:{source}|"
    return lambda text: text is not None and (text == source or text.startswith(prefix))


def undo_flush(
    conn, source: str, *, now: int, dry_run: bool, forget: Forget
) -> tuple[ChangeReport, list[Fact]]:
    """Revert every fact whose current value a flush of ``source`` wrote: to the value it had
    before (``reverted``), or away when the flush created it (``deleted``). Facts it wrote that
    were changed since are ``kept``, and so are those a person protected: one the flush created
    (a person's fact now: 'slotmem forget' removes it) and one protected after the flush wrote
    it (the person vouched for that value). Returns the report and the facts whose value
    changed."""
    matches = flush_source(source)
    by = f"undo-flush:{source}"
    report, written, seen = ChangeReport(dry_run=dry_run), [], set()
    prefix = f"flush:{source}|"
    found = conn.execute(
        "SELECT * FROM memory_facts WHERE source = ? OR substr(source, 1, ?) = ? ORDER BY seq",
        (source, len(prefix), prefix),
    ).fetchall()
    for row in found:
        fact = Fact.from_row(row)
        seen.add((fact.slot, fact.key))
        entries = rows.history(conn, slot=fact.slot, key=fact.key, fact_id=fact.id)
        before = next((e for e in entries if not matches(e.source)), None)
        if fact.protected_at is not None and (
            before is None or fact.protected_at >= fact.updated_at
        ):
            note = "protected by a person since the flush wrote it"
            report.changes.append(Change("kept", fact.slot, fact.key, fact.value, None, note))
            continue
        if before is None:
            report.changes.append(Change("deleted", fact.slot, fact.key, None, fact.value))
            if not dry_run:
                rows.remove(conn, [row["seq"]], "undo", now, by, forget)
            continue
        restored = with_value(fact, before, now)
        report.changes.append(Change("reverted", fact.slot, fact.key, before.value, fact.value))
        written.append(restored)
        if not dry_run:
            rows.archive(conn, row["seq"], "undo", now, by)
            rows.overwrite(conn, row["seq"], restored)
    changed = conn.execute(
        """SELECT DISTINCT h.slot, h.key, f.value, f.source FROM memory_fact_history h
           JOIN memory_facts f ON f.id = h.fact_id
           WHERE (h.source = ? OR substr(h.source, 1, ?) = ?) ORDER BY h.hid""",
        (source, len(prefix), prefix),
    ).fetchall()
    for slot, key, value, now_from in changed:
        if (slot, key) not in seen:
            seen.add((slot, key))
            note = f"changed since the flush (now from {now_from})"
            report.changes.append(Change("kept", slot, key, value, None, note))
    return report, written


def merge(conn, keep: Fact, drop: Fact, *, now: int, forget: Forget) -> Fact:
    """Fold ``drop`` into ``keep`` (same slot): ``keep``'s value stays; it gains ``drop``'s
    accesses, pin, protection, tags (up to MAX_TAGS in all) and links (``drop``'s own are
    kept in the links' history, reason ``deleted``), and ``drop``'s history (its last value
    included, reason ``merge``) is copied under ``keep``'s key. ``drop``'s own history stays under its key."""
    drop_seq, keep_seq = _seq(conn, drop), _seq(conn, keep)
    conn.execute(  # keep gains drop's tags, as many as fit beside its own (MAX_TAGS)
        """INSERT OR IGNORE INTO memory_fact_tags (fact_seq, tag)
           SELECT :keep, tag FROM memory_fact_tags
           WHERE fact_seq = :drop AND tag NOT IN (
               SELECT tag FROM memory_fact_tags WHERE fact_seq = :keep)
           ORDER BY tag
           LIMIT max(0, :most - (SELECT count(*) FROM memory_fact_tags WHERE fact_seq = :keep))""",
        {"keep": keep_seq, "drop": drop_seq, "most": validation.MAX_TAGS},
    )
    for start, end in (("?", "to_seq"), ("from_seq", "?")):  # drop's links, now keep's
        conn.execute(
            f"""INSERT OR IGNORE INTO memory_fact_links (from_seq, rel, to_seq, created_at, source)
                SELECT {start}, rel, {end}, created_at, source FROM memory_fact_links
                WHERE {"from_seq" if start == "?" else "to_seq"} = ?
                  AND {"to_seq" if start == "?" else "from_seq"} NOT IN (?, ?)""",
            (keep_seq, drop_seq, keep_seq, drop_seq),
        )
    rows.remove(conn, [drop_seq], "merge", now, f"dedupe:{keep.slot}/{keep.key}", forget)
    fields = [name for name in rows.HISTORY_FIELDS if name not in ("slot", "key")]
    conn.execute(
        f"""INSERT INTO memory_fact_history (slot, key, {", ".join(fields)})
            SELECT ?, ?, {", ".join(fields)} FROM memory_fact_history
            WHERE slot = ? AND key = ? ORDER BY hid""",
        (keep.slot, keep.key, drop.slot, drop.key),
    )
    merged = dataclasses.replace(
        keep,
        access_count=keep.access_count + drop.access_count,
        last_accessed=max(keep.last_accessed, drop.last_accessed),
        pinned_at=keep.pinned_at if keep.pinned_at is not None else drop.pinned_at,
        protected_at=keep.protected_at if keep.protected_at is not None else drop.protected_at,
    )
    rows.overwrite(conn, keep_seq, merged)
    return merged


def _row(conn, slot: str, key: str):
    return conn.execute(
        "SELECT * FROM memory_facts WHERE slot = ? AND key = ?", (slot, key)
    ).fetchone()


def _seq(conn, fact: Fact) -> int:
    row = conn.execute("SELECT seq FROM memory_facts WHERE id = ?", (fact.id,)).fetchone()
    if row is None:
        raise InvalidInput(f"{fact.slot}/{fact.key} is no longer in the file")
    return row[0]


def _id_taken(conn, fact_id: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM memory_facts WHERE id = ?", (fact_id,)).fetchone() is not None
    )
