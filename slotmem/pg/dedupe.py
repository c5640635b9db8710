"""PostgresStore's near-duplicates: ``duplicates`` and ``dedupe`` with slotmem.store.upkeep's
rules (slotmem.search.duplicates): by the vectors of pgvector's leg (slotmem.pg.vectors) when
the memory has semantic search on, else by shared words. A
dedupe decides and merges under the memory's advisory lock, and locks each pair's rows
(``FOR UPDATE``, in seq order) before it reads them again: a writer on another host that
changed or protected one since the pairs were chosen is seen, and the pair skipped or turned."""

from __future__ import annotations

import dataclasses

from .. import validation
from ..records import Fact
from ..reports import ChangeReport, HistoryEntry
from ..search.duplicates import merge_pairs
from . import server
from . import tags as fact_tags
from .links import Links

HISTORY_COPIED = tuple(  # what a merge copies of the dropped fact's history: all but its name
    f.name for f in dataclasses.fields(HistoryEntry) if f.name not in ("slot", "key", "version")
)


class Dedupe(Links):
    """Near-duplicate pairs, and merging them."""

    @server.translated
    def duplicates(
        self, slot: str | None = None, *, threshold: float | None = None, semantic: bool = True
    ):
        """As Store.duplicates: candidates by their vectors when the memory has semantic search
        on (``semantic=False``: by shared words), scored and kept as the file's."""
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
            rows = self.conn.execute(
                "SELECT * FROM memory_facts WHERE slot = %s "
                "AND (expires_at IS NULL OR expires_at > %s)",
                (name, now),
            )
            facts = {row["seq"]: Fact.from_row(row) for row in rows}
            if vectors is not None:
                found += duplicates.by_vectors_of(name, facts, floor, vectors=vectors)
            else:
                found += duplicates.by_words_of(name, facts, floor)
        found = [_protected_kept(pair) for pair in found]
        return sorted(
            found, key=lambda pair: (-pair.similarity, pair.slot, pair.keep.key, pair.drop.key)
        )

    @server.translated
    def dedupe(
        self,
        slot: str | None = None,
        *,
        threshold: float | None = None,
        semantic: bool = True,
        dry_run: bool = False,
    ) -> ChangeReport:
        """As Store.dedupe: each pair merged, most similar first, the newer fact kept (a
        protected fact is never merged into one that is not); under the memory's lock."""
        if not dry_run:
            self._writable()
        report = ChangeReport(dry_run=dry_run)
        pairs = self.duplicates(slot, threshold=threshold, semantic=semantic)
        with self.conn.transaction() if dry_run else self.transaction():
            if dry_run:
                merge_pairs(pairs, report)
            else:
                merge_pairs(pairs, report, self._now_of, self._merge)
        return report

    def _now_of(self, pair):
        """``pair`` with its rows locked and read again (the protected one kept), None when one
        is gone or no longer holds the value that made it a duplicate."""
        rows = self.conn.execute(
            "SELECT * FROM memory_facts WHERE id = ANY(%s) ORDER BY seq FOR UPDATE",
            ([pair.keep.id, pair.drop.id],),
        ).fetchall()
        now = {row["id"]: Fact.from_row(row) for row in rows}
        keep, drop = now.get(pair.keep.id), now.get(pair.drop.id)
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

    def _merge(self, keep: Fact, drop: Fact) -> None:
        """slotmem.storage.lifecycle.merge, in PostgreSQL's SQL: ``keep`` gains ``drop``'s
        accesses, pin, protection, tags (up to MAX_TAGS) and links; ``drop`` goes to history
        (reason ``merge``) and its history is copied under ``keep``'s key."""
        from . import transfer

        conn, now = self.conn, self.clock()
        seq_of = {
            row["id"]: row["seq"]
            for row in conn.execute(
                "SELECT id, seq FROM memory_facts WHERE id = ANY(%s)", ([keep.id, drop.id],)
            )
        }
        keep_seq, drop_seq = seq_of[keep.id], seq_of[drop.id]
        conn.execute(
            """INSERT INTO memory_fact_tags (fact_seq, tag)
               SELECT %(keep)s, tag FROM memory_fact_tags
               WHERE fact_seq = %(drop)s AND tag NOT IN (
                   SELECT tag FROM memory_fact_tags WHERE fact_seq = %(keep)s)
               ORDER BY tag
               LIMIT greatest(0, %(most)s - (SELECT count(*) FROM memory_fact_tags
                                             WHERE fact_seq = %(keep)s))
               ON CONFLICT DO NOTHING""",
            {"keep": keep_seq, "drop": drop_seq, "most": validation.MAX_TAGS},
        )
        for start, end, by in (
            ("%(keep)s", "to_seq", "from_seq"),
            ("from_seq", "%(keep)s", "to_seq"),
        ):
            other = "to_seq" if by == "from_seq" else "from_seq"
            conn.execute(
                f"""INSERT INTO memory_fact_links (from_seq, rel, to_seq, created_at, source)
                    SELECT {start}, rel, {end}, created_at, source FROM memory_fact_links
                    WHERE {by} = %(drop)s AND {other} NOT IN (%(keep)s, %(drop)s)
                    ON CONFLICT DO NOTHING""",
                {"keep": keep_seq, "drop": drop_seq},
            )
        self._remove([drop_seq], "merge", now, f"dedupe:{keep.slot}/{keep.key}")
        names = ", ".join(HISTORY_COPIED)
        conn.execute(
            f"""INSERT INTO memory_fact_history (slot, key, {names})
                SELECT %s, %s, {names} FROM memory_fact_history
                WHERE slot = %s AND key = %s ORDER BY hid""",
            (keep.slot, keep.key, drop.slot, drop.key),
        )
        merged = dataclasses.replace(
            keep,
            access_count=keep.access_count + drop.access_count,
            last_accessed=max(keep.last_accessed, drop.last_accessed),
            pinned_at=keep.pinned_at if keep.pinned_at is not None else drop.pinned_at,
            protected_at=keep.protected_at if keep.protected_at is not None else drop.protected_at,
            tags=fact_tags.of_seq(conn, keep_seq),
        )
        transfer.overwrite(conn, keep_seq, merged)


def _protected_kept(pair):
    """``pair`` with a protected fact kept over one that is not (an agent's near-copy of a
    person's fact must not replace it, nor gain its protection)."""
    if pair.drop.protected and not pair.keep.protected:
        return dataclasses.replace(pair, keep=pair.drop, drop=pair.keep)
    return pair
