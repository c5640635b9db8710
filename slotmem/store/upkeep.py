"""Looking after the file: prune, checkpoint and backup; restore a value and undo a flush;
export and import; near-duplicates and dedupe; doctor and repair."""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import validation
from ..errors import InvalidInput
from ..records import Fact
from ..storage import db, litestream, retention, wal
from .core import _translated
from .policies import Policies
from .reads import Reads

# The modules below are imported by the methods that use them: a read (a hook's `slotmem context`)
# loads none of them (tests/test_imports.py).
if TYPE_CHECKING:
    from ..reports import ChangeReport, PruneReport, UpsertResult
    from ..search import duplicates


class Upkeep(Policies, Reads):
    """Upkeep of the file and the life of its facts; prunes by the slots' policies."""

    @contextlib.contextmanager
    def _exclusive(self):
        """The accesses' gate a prune holds (slotmem.storage.access); the lock file beside the
        database failing (a full disk) is a StorageError naming it."""
        with db.os_errors(f"{self.path}-lock"), self._accesses.exclusive():
            yield

    @_translated
    def prune_slot(
        self,
        slot: str,
        *,
        cap: int | None = None,
        min_age_days: float | None = None,
        min_access_count: int | None = None,
        dry_run: bool = False,
        include_protected: bool = False,
    ) -> PruneReport:
        """Remove ``slot``'s expired facts and bring it down towards ``cap``: see
        slotmem.storage.retention. Arguments default to the slot's policy, else the default
        policy. Protected facts stay unless ``include_protected`` (a person asks)."""
        slot = validation.slot(slot)
        policy = self.policy(slot) or self.default_policy()
        cap = policy.cap if cap is None else validation.count(cap, "cap")
        age = (
            policy.min_age_days
            if min_age_days is None
            else validation.non_negative(min_age_days, "min_age_days")
        )
        count = (
            policy.min_access_count
            if min_access_count is None
            else validation.count(min_access_count, "min_access_count")
        )
        gate = contextlib.nullcontext() if dry_run else self._exclusive()
        with gate, self.transaction():
            return retention.prune_slot(
                self.conn,
                slot,
                cap,
                age,
                count,
                now=self.clock(),
                dry_run=dry_run,
                forget=self.semantic.forget,
                include_protected=bool(include_protected),
            )

    @_translated
    def prune(self, *, dry_run: bool = False, include_protected: bool = False) -> list[PruneReport]:
        """Prune every slot (what cron runs): each by its policy, a slot without one by the
        default policy; then checkpoint the WAL. Protected facts stay unless
        ``include_protected``."""
        slots = {p.slot for p in self.policies()}
        slots.update(
            slot for (slot,) in self.conn.execute("SELECT DISTINCT slot FROM memory_facts")
        )
        reports = [
            self.prune_slot(slot, dry_run=dry_run, include_protected=include_protected)
            for slot in sorted(slots)
        ]
        if not dry_run and not self.checkpoint():
            import logging  # here: a read that warns of nothing needs none of it

            logging.getLogger("slotmem").warning(
                "the WAL (%s) could not be checkpointed: a connection keeps an old read "
                "transaction open; 'slotmem doctor' names the processes that have the file open",
                wal.megabytes(wal.size(wal.wal_path(self.path))),
            )
        return reports

    @_translated
    def checkpoint(self) -> bool:
        """Copy the WAL into the database and truncate it. False when a reader's open
        transaction pins it (it is then left alone: see ``doctor``)."""
        return wal.checkpoint_fully(self.conn)

    @_translated
    def backup(self, dest: str | os.PathLike) -> dict:
        """Copy the file, as of one moment, into the new file ``dest`` while other processes
        go on writing: see slotmem.storage.backup. Returns its path, facts and bytes."""
        from ..storage import backup

        return backup.backup(self.conn, self.path, dest)

    # -- the life of a fact ---------------------------------------------------------------------
    @_translated
    def restore(
        self, slot: str, key: str, *, version: int | None = None, by: str = "restore"
    ) -> UpsertResult:
        """Bring back a value of slot/key from history: ``version`` (as ``history`` numbers
        them), else the newest. The value it replaces goes to history (reason ``restore``), so
        a restore can itself be restored; a fact that was deleted, pruned or expired comes back
        with its id, pin and access counts (an expiry already passed is dropped). Returns
        ``UpsertResult("restored", fact, previous)``."""
        slot, key = validation.slot(slot), validation.key(key)
        if version is not None:
            version = validation.positive_int(version, "version")
        by = validation.text(by, "by", validation.MAX_SOURCE_CHARS, single_line=True)
        from ..storage import lifecycle

        entry = lifecycle.find_entry(self.conn, slot, key, version)
        vectors = self.semantic.prepare([entry])
        with self.transaction():
            fact, previous = lifecycle.restore(self.conn, entry, now=self.clock(), by=by)
            self.semantic.write(vectors, [fact])
        from ..reports import UpsertResult

        return UpsertResult("restored", fact, previous)

    @_translated
    def undo_flush(self, source: str, *, dry_run: bool = False) -> ChangeReport:
        """Revert what flushes of ``source`` (a transcript name as the flush reported it, or a
        whole ``flush:...`` provenance) wrote: each fact whose value one wrote goes back to its
        value before (``reverted``), or away when a flush created it (``deleted``); facts
        changed since are ``kept``. Every value replaced goes to history (reason ``undo``)."""
        from ..storage import lifecycle

        source = validation.text(source, "source", validation.MAX_SOURCE_CHARS, single_line=True)
        planned, written = lifecycle.undo_flush(
            self.conn, source, now=self.clock(), dry_run=True, forget=self.semantic.forget
        )
        if dry_run:
            return planned
        vectors = self.semantic.prepare(written)
        with self._exclusive(), self.transaction():
            report, written = lifecycle.undo_flush(
                self.conn, source, now=self.clock(), dry_run=False, forget=self.semantic.forget
            )
            self.semantic.write(vectors, written)
        return report

    @_translated
    def export(self, slot: str | None = None) -> list[dict]:
        """The records of an export (slotmem.storage.transfer): a header, then every fact of
        ``slot`` (None: of the file) with every column, its history, feedback and policies,
        its episodes and provenance links (and, of the whole file, the retrieval log and the
        flush cursors), then the end marker (count, checksum, and this file's signature)."""
        from ..storage import transfer

        slot = None if slot is None else validation.slot(slot)
        return list(transfer.export(self.conn, slot, self.clock()))

    def export_to(self, path: str | os.PathLike, slot: str | None = None) -> int:
        """Write the export (``export``) to the file ``path`` (a new file, or replacing one)
        only once it is complete: a failure (a full disk) leaves no partial file behind.
        Returns the number of records written."""
        from ..storage import transfer

        records = self.export(slot)
        transfer.write(records, path)
        return len(records)

    @_translated
    def import_records(
        self,
        lines: Iterable[str],
        *,
        mode: str = "merge",
        dry_run: bool = False,
        name: str = "the file",
        partial: bool = False,
        trusted: bool = False,
    ) -> ChangeReport:
        """Import an export's JSON lines (``mode``: merge, replace or skip-existing; see
        slotmem.storage.transfer.apply). Every line is checked first, as any write is: a bad
        line is an InvalidInput naming it (``name`` line N) and nothing is written.

        An export must end with its end marker, matching what it holds (``partial=True``
        imports one cut short or edited, on purpose). An unchanged export of this very memory
        is the owner's own data and is taken as the owner wrote it (as ``upsert`` takes it);
        any other file passes the write scan of the flusher and the agent tools in every text
        an agent can read, unless ``trusted=True`` (the person vouches for it). Values are
        embedded when semantic search is on."""
        from ..storage import transfer

        if mode not in transfer.MODES:
            raise InvalidInput(f"mode must be one of {', '.join(transfer.MODES)}, not {mode!r}")
        parsed = transfer.read(
            lines,
            name,
            self.clock(),
            key=transfer.export_key(self.conn),
            partial=partial,
            trusted=trusted,
        )
        if dry_run:
            return transfer.apply(
                self.conn, parsed, mode, now=self.clock(), dry_run=True, forget=self.semantic.forget
            )[0]
        vectors = self.semantic.prepare([fact for _, fact in parsed.facts])
        with self._exclusive(), self.transaction():
            report, written = transfer.apply(
                self.conn,
                parsed,
                mode,
                now=self.clock(),
                dry_run=False,
                forget=self.semantic.forget,
            )
            self.semantic.write(vectors, written)
        return report

    @_translated
    def duplicates(
        self, slot: str | None = None, *, threshold: float | None = None, semantic: bool = True
    ) -> list[duplicates.Pair]:
        """Near-duplicate pairs of facts in ``slot`` (None: in each slot), most likely first:
        candidates by their vectors when the file has semantic search on (``semantic=False``:
        by shared words), each scored 0 to 1 (``Pair.similarity``), at least ``threshold``
        (default: the method's, in slotmem.search.duplicates). A pair's ``keep`` is the newer
        fact, or the protected one when only one is."""
        from ..search import duplicates

        slots = [validation.slot(slot)] if slot else list(self.slots())
        vectors = self.semantic.leg() if semantic else None
        method = "vector" if vectors is not None else "lexical"
        floor = validation.relevance(
            duplicates.THRESHOLDS[method] if threshold is None else threshold, "threshold"
        )
        assert floor is not None
        now = self.clock()
        found = []
        for name in slots:
            if vectors is not None:
                found += duplicates.by_vectors(self.conn, name, floor, now=now, vectors=vectors)
            else:
                found += duplicates.by_words(self.conn, name, floor, now=now)
        found = [_protected_kept(pair) for pair in found]
        return sorted(
            found, key=lambda pair: (-pair.similarity, pair.slot, pair.keep.key, pair.drop.key)
        )

    @_translated
    def dedupe(
        self,
        slot: str | None = None,
        *,
        threshold: float | None = None,
        semantic: bool = True,
        dry_run: bool = False,
    ) -> ChangeReport:
        """Merge each near-duplicate pair (``duplicates``), most similar first: the newer fact
        stays, with both access counts and the other's history; the other goes to history
        (reason ``merge``). A fact already merged away is not merged again. A protected fact
        is never merged into one that is not: it stays, with its value, and the other goes."""
        from ..reports import ChangeReport
        from ..search.duplicates import merge_pairs
        from ..storage import lifecycle

        report = ChangeReport(dry_run=dry_run)
        pairs = self.duplicates(slot, threshold=threshold, semantic=semantic)
        if dry_run:
            merge_pairs(pairs, report)
            return report
        with self._exclusive(), self.transaction():  # each pair as it is now: a person may
            merge_pairs(  # have protected or changed one since they were read
                pairs,
                report,
                self._now_of,
                lambda keep, drop: lifecycle.merge(
                    self.conn, keep, drop, now=self.clock(), forget=self.semantic.forget
                ),
            )
        return report

    def _now_of(self, pair):
        """``pair`` with its facts read again (the protected one kept), None when one is gone
        or no longer holds the value that made it a duplicate."""
        keep, drop = _fresh(self.conn, pair.keep), _fresh(self.conn, pair.drop)
        if (
            keep is None
            or drop is None
            or (keep.value, drop.value)
            != (
                pair.keep.value,
                pair.drop.value,
            )
        ):
            return None
        return _protected_kept(dataclasses.replace(pair, keep=keep, drop=drop))

    # -- health -------------------------------------------------------------------------------
    @_translated
    def doctor(self) -> list[dict]:
        """One row per check (name, ok, detail, and the fix when not ok): integrity, the
        full-text indexes, the schema, the semantic leg, the write scan's multilingual reader,
        the journal mode."""
        from ..storage import health, keys

        conn = self.conn
        journal = health.journal_check(conn, self._connections.immutable, self.follower)
        wal_row = wal.check(conn, self.path, can_checkpoint=not self.readonly)
        checks = [*health.checks(conn), keys.check(conn)]
        return [*checks, *self.semantic.checks(), health.scan_check(), journal, wal_row]

    @_translated
    def repair(self) -> list[str]:
        """Rebuild what is derived (the full-text indexes, the vector index) from what is true
        (memory_facts, memory_embeddings). Returns what was done."""
        from ..storage import health

        with self.transaction():
            done = [health.rebuild_fts(self.conn)]
            if self.semantic.rebuild_index():
                done.append("rebuilt the vector index from memory_embeddings")
        if litestream.replicated(self.conn):
            done.append("the WAL is left to Litestream, which replicates this file")
        elif self.checkpoint():
            done.append("checkpointed and truncated the WAL")
        else:
            done.append("the WAL is pinned by a reader: not checkpointed (see the WAL row)")
        return done


def _fresh(conn, fact: Fact) -> Fact | None:
    row = conn.execute("SELECT * FROM memory_facts WHERE id = ?", (fact.id,)).fetchone()
    return None if row is None else Fact.from_row(row)


def _protected_kept(pair: duplicates.Pair) -> duplicates.Pair:
    """``pair`` with a protected fact kept over one that is not: an agent's near-copy of a
    person's fact must not replace it (nor gain its protection) in a dedupe."""
    if pair.drop.protected and not pair.keep.protected:
        return dataclasses.replace(pair, keep=pair.drop, drop=pair.keep)
    return pair
