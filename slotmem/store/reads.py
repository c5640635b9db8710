"""What the Store answers without changing a fact: get, list, history, search (which counts
accesses), slots and stats."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import search, validation
from ..errors import InvalidInput
from ..records import HISTORY_REASONS, Fact, Hit
from ..search import Query
from ..storage import db, migrate, rows, wal
from ..storage import tags as fact_tags
from .core import Core, _translated

if TYPE_CHECKING:
    from ..reports import HistoryEntry

LIST_ORDERS = {
    "accessed": "last_accessed DESC, seq DESC",
    "pinned": "pinned_at IS NULL, pinned_at, seq",  # pinned facts first, in the order pinned
    "used": "access_count DESC, last_accessed DESC, seq DESC",
    "updated": "updated_at DESC, seq DESC",
    "created": "seq DESC",
    "key": "slot, key",
}


class Reads(Core):
    """Reading facts: nothing here changes one (a search counts its accesses)."""

    @_translated
    def get(self, slot: str, key: str) -> Fact | None:
        """The fact slot/key with its tags, or None (none, or expired)."""
        row = self._row(validation.slot(slot), validation.key(key), self.clock())
        if row is None:
            return None
        return dataclasses.replace(Fact.from_row(row), tags=fact_tags.of_seq(self.conn, row["seq"]))

    @_translated
    def list_facts(
        self,
        slot: str | Iterable[str] | None = None,
        *,
        limit: int | None = 50,
        order: str = "accessed",
        pinned: bool = False,
        since=None,
        until=None,
        source: str | None = None,
        offset: int = 0,
        tags: Iterable[str] | None = None,
    ) -> list[Fact]:
        """Facts of one slot, of several (a list) or of all, most recently accessed first by
        default; ``pinned``: only the pinned ones; ``since``/``until``: only those last updated
        in that window (``validation.window``); ``source``: only those whose source contains
        that text (ASCII letters in any case); ``tags``: only those that have every one of these
        tags; ``offset``: skip that many first. Expired facts are never listed. Each fact
        carries its tags."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
        now = self.clock()
        start, stop = validation.window(since, until, now)
        params: list = [now]
        tests = [rows.live("?")]
        if slot:
            names = self.slot_names(slot) or []
            tests.append(f"slot IN ({', '.join('?' * len(names))})")
            params.extend(names)
        for test, value in (("updated_at >= ?", start), ("updated_at < ?", stop)):
            if value is not None:
                tests.append(test)
                params.append(value)
        if pinned:
            tests.append("pinned_at IS NOT NULL")
        if source:
            tests.append("instr(lower(source), lower(?)) > 0")
            params.append(validation.text(source, "source", validation.MAX_SOURCE_CHARS))
        if tags:
            tests.extend(fact_tags.filter_sql(validation.tags(tags), params))
        offset = validation.count(offset, "offset")
        sql = (
            f"SELECT * FROM memory_facts WHERE {' AND '.join(tests)} ORDER BY {LIST_ORDERS[order]}"
        )
        if limit is not None or offset:
            sql += " LIMIT +? OFFSET +?"
            params.extend([-1 if limit is None else validation.count(limit, "limit"), offset])
        facts = [Fact.from_row(row) for row in self.conn.execute(sql, params)]
        return fact_tags.attach(self.conn, facts)

    @_translated
    def history(
        self,
        slot: str | None = None,
        key: str | None = None,
        *,
        since=None,
        until=None,
        reason: str | Iterable[str] | None = None,
        limit: int | None = None,
    ) -> list[HistoryEntry]:
        """Old values, newest first: of slot/key, of a slot (no key), or of the whole file (no
        slot); ``since``/``until`` keep the changes made in that window, ``reason`` those of
        one kind (or several: HISTORY_REASONS). Each entry has its version number, which
        ``restore`` takes."""
        if key is not None and slot is None:
            raise InvalidInput("history of a key needs its slot")
        reasons = (reason,) if isinstance(reason, str) else tuple(reason or ())
        unknown = [r for r in reasons if r not in HISTORY_REASONS]
        if unknown:
            raise InvalidInput(
                f"reason must be one of {', '.join(HISTORY_REASONS)}, not {unknown[0]!r}"
            )
        start, stop = validation.window(since, until, self.clock())
        return rows.history(
            self.conn,
            slot=None if slot is None else validation.slot(slot),
            key=None if key is None else validation.key(key),
            since=start,
            until=stop,
            reasons=reasons,
            limit=None if limit is None else validation.count(limit, "limit"),
        )

    @_translated
    def query_facts(
        self,
        text: str,
        *,
        slots: Iterable[str] | str | None = None,
        limit: int = 10,
        min_score: float | None = None,
        min_relevance: float | None = None,
        track_access: bool = True,
        explain: bool = False,
        semantic: bool = True,
        since=None,
        until=None,
        tags: Iterable[str] | None = None,
    ) -> list[Hit]:
        """Facts matching ``text``, best first. Never raises on any text; bumps access stats.

        ``min_relevance`` drops hits less likely than that to be relevant (``Hit.relevance``, in
        [0, 1], the same scale for lexical and hybrid search). When the file has semantic search
        on (``slotmem reindex``) and this process can load sqlite-vec, the lexical and semantic
        legs are fused (``semantic=False``: lexical only). ``since``/``until`` keep the facts
        last updated in that window; ``tags`` only those that have every one of these tags
        (read from the tags' index). Expired facts are never returned. Each hit's fact carries
        its tags.
        """
        slots = self.slot_names(slots)
        start, stop = validation.window(since, until, self.clock())
        query = Query.parse(
            text,
            slots=None if slots is None else tuple(slots),
            limit=validation.positive_int(limit, "limit"),
            min_score=None if min_score is None else float(min_score),
            min_relevance=validation.relevance(min_relevance),
            explain=explain,
            semantic=semantic,
            since=start,
            until=stop,
            tags=validation.tags(tags) if tags else (),
        )
        with self._accesses.window(track_access) as record:
            hits = search.run(
                self.conn,
                query,
                ranking=self.ranking,
                now=self.clock(),
                freqs=self._doc_freqs,
                vectors=self.semantic.leg() if semantic else None,
                tagged=self._tagged,
            )
            if not track_access or not hits:
                return hits
            now = self.clock()
            present = record([hit.fact.id for hit in hits], now)
        hits = [hit for hit in hits if hit.fact.id in present]
        if self.readonly:  # nothing was counted: the hits say what the file holds
            return hits
        return [
            dataclasses.replace(
                hit,
                fact=dataclasses.replace(
                    hit.fact, access_count=hit.fact.access_count + 1, last_accessed=now
                ),
            )
            for hit in hits
        ]

    def _tagged(self, hits: list[Hit]) -> list[Hit]:
        """``hits`` whose facts carry their tags (one query)."""
        facts = fact_tags.attach(self.conn, [hit.fact for hit in hits])
        return [
            hit if fact is hit.fact else dataclasses.replace(hit, fact=fact)
            for hit, fact in zip(hits, facts)
        ]

    @contextlib.contextmanager
    def tracking(self, enabled: bool = True):
        """For a caller that reads facts and passes on only some of them (a context builder):
        open it before reading; ``track(ids)`` records one access of each fact passed on and
        answers the ids still in the file (a fact removed meanwhile is not to be passed on).
        See slotmem.storage.access for how this keeps a fact just returned from being pruned
        without making the caller wait for the write lock."""
        with self._accesses.window(enabled) as record:
            yield lambda ids: record(list(ids), self.clock())

    def flush_accesses(self) -> None:
        """Write the access counts searches have queued (``close()`` and the end of the
        process do it too)."""
        self._accesses.flush()

    # -- introspection ----------------------------------------------------------------------
    @_translated
    def slot_names(self, selectors: Iterable[str] | str | None = None) -> list[str] | None:
        """The slots ``selectors`` take (``validation.selectors``: names, ``PREFIX.*``, ``*``),
        in their order, the slots each pattern takes by name; None for None. A slot named
        exactly is taken whether or not it holds facts; a pattern takes the slots that do."""
        chosen = validation.selectors(selectors)
        if chosen is None or not any(name == "*" or name.endswith(".*") for name in chosen):
            return chosen
        held = rows.slot_names(self.conn)
        found: list[str] = []
        for name in chosen:
            if name == "*" or name.endswith(".*"):
                found += [slot for slot in held if validation.selects([name], slot)]
            else:
                found.append(name)
        return list(dict.fromkeys(found))

    @_translated
    def slots(self) -> dict[str, int]:
        """Facts per slot (expired ones left out)."""
        found = self.conn.execute(
            f"SELECT slot, count(*) FROM memory_facts WHERE {rows.live('?')} "
            "GROUP BY slot ORDER BY slot",
            (self.clock(),),
        )
        return {slot: count for slot, count in found}

    @_translated
    def use_by_slot(self, recent: int, stale: int) -> dict[str, tuple[int, int, int, int]]:
        """Per slot, its live facts by when they were last used: at or after ``recent`` (ms),
        before it but at or after ``stale``, before ``stale``, never (the UI's overview)."""
        found = self.conn.execute(
            f"""SELECT slot,
                      sum(access_count > 0 AND last_accessed >= :recent),
                      sum(access_count > 0 AND last_accessed < :recent AND last_accessed >= :stale),
                      sum(access_count > 0 AND last_accessed < :stale),
                      sum(access_count = 0)
               FROM memory_facts WHERE {rows.live(":now")} GROUP BY slot ORDER BY slot""",
            {"now": self.clock(), "recent": recent, "stale": stale},
        )
        return {
            slot: (int(a or 0), int(b or 0), int(c or 0), int(d or 0)) for slot, a, b, c, d in found
        }

    @_translated
    def stats(self) -> dict:
        conn = self.conn
        slots = self.slots()
        total = conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0]
        return {
            "path": str(self.path),
            "facts": sum(slots.values()),
            "expired": total - sum(slots.values()),  # until prune moves them into history
            "slots": slots,
            "history": conn.execute("SELECT count(*) FROM memory_fact_history").fetchone()[0],
            "feedback": conn.execute("SELECT count(*) FROM memory_feedback").fetchone()[0],
            "file_bytes": wal.size(self.path),
            "wal_bytes": wal.size(wal.wal_path(self.path)),
            "wal": wal.report(conn, self.path, can_checkpoint=not self.readonly)[1],
            "migrations": migrate.applied_migrations(conn),
            "sqlite_version": db.driver.sqlite_version,
            "driver": db.driver.__name__,
            "semantic": self.semantic.off_reason() or f"on ({self.semantic.model_id()})",
        }
