"""PostgresStore's upkeep: the lexical statistics, prune (under the memory's advisory lock), and
moving a memory (export, import)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable

from .. import validation
from ..errors import InvalidInput
from ..records import Fact
from ..reports import PruneReport
from ..storage import retention
from . import search as pg_search
from . import server
from .policies import Policies
from .writes import Writes


class Upkeep(Policies, Writes):
    """Prune, statistics, export and import."""

    # -- upkeep -----------------------------------------------------------------------------
    @server.translated
    def refresh_statistics(self) -> dict:
        """Recount the lexical statistics (document frequencies, facts, tokens) under the
        memory's lock: a search then scores exactly as the file would."""
        self._writable()
        with self.transaction():
            current = pg_search.refresh(self.conn, self.clock())
        return dataclasses.asdict(current)

    @server.translated
    def doctor(self) -> list[dict]:
        """One row per check, as Store.doctor's: the server, the schema, the lexical terms of
        every fact, the statistics' age, the semantic leg."""
        from ..records import iso_time
        from ..storage.health import check_row, scan_check

        conn = self.conn
        pending = [name for name, _ in server.migrations() if name not in server.applied(conn)]
        missing = conn.execute(
            "SELECT count(*) AS n FROM memory_facts WHERE length = 0 OR terms = '{}'"
        ).fetchone()["n"]
        current = pg_search.stats(conn)
        newest = conn.execute("SELECT coalesce(max(seq), 0) AS n FROM memory_facts").fetchone()["n"]
        if current is None:
            statistics = check_row(
                "lexical statistics", None, "not counted yet (a search will)", ""
            )
        else:
            added = newest - current.seq
            statistics = check_row(
                "lexical statistics",
                not current.stale(newest),
                f"counted at {iso_time(current.refreshed_at)} over {current.facts} facts; "
                f"{added} added since",
                "slotmem prune (or slotmem doctor --repair) counts them again",
            )
        return [
            check_row("PostgreSQL server", True, f"version {conn.info.server_version}", ""),
            check_row(
                "schema up to date", not pending, ", ".join(pending) or "ok", "slotmem migrate"
            ),
            check_row(
                "lexical terms of every fact",
                missing == 0,
                f"{missing} facts without terms" if missing else "ok",
                "slotmem doctor --repair",
            ),
            statistics,
            *self.semantic.checks(),
            scan_check(),
        ]

    @server.translated
    def repair(self) -> list[str]:
        """Recompute every fact's lexical terms (FTS5's tokenizer, as this process has it) and
        the statistics, under the memory's lock. Returns what was done."""
        from . import tokens
        from .writes import jsonb

        self._writable()
        with self.transaction():
            facts = self.conn.execute("SELECT seq, slot, key, value FROM memory_facts").fetchall()
            docs = tokens.documents([(row["slot"], row["key"], row["value"]) for row in facts])
            with self.conn.cursor() as cur:
                cur.executemany(
                    "UPDATE memory_facts SET terms = %s, freqs = %s, length = %s WHERE seq = %s",
                    [(d.terms, jsonb(d.freqs), d.length, r["seq"]) for r, d in zip(facts, docs)],
                )
            pg_search.refresh(self.conn, self.clock())
            vectors = self.semantic.rebuild_index()
        done = [f"recomputed the lexical terms of {len(facts)} facts", "counted the statistics"]
        return done + (["rebuilt the vector index from the stored vectors"] if vectors else [])

    @server.translated
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
        """As Store.prune_slot: ``slot``'s expired facts removed and the slot brought down
        towards ``cap`` (arguments default to the slot's policy, else the default policy),
        under the memory's advisory lock. The lexical statistics are left to ``prune``."""
        self._writable()
        slot = validation.slot(slot)
        policy = self.policy(slot) or self.default_policy()
        policy = dataclasses.replace(
            policy,
            cap=policy.cap if cap is None else validation.count(cap, "cap"),
            min_age_days=policy.min_age_days
            if min_age_days is None
            else validation.non_negative(min_age_days, "min_age_days"),
            min_access_count=policy.min_access_count
            if min_access_count is None
            else validation.count(min_access_count, "min_access_count"),
        )
        with contextlib.nullcontext() if dry_run else self.transaction():
            return self._prune_slot(slot, policy, dry_run, bool(include_protected))

    @server.translated
    def prune(self, *, dry_run: bool = False, include_protected: bool = False) -> list[PruneReport]:
        """As Store.prune: every slot, each by its policy (a slot without one by the default
        policy), under the memory's advisory lock; then the lexical statistics are
        refreshed."""
        self._writable()
        gate = contextlib.nullcontext() if dry_run else self.transaction()
        reports = []
        with gate:
            policies = {policy.slot: policy for policy in self.policies()}
            default = self.default_policy()
            slots = {r["slot"] for r in self.conn.execute("SELECT DISTINCT slot FROM memory_facts")}
            for slot in sorted(slots | set(policies)):
                policy = policies.get(slot, default)
                reports.append(self._prune_slot(slot, policy, dry_run, bool(include_protected)))
            if not dry_run:
                pg_search.refresh(self.conn, self.clock())
        return reports

    def _prune_slot(self, slot: str, policy, dry_run: bool, include_protected: bool):
        """slotmem.storage.retention.prune_slot's choice, in PostgreSQL's SQL."""
        conn, now = self.conn, self.clock()
        expired = conn.execute(
            "SELECT * FROM memory_facts WHERE slot = %s AND expires_at <= %s "
            "ORDER BY expires_at, seq",
            (slot, now),
        ).fetchall()
        count = conn.execute(
            "SELECT count(*) AS n FROM memory_facts WHERE slot = %s "
            "AND (expires_at IS NULL OR expires_at > %s)",
            (slot, now),
        ).fetchone()["n"]
        report = PruneReport(slot=slot, count=count, cap=policy.cap, dry_run=dry_run)
        report.expired = [Fact.from_row(row) for row in expired]
        prunable: list = []
        excess = count - policy.cap
        if excess > 0:
            cutoff = now - int(policy.min_age_days * retention.DAY_MS)
            prunable = conn.execute(
                """SELECT * FROM memory_facts
                   WHERE slot = %s AND pinned_at IS NULL
                     AND (expires_at IS NULL OR expires_at > %s)
                     AND (protected_at IS NULL OR %s)
                     AND (quality <= %s OR (greatest(last_accessed, updated_at) < %s
                                            AND access_count < %s))
                   ORDER BY least(quality, 0), access_count, last_accessed, seq LIMIT %s""",
                (slot, now, include_protected, retention.LOW_QUALITY, cutoff,
                 policy.min_access_count, excess),
            ).fetchall()  # fmt: skip
            report.removed = [Fact.from_row(row) for row in prunable]
            report.protected = excess - len(prunable)
        if not dry_run:
            if expired:
                self._remove([row["seq"] for row in expired], "expired", now, "prune")
            if prunable:
                self._remove([row["seq"] for row in prunable], "prune", now, "prune")
        return report

    # -- moving a memory --------------------------------------------------------------------
    @server.translated
    def export(self, slot: str | None = None) -> list[dict]:
        """The records of an export, in the file's JSONL format (slotmem.storage.transfer):
        facts and their tags, history, feedback, slot policies (the default one too), the
        flusher's cursors (of the whole memory) and links (episodes are not on PostgreSQL
        yet)."""
        from . import transfer

        slot = None if slot is None else validation.slot(slot)
        return list(transfer.export(self.conn, slot, self.clock()))

    def export_to(self, path, slot: str | None = None) -> int:
        from ..storage import transfer as file_transfer

        records = self.export(slot)
        file_transfer.write(records, path)
        return len(records)

    @server.translated
    def import_records(
        self,
        lines: Iterable[str],
        *,
        mode: str = "merge",
        dry_run: bool = False,
        name: str = "the file",
        partial: bool = False,
        trusted: bool = False,
    ):
        """As Store.import_records: every line checked first by the file's own reader
        (slotmem.storage.transfer.read), then applied under the memory's advisory lock."""
        from ..storage import transfer as file_transfer
        from . import transfer

        self._writable()
        if mode not in file_transfer.MODES:
            raise InvalidInput(
                f"mode must be one of {', '.join(file_transfer.MODES)}, not {mode!r}"
            )
        parsed = file_transfer.read(
            lines,
            name,
            self.clock(),
            key=transfer.export_key(self.conn),
            partial=partial,
            trusted=trusted,
        )
        try:
            with self.transaction():
                report = transfer.apply(self.conn, parsed, mode, now=self.clock())
                if dry_run:
                    raise _DryRun(report)  # the transaction rolls back
                pg_search.refresh(self.conn, self.clock())
        except _DryRun as run:
            run.report.dry_run = True
            return run.report
        return report


class _DryRun(Exception):
    """Leaves a dry run's transaction rolled back."""

    def __init__(self, report):
        self.report = report
