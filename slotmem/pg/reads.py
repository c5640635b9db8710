"""PostgresStore's reads: get, list, history, search (which counts accesses without waiting for
a writer), contexts' tracking, the built-in policies, stats."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable

from .. import validation
from ..errors import InvalidInput
from ..records import FACT_COLUMNS, HISTORY_REASONS, Fact, Hit
from ..reports import HistoryEntry
from ..search import Query
from ..storage.rows import HISTORY_FIELDS
from . import hybrid, server
from . import search as pg_search
from . import tags as fact_tags
from .core import Core

LIST_ORDERS = {  # the Store's (slotmem.store.reads.LIST_ORDERS), in PostgreSQL's words
    "accessed": "last_accessed DESC, seq DESC",
    "pinned": "pinned_at IS NULL, pinned_at, seq",
    "used": "access_count DESC, last_accessed DESC, seq DESC",
    "updated": "updated_at DESC, seq DESC",
    "created": "seq DESC",
    "key": "slot, key",
}
FACT_SELECT = ", ".join(FACT_COLUMNS)


class Reads(Core):
    """Reading facts: nothing here changes one (a search counts its accesses)."""

    # -- reads ------------------------------------------------------------------------------
    @server.translated
    def get(self, slot: str, key: str) -> Fact | None:
        row = self._row(validation.slot(slot), validation.key(key), self.clock())
        if row is None:
            return None
        return dataclasses.replace(Fact.from_row(row), tags=fact_tags.of_seq(self.conn, row["seq"]))

    @server.translated
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
        """As Store.list_facts."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
        now = self.clock()
        start, stop = validation.window(since, until, now)
        params: list = [now]
        tests = ["(expires_at IS NULL OR expires_at > %s)"]
        if slot:
            tests.append("slot = ANY(%s)")
            params.append(self.slot_names(slot) or [])
        for test, value in (("updated_at >= %s", start), ("updated_at < %s", stop)):
            if value is not None:
                tests.append(test)
                params.append(value)
        if pinned:
            tests.append("pinned_at IS NOT NULL")
        if source:
            tests.append("strpos(lower(source), lower(%s)) > 0")
            params.append(validation.text(source, "source", validation.MAX_SOURCE_CHARS))
        if tags:
            tests.extend(fact_tags.filter_sql(validation.tags(tags), params))
        offset = validation.count(offset, "offset")
        sql = f"SELECT {FACT_SELECT} FROM memory_facts WHERE {' AND '.join(tests)} "
        sql += f"ORDER BY {LIST_ORDERS[order]}"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(validation.count(limit, "limit"))
        if offset:
            sql += " OFFSET %s"
            params.append(offset)
        facts = [Fact.from_row(row) for row in self.conn.execute(sql, params)]
        return fact_tags.attach(self.conn, facts)

    @server.translated
    def slot_names(self, selectors: Iterable[str] | str | None = None) -> list[str] | None:
        chosen = validation.selectors(selectors)
        if chosen is None or not any(name == "*" or name.endswith(".*") for name in chosen):
            return chosen
        held = [r["slot"] for r in self.conn.execute("SELECT DISTINCT slot FROM memory_facts")]
        found: list[str] = []
        for name in chosen:
            if name == "*" or name.endswith(".*"):
                found += sorted(slot for slot in held if validation.selects([name], slot))
            else:
                found.append(name)
        return list(dict.fromkeys(found))

    @server.translated
    def slots(self) -> dict[str, int]:
        found = self.conn.execute(
            "SELECT slot, count(*) AS n FROM memory_facts "
            "WHERE expires_at IS NULL OR expires_at > %s GROUP BY slot ORDER BY slot",
            (self.clock(),),
        )
        return {row["slot"]: row["n"] for row in found}

    @server.translated
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
        if key is not None and slot is None:
            raise InvalidInput("history of a key needs its slot")
        reasons = (reason,) if isinstance(reason, str) else tuple(reason or ())
        unknown = [r for r in reasons if r not in HISTORY_REASONS]
        if unknown:
            raise InvalidInput(
                f"reason must be one of {', '.join(HISTORY_REASONS)}, not {unknown[0]!r}"
            )
        start, stop = validation.window(since, until, self.clock())
        tests: list[str] = []
        params: list = []
        for column, value in (
            ("slot", None if slot is None else validation.slot(slot)),
            ("key", None if key is None else validation.key(key)),
        ):
            if value is not None:
                tests.append(f"h.{column} = %s")
                params.append(value)
        if start is not None:
            tests.append("h.changed_at >= %s")
            params.append(start)
        if stop is not None:
            tests.append("h.changed_at < %s")
            params.append(stop)
        if reasons:
            tests.append("h.reason = ANY(%s)")
            params.append(list(reasons))
        where = f"WHERE {' AND '.join(tests)}" if tests else ""
        sql = f"""SELECT {", ".join(f"h.{name}" for name in HISTORY_FIELDS)},
                         (SELECT count(*) FROM memory_fact_history v
                          WHERE v.slot = h.slot AND v.key = h.key AND v.hid <= h.hid) AS version
                  FROM memory_fact_history h {where} ORDER BY h.hid DESC"""
        if limit is not None:
            sql += " LIMIT %s"
            params.append(validation.count(limit, "limit"))
        rows = self.conn.execute(sql, params).fetchall()
        return [
            HistoryEntry(**{name: row[name] for name in (*HISTORY_FIELDS, "version")})
            for row in rows
        ]

    @server.translated
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
        """As Store.query_facts: hybrid when the memory has semantic search on (``slotmem
        reindex``) and this process can embed the question, else lexical. Accesses are counted without waiting for a writer:
        a row another transaction holds locked is not counted this time."""
        chosen = self.slot_names(slots)
        now = self.clock()
        start, stop = validation.window(since, until, now)
        query = Query.parse(
            text,
            slots=None if chosen is None else tuple(chosen),
            limit=validation.positive_int(limit, "limit"),
            min_score=None if min_score is None else float(min_score),
            min_relevance=validation.relevance(min_relevance),
            explain=explain,
            semantic=semantic,
            since=start,
            until=stop,
            tags=validation.tags(tags) if tags else (),
        )
        with self.semantic.settled() if semantic else contextlib.nullcontext():
            vectors = self.semantic.leg() if semantic else None
            hits = hybrid.search(self.conn, query, self.ranking, self._freqs, now, vectors)
        if self._freqs.stale:  # enough facts added since the statistics were counted
            self.refresh_soon()
        if not track_access or not hits or self.readonly:
            return hits
        now = self.clock()
        bumped = self.count_accesses([hit.fact.id for hit in hits], now)
        return [
            dataclasses.replace(
                hit,
                fact=dataclasses.replace(
                    hit.fact, access_count=hit.fact.access_count + 1, last_accessed=now
                ),
            )
            if hit.fact.id in bumped
            else hit
            for hit in hits
        ]

    @contextlib.contextmanager
    def tracking(self, enabled: bool = True):
        """As Store.tracking: ``track(ids)`` records one access of each fact passed on and
        answers the ids still in the memory. A row a writer holds locked is not counted this
        time (the caller never waits for a writer)."""

        @server.translated
        def track(store, ids) -> set[str]:
            ids = list(ids)
            if enabled and ids and not store.readonly:
                store.count_accesses(ids, store.clock())
            found = store.conn.execute(
                "SELECT id FROM memory_facts WHERE id = ANY(%s)", (ids,)
            ).fetchall()
            return {row["id"] for row in found}

        yield lambda ids: track(self, ids)

    def count_accesses(self, ids: list[str], now: int) -> set[str]:
        """One access of each fact of ``ids`` that no writer holds locked: the ids counted."""
        counted = self.conn.execute(
            """UPDATE memory_facts SET access_count = access_count + 1, last_accessed = %s
               WHERE seq IN (SELECT seq FROM memory_facts WHERE id = ANY(%s)
                             FOR UPDATE SKIP LOCKED) RETURNING id""",
            (now, ids),
        ).fetchall()
        return {row["id"] for row in counted}

    def flush_accesses(self) -> None:
        """Accesses are written by the search itself here: nothing is queued."""

    @server.translated
    def use_by_slot(self, recent: int, stale: int) -> dict[str, tuple[int, int, int, int]]:
        """Per slot, its live facts by when they were last used (the file's ``use_by_slot``)."""
        found = self.conn.execute(
            """SELECT slot,
                      count(*) FILTER (WHERE access_count > 0 AND last_accessed >= %(recent)s) AS a,
                      count(*) FILTER (WHERE access_count > 0 AND last_accessed < %(recent)s
                                       AND last_accessed >= %(stale)s) AS b,
                      count(*) FILTER (WHERE access_count > 0 AND last_accessed < %(stale)s) AS c,
                      count(*) FILTER (WHERE access_count = 0) AS d
               FROM memory_facts WHERE expires_at IS NULL OR expires_at > %(now)s
               GROUP BY slot ORDER BY slot""",
            {"now": self.clock(), "recent": recent, "stale": stale},
        )
        return {row["slot"]: (row["a"], row["b"], row["c"], row["d"]) for row in found}

    @server.translated
    def stats(self) -> dict:
        conn = self.conn
        slots = self.slots()
        count = lambda sql: conn.execute(sql).fetchone()["n"]
        current = pg_search.stats(conn)
        return {
            "path": self.target.shown,
            "backend": "postgresql",
            "facts": sum(slots.values()),
            "expired": count("SELECT count(*) AS n FROM memory_facts") - sum(slots.values()),
            "slots": slots,
            "history": count("SELECT count(*) AS n FROM memory_fact_history"),
            "feedback": count("SELECT count(*) AS n FROM memory_feedback"),
            "migrations": server.applied(conn),
            "server_version": conn.info.server_version,
            "statistics_refreshed_at": None if current is None else current.refreshed_at,
            "semantic": self.semantic.off_reason() or f"on ({self.semantic.model_id()})",
        }
