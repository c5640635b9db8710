"""PostgresStore: the Store's public methods for a memory on PostgreSQL (the supported subset).

The decisions are the Store's, imported: validation and key forms (slotmem.validation), expiry
(validation.expiry), protection (the same ProtectedFact),
unchanged detection (value, confidence and expiry equal: no write, no history), the list
orders, history versions, the search (slotmem.pg.search over slotmem.search), retention's
constants. What differs is how a write is made safe across hosts: a single-fact write locks
its row (``SELECT ... FOR UPDATE``, and ``INSERT ... ON CONFLICT`` for a new key, whose
conflict makes the loser re-read the winner's row), and a read-decide-write over many rows
(prune, import, ``transaction()``) holds the memory's advisory lock.

A method of the Store this class does not have raises one line: "not available on PostgreSQL
yet", or, for what only a file has (WAL, Litestream, file backups, followers), "file-only"."""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import time
from collections.abc import Callable, Iterable, Mapping

from .. import validation
from ..errors import InvalidInput, SlotmemError, protected_error
from ..records import (
    FACT_COLUMNS,
    HISTORY_REASONS,
    Fact,
    HistoryEntry,
    Hit,
    PruneReport,
    UpsertResult,
)
from ..search import Query, Ranking
from ..storage import retention
from . import search as pg_search
from . import server, tokens
from . import tags as fact_tags
from .target import parse

LIST_ORDERS = {  # the Store's (slotmem.store.reads.LIST_ORDERS), in PostgreSQL's words
    "accessed": "last_accessed DESC, seq DESC",
    "pinned": "pinned_at IS NULL, pinned_at, seq",
    "used": "access_count DESC, last_accessed DESC, seq DESC",
    "updated": "updated_at DESC, seq DESC",
    "created": "seq DESC",
    "key": "slot, key",
}
FACT_SELECT = ", ".join(FACT_COLUMNS)
HISTORY_FIELDS = tuple(f.name for f in dataclasses.fields(HistoryEntry) if f.name != "version")
KEPT = ", ".join(name for name in FACT_COLUMNS if name != "id")
ARCHIVE_SQL = f"""INSERT INTO memory_fact_history (fact_id, {KEPT}, reason, changed_at, changed_by)
SELECT id, {KEPT}, %s, %s, %s FROM memory_facts WHERE seq = %s"""
UPSERT_SQL = """
INSERT INTO memory_facts
    (id, slot, key, value, confidence, source, created_at, updated_at, last_accessed,
     protected_at, expires_at, key_form, terms, freqs, length)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (slot, key) DO NOTHING
RETURNING seq"""
UPDATE_SQL = """UPDATE memory_facts SET value = %s, confidence = %s, source = %s, updated_at = %s,
    expires_at = %s, protected_at = coalesce(protected_at, %s), terms = %s, freqs = %s,
    length = %s WHERE seq = %s"""
INSERT_SQL = (
    f"INSERT INTO memory_facts ({FACT_SELECT}, key_form, terms, freqs, length) "
    f"VALUES ({', '.join(['%s'] * (len(FACT_COLUMNS) + 4))})"
)

NOT_YET = {  # the Store's public methods this phase leaves out (docs/scaling.md)
    "about", "advance_flush_cursor", "dedupe", "doctor", "duplicates",
    "episode_facts", "fact_episodes", "flush", "flush_cursor", "flush_cursors", "get_episode",
    "get_retrieval", "link", "link_facts", "link_history", "links", "list_episodes",
    "prune_retrievals", "prune_slot", "record_episode", "record_retrieval", "repair",
    "reset_flush_cursor", "retrievals", "search_episodes", "set_default_policy",
    "set_policy", "undo_flush", "unlink",
}  # fmt: skip
FILE_ONLY = {"backup", "checkpoint"}  # WAL checkpoints and file copies: the file's own


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class PostgresStore:
    """Facts in slots, in one schema of a PostgreSQL database. Safe to share between threads,
    processes and hosts."""

    def __init__(
        self,
        target: str,
        *,
        create: bool = False,
        readonly: bool | None = None,
        clock: Callable[[], int] = now_ms,
        ranking: Ranking | None = None,
        migration_progress=None,
    ):
        """Open (``create``: or make) the memory ``target`` names; ``readonly=True`` refuses
        writes with the same errors a read-only file gives."""
        self.target = parse(target)
        server.require_driver()
        self.path = self.target.shown  # what messages name, as a file's path
        self.readonly = bool(readonly)
        self.follower = False
        self.clock = clock
        self.ranking = ranking or Ranking()
        self._connections = server.Connections(self.target)
        self._freqs = pg_search.DocFreqs()
        self.semantic = NoVectors()
        try:
            self.migrated = self._open(create)
        except BaseException:
            self._connections.close()
            raise

    @server.translated
    def _open(self, create: bool) -> list[str]:
        conn = self.conn
        exists = conn.execute(
            "SELECT 1 FROM information_schema.tables "
            "WHERE table_schema = %s AND table_name = 'memory_migrations'",
            (self.target.memory,),
        ).fetchone()
        if exists is None and not create:
            from ..errors import DatabaseNotFound

            raise DatabaseNotFound(
                f"{self.target}: no such memory (a command that writes creates it, or "
                "Store(url, create=True))"
            )
        if exists is not None and self.readonly:
            return []
        return server.migrate(conn, self.target)

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def conn(self):
        return self._connections.get()

    def transaction(self):
        """``with store.transaction(): ...``: one transaction holding the memory's advisory
        lock, so a read-modify-write is atomic across processes and hosts."""
        return server.exclusive(self.conn, self.target.memory)

    def close(self) -> None:
        self._connections.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getattr__(self, name: str):
        if name in FILE_ONLY:
            raise SlotmemError(
                f"{name} is file-only (Litestream/WAL/backups/followers): it does not apply to "
                "PostgreSQL (use pg_dump, replication and PostgreSQL's own tools)"
            )
        if name in NOT_YET:
            raise SlotmemError(f"{name} is not available on PostgreSQL yet (docs/scaling.md)")
        raise AttributeError(name)

    def _writable(self) -> None:
        if self.readonly:
            from ..errors import ReadOnlyDatabase

            raise ReadOnlyDatabase(f"{self.target} is open read-only")

    def _row(self, slot: str, key: str, now: int | None = None, lock: bool = False):
        """The row of slot/key, else of the key spelled another way (validation.key_form),
        locked FOR UPDATE with ``lock``; with ``now``, None when it has expired by then."""
        tail = " FOR UPDATE" if lock else ""
        conn = self.conn
        row = conn.execute(
            f"SELECT * FROM memory_facts WHERE slot = %s AND key = %s{tail}", (slot, key)
        ).fetchone()
        if row is None:
            row = conn.execute(
                "SELECT * FROM memory_facts WHERE slot = %s AND key_form = %s "
                f"ORDER BY seq LIMIT 1{tail}",
                (slot, validation.key_form(key)),
            ).fetchone()
        if row is not None and now is not None and _expired(row, now):
            return None
        return row

    # -- writes -----------------------------------------------------------------------------
    @server.translated
    def upsert(
        self,
        slot: str,
        key: str,
        value: str,
        *,
        confidence: float = 1.0,
        source: str | None = None,
        ttl=None,
        expires_at=None,
        protect: bool = False,
        allow_protected: bool = True,
        tags: Iterable[str] | None = None,
    ) -> UpsertResult:
        """As Store.upsert."""
        self._writable()
        now = self.clock()
        item = (
            *validation.fact(slot, key, value, confidence, source),
            validation.expiry(ttl, expires_at, now),
        )
        wanted = None if tags is None else validation.tags(tags)
        with self.conn.transaction():
            result = self._write(item, now, protect=protect, guard=not allow_protected)
            return self._retag(result, wanted, guard=not allow_protected)

    @server.translated
    def upsert_many(
        self,
        items: Iterable[Mapping],
        *,
        allow_protected: bool = True,
        skip_protected: bool = False,
    ) -> list[UpsertResult]:
        """As Store.upsert_many: one transaction, one invalid item rejects the batch."""
        self._writable()
        now = self.clock()
        guard = PROTECTED if skip_protected else (not allow_protected)
        checked = []
        wanted: list[tuple[str, ...] | None] = []
        for number, item in enumerate(items):
            try:
                extra = set(item) - {"slot", "key", "value", "confidence", "source", "ttl",
                                     "expires_at", "tags"}  # fmt: skip
                if extra:
                    raise InvalidInput(f"unknown field(s) {sorted(extra)}")
                checked.append(
                    (
                        *validation.fact(
                            item["slot"],
                            item["key"],
                            item["value"],
                            item.get("confidence", 1.0),
                            item.get("source"),
                        ),
                        validation.expiry(item.get("ttl"), item.get("expires_at"), now),
                    )
                )
                given = item.get("tags")
                wanted.append(None if given is None else validation.tags(given))
            except (KeyError, TypeError) as e:
                raise InvalidInput(f"item {number}: needs slot, key and value ({e!r})") from None
            except InvalidInput as e:
                raise InvalidInput(f"item {number}: {e}") from None
        with self.conn.transaction():
            results = self._write_all(checked, now, guard=guard)
            if any(tags is not None for tags in wanted):
                results = [self._retag(r, tags, guard=guard) for r, tags in zip(results, wanted)]
            return results

    def _retag(self, result: UpsertResult, tags: tuple[str, ...] | None, *, guard=False):
        """The Store's _retag: inside the write's transaction the fact's tags become ``tags``
        (None: they stay); a protected fact's tags are the person's."""
        seq = self._seq(result.fact.slot, result.fact.key)
        before = fact_tags.of_seq(self.conn, seq)
        if result.action == PROTECTED or tags is None or set(tags) == set(before):
            tags = before
        elif guard and result.fact.protected and result.action == "unchanged":
            if guard == PROTECTED:
                tags = before
            else:
                raise protected_error(result.fact.slot, result.fact.key, "retag")
        else:
            fact_tags.replace(self.conn, seq, tags)
        previous = result.previous
        if previous is not None:
            previous = dataclasses.replace(previous, tags=before)
        fact = dataclasses.replace(result.fact, tags=tuple(sorted(tags)))
        return UpsertResult(result.action, fact, previous)

    def _seq(self, slot: str, key: str) -> int:
        return self.conn.execute(
            "SELECT seq FROM memory_facts WHERE slot = %s AND key = %s", (slot, key)
        ).fetchone()["seq"]

    def _write_all(self, items: list[tuple], now: int, *, guard=False) -> list[UpsertResult]:
        """New keys go in with one executemany; keys that exist (locked first, in seq order)
        or repeat take _write's path, and so does a new key another writer created meanwhile
        (its insert conflicts)."""
        conn = self.conn
        pairs = [(slot, validation.key_form(key)) for slot, key, *_ in items]
        found = conn.execute(
            """SELECT slot, key_form FROM memory_facts WHERE (slot, key_form) IN
                   (SELECT * FROM unnest(%s::text[], %s::text[])) ORDER BY seq FOR UPDATE""",
            ([slot for slot, _ in pairs], [form for _, form in pairs]),
        ).fetchall()
        existing = {(row["slot"], row["key_form"]) for row in found}
        results: list[UpsertResult | None] = []
        batch: list[tuple[int, Fact, tokens.Document]] = []
        written: set[tuple[str, str]] = set()
        fresh = [i for i, pair in enumerate(pairs) if pair not in existing]
        docs = dict(zip(fresh, tokens.documents([items[i][:3] for i in fresh])))
        for i, (item, pair) in enumerate(zip(items, pairs)):
            if pair in existing or pair in written:
                self._insert_new(batch, items, results, guard)
                results.append(self._write(item, now, guard=guard))
            else:
                batch.append((i, _new_fact(item, now), docs[i]))
                results.append(None)
            written.add(pair)
        self._insert_new(batch, items, results, guard)
        return [result for result in results if result is not None]

    def _insert_new(self, batch: list, items: list[tuple], results: list, guard) -> None:
        """Insert the batch of new facts; each one's result, or _write's when it conflicted."""
        if not batch:
            return
        params = [
            (fact.id, fact.slot, fact.key, fact.value, fact.confidence, fact.source,
             fact.created_at, fact.updated_at, fact.last_accessed, fact.protected_at,
             fact.expires_at, validation.key_form(fact.key), doc.terms, jsonb(doc.freqs),
             doc.length)
            for _, fact, doc in batch
        ]  # fmt: skip
        with self.conn.cursor() as cur:
            cur.executemany(UPSERT_SQL, params, returning=True)
            inserted = []
            for _ in batch:
                inserted.append(cur.fetchone() is not None)
                cur.nextset()
        for (i, fact, _), ok in zip(batch, inserted):
            results[i] = (
                UpsertResult("created", fact)
                if ok
                else self._write(items[i], fact.created_at, guard=guard)
            )
        batch.clear()

    def _write(self, item: tuple, now: int, *, protect: bool = False, guard=False) -> UpsertResult:
        """Inside a transaction: the Store's _write, with the row locked while it decides."""
        slot, key, value, confidence, source, expires = item
        protected_at = now if protect else None
        conn = self.conn
        row = self._row(slot, key, lock=True)
        if row is not None and _expired(row, now):  # gone for every reader: a new fact
            self._remove([row["seq"]], "expired", now, source)
            row = None
        if row is None:
            fact = _new_fact(item, now, protected_at)
            (doc,) = tokens.documents([(slot, key, value)])
            created = conn.execute(
                UPSERT_SQL,
                (fact.id, slot, key, value, confidence, source, now, now, now, protected_at,
                 expires, validation.key_form(key), doc.terms, jsonb(doc.freqs), doc.length),
            ).fetchone()  # fmt: skip
            if created is not None:
                return UpsertResult("created", fact)
            row = self._row(slot, key, lock=True)  # another writer created it first: update it
        old = Fact.from_row(row)
        if (old.value, old.confidence, old.expires_at) == (value, confidence, expires):
            if protect and not old.protected:
                conn.execute(
                    "UPDATE memory_facts SET protected_at = %s WHERE seq = %s", (now, row["seq"])
                )
                old = dataclasses.replace(old, protected_at=now)
            return UpsertResult("unchanged", old, old)
        if guard and old.protected:
            if guard == PROTECTED:
                return UpsertResult(PROTECTED, old, old)
            raise protected_error(slot, old.key, "overwrite")
        conn.execute(ARCHIVE_SQL, ("update", now, source, row["seq"]))
        (doc,) = tokens.documents([(slot, old.key, value)])
        conn.execute(
            UPDATE_SQL,
            (value, confidence, source, now, expires, protected_at, doc.terms, jsonb(doc.freqs),
             doc.length, row["seq"]),
        )  # fmt: skip
        fact = dataclasses.replace(
            old,
            value=value,
            confidence=confidence,
            source=source,
            updated_at=now,
            expires_at=expires,
            protected_at=old.protected_at or protected_at,
        )
        return UpsertResult("updated", fact, old)

    def _remove(self, seqs: list[int], reason: str, now: int, by: str | None) -> None:
        conn = self.conn
        for seq in seqs:
            conn.execute(ARCHIVE_SQL, (reason, now, by, seq))
        conn.execute("DELETE FROM memory_facts WHERE seq = ANY(%s)", (seqs,))

    @server.translated
    def delete(
        self, slot: str, key: str, *, source: str | None = None, allow_protected: bool = True
    ) -> bool:
        self._writable()
        slot, key = validation.slot(slot), validation.key(key)
        with self.conn.transaction():
            now = self.clock()
            row = self._row(slot, key, now, lock=True)
            if row is None:
                return False
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], "forget")
            self._remove([row["seq"]], "delete", now, source)
        return True

    @server.translated
    def renew(self, slot: str, key: str, ttl, *, allow_protected: bool = True) -> Fact | None:
        """As Store.renew: the live fact expires ``ttl`` from now (None: no such fact, or it
        never expires)."""
        self._writable()
        slot, key = validation.slot(slot), validation.key(key)
        lifetime = validation.duration(ttl)
        with self.conn.transaction():
            now = self.clock()
            row = self._row(slot, key, now, lock=True)
            if row is None or row["expires_at"] is None:
                return None
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], "renew")
            self.conn.execute(
                "UPDATE memory_facts SET expires_at = %s WHERE seq = %s",
                (now + lifetime, row["seq"]),
            )
            tags_now = fact_tags.of_seq(self.conn, row["seq"])
        return dataclasses.replace(Fact.from_row(row), expires_at=now + lifetime, tags=tags_now)

    @server.translated
    def restore(
        self, slot: str, key: str, *, version: int | None = None, by: str = "restore"
    ) -> UpsertResult:
        """As Store.restore: a value of slot/key back from history (``version``, else the
        newest); the value it replaces goes to history (reason ``restore``)."""
        from ..storage import lifecycle
        from . import transfer

        self._writable()
        slot, key = validation.slot(slot), validation.key(key)
        if version is not None:
            version = validation.positive_int(version, "version")
        by = validation.text(by, "by", validation.MAX_SOURCE_CHARS, single_line=True)
        with self.conn.transaction():
            row = self.conn.execute(
                "SELECT * FROM memory_facts WHERE slot = %s AND key = %s FOR UPDATE", (slot, key)
            ).fetchone()
            entry = lifecycle.pick_entry(self.history(slot, key), slot, key, version)
            now = self.clock()
            if row is None:
                taken = self.conn.execute(
                    "SELECT 1 FROM memory_facts WHERE id = %s", (entry.fact_id,)
                ).fetchone()
                fact = lifecycle.revived(entry, taken is not None, now)
                transfer.insert(self.conn, fact)
                return UpsertResult("restored", fact, None)
            tags_now = fact_tags.of_seq(self.conn, row["seq"])
            old = dataclasses.replace(Fact.from_row(row), tags=tags_now)
            transfer.archive(self.conn, row["seq"], "restore", now, by)
            fact = lifecycle.with_value(old, entry, now)
            transfer.overwrite(self.conn, row["seq"], fact)
            return UpsertResult("restored", fact, old)

    @server.translated
    def rate(
        self,
        slot: str,
        key: str,
        rating: int,
        comment: str | None = None,
        *,
        allow_protected: bool = True,
    ) -> Fact:
        self._writable()
        slot, key, rating = validation.slot(slot), validation.key(key), validation.rating(rating)
        comment = None if comment is None else validation.value(comment)
        with self.conn.transaction():
            now = self.clock()
            row = self._row(slot, key, now, lock=True)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to rate")
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], "rate")
            self.conn.execute(
                "INSERT INTO memory_feedback (fact_id, rating, comment, at) "
                "VALUES (%s, %s, %s, %s)",
                (row["id"], rating, comment, now),
            )
            # SQLite's round() rounds half away from zero, as numeric's round does
            self.conn.execute(
                """UPDATE memory_facts SET quality = (
                       SELECT greatest(-3, least(3, round(avg(rating)::numeric)::integer))
                       FROM memory_feedback WHERE fact_id = %s) WHERE seq = %s""",
                (row["id"], row["seq"]),
            )
            return Fact.from_row(self._row(slot, row["key"]))

    @server.translated
    def pin(self, slot: str, key: str) -> Fact:
        return self._mark(slot, key, "pinned_at", True, "pin")

    @server.translated
    def unpin(self, slot: str, key: str) -> Fact:
        return self._mark(slot, key, "pinned_at", False, "unpin")

    @server.translated
    def protect(self, slot: str, key: str) -> Fact:
        return self._mark(slot, key, "protected_at", True, "protect")

    @server.translated
    def unprotect(self, slot: str, key: str) -> Fact:
        return self._mark(slot, key, "protected_at", False, "unprotect")

    @server.translated
    def tag(self, slot: str, key: str, *tags: str, allow_protected: bool = True) -> Fact:
        """As Store.tag: ``tags`` added to the fact (those it has stay)."""
        return self._change_tags(slot, key, tags, True, allow_protected)

    @server.translated
    def untag(self, slot: str, key: str, *tags: str, allow_protected: bool = True) -> Fact:
        return self._change_tags(slot, key, tags, False, allow_protected)

    def _change_tags(
        self, slot: str, key: str, tags: tuple, on: bool, allow_protected: bool
    ) -> Fact:
        self._writable()
        slot, key = validation.slot(slot), validation.key(key)
        checked = validation.tags(tags)
        if not checked:
            raise InvalidInput("give at least one tag")
        verb = "tag" if on else "untag"
        with self.conn.transaction():
            now = self.clock()
            row = self._row(slot, key, now, lock=True)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], verb)
            (fact_tags.add if on else fact_tags.remove)(self.conn, row["seq"], checked)
            tags_now = fact_tags.of_seq(self.conn, row["seq"])
        return dataclasses.replace(Fact.from_row(row), tags=tags_now)

    def _mark(self, slot: str, key: str, column: str, on: bool, verb: str) -> Fact:
        self._writable()
        slot, key = validation.slot(slot), validation.key(key)
        with self.conn.transaction():
            now = self.clock()
            row = self._row(slot, key, now, lock=True)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            if (row[column] is not None) != on:
                self.conn.execute(
                    f"UPDATE memory_facts SET {column} = %s WHERE seq = %s",
                    (now if on else None, row["seq"]),
                )
                row = self._row(slot, key)
            tags_now = fact_tags.of_seq(self.conn, row["seq"])
        return dataclasses.replace(Fact.from_row(row), tags=tags_now)

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
        """As Store.query_facts, lexical (the semantic leg is not on PostgreSQL yet: ``semantic``
        is accepted and changes nothing). Accesses are counted without waiting for a writer:
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
            semantic=False,
            since=start,
            until=stop,
            tags=validation.tags(tags) if tags else (),
        )
        hits = pg_search.search(self.conn, query, self.ranking, self._freqs, now)
        if hits:
            facts = fact_tags.attach(self.conn, [hit.fact for hit in hits])
            hits = [dataclasses.replace(hit, fact=fact) for hit, fact in zip(hits, facts)]
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

    # -- policies (read only here: the ones a new memory starts with) -----------------------
    def policy(self, slot: str):
        from ..storage.transfer import BUILT_IN

        return BUILT_IN.get(validation.slot(slot))

    def policies(self) -> list:
        from ..storage.transfer import BUILT_IN

        return sorted(BUILT_IN.values(), key=lambda policy: policy.slot)

    def default_policy(self):
        return retention.DEFAULT_POLICY

    def min_relevance(self, slot: str | None = None) -> float:
        from ..search.relevance import DEFAULT_FLOOR

        policy = None if slot is None else self.policy(slot)
        if policy is None or policy.min_relevance is None:
            return DEFAULT_FLOOR
        return policy.min_relevance

    def flush_accesses(self) -> None:
        """Accesses are written by the search itself here: nothing is queued."""

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
            "semantic": f"off ({NoVectors.REASON})",
        }

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
    def prune(self, *, dry_run: bool = False, include_protected: bool = False) -> list[PruneReport]:
        """As Store.prune, each slot by the policy a new memory gives it (the file's built-in
        policies for user, project and agent, else the default policy: setting policies is not
        on PostgreSQL yet), under the memory's advisory lock; then the lexical statistics are
        refreshed."""
        from ..storage.transfer import BUILT_IN

        self._writable()
        gate = contextlib.nullcontext() if dry_run else self.transaction()
        reports = []
        with gate:
            slots = [r["slot"] for r in self.conn.execute("SELECT DISTINCT slot FROM memory_facts")]
            for slot in sorted(slots):
                policy = BUILT_IN.get(slot, retention.DEFAULT_POLICY)
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
        facts and their tags, history and feedback (policies, episodes and links are not on
        PostgreSQL yet)."""
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


class NoVectors:
    """The semantic leg of a PostgreSQL memory: off (pgvector is not wired in yet)."""

    REASON = "semantic search is not available on PostgreSQL yet"

    def model_id(self) -> None:
        return None

    def vec_error(self) -> str:
        return self.REASON

    def off_reason(self) -> str:
        return self.REASON


class _DryRun(Exception):
    """Leaves a dry run's transaction rolled back."""

    def __init__(self, report):
        self.report = report


PROTECTED = "protected"


def _expired(row, now: int) -> bool:
    return row["expires_at"] is not None and row["expires_at"] <= now


def _new_fact(item: tuple, now: int, protected_at: int | None = None) -> Fact:
    slot, key, value, confidence, source, expires = item
    return Fact(
        secrets.token_hex(8), slot, key, value, confidence, 0, source, now, now, now, 0,
        protected_at=protected_at, expires_at=expires,
    )  # fmt: skip


def jsonb(freqs: dict):
    from psycopg.types.json import Jsonb

    return Jsonb(freqs) if freqs else None
