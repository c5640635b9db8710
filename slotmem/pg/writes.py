"""PostgresStore's write path: the Store's decisions, each single-fact write on its locked row;
upsert_many's new keys in one statement."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterable, Mapping

from .. import validation
from ..errors import InvalidInput, protected_error
from ..records import FACT_COLUMNS, Fact
from ..reports import UpsertResult
from ..storage import items as batch_items
from ..storage.tags import PROTECTED, retagged
from . import server, tokens
from . import tags as fact_tags
from .core import Core, _expired

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
# The old value to history and the new one in, in one round trip: a WITH's statements share
# one snapshot, so the archive reads the row as it was before the update.
ARCHIVE_UPDATE_SQL = f"WITH archived AS ({ARCHIVE_SQL}) {UPDATE_SQL}"
SEQ_TAGS_SQL = """SELECT f.seq, ARRAY(SELECT t.tag FROM memory_fact_tags t
                                      WHERE t.fact_seq = f.seq ORDER BY t.tag) AS tags
                  FROM memory_facts f WHERE f.slot = %s AND f.key = %s"""
INSERT_SQL = (
    f"INSERT INTO memory_facts ({', '.join(FACT_COLUMNS)}, key_form, terms, freqs, length) "
    f"VALUES ({', '.join(['%s'] * (len(FACT_COLUMNS) + 4))})"
)


class Writes(Core):
    """Writing facts: every old value goes to history first."""

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
        vectors = self.semantic.prepare([item[1:3]])  # before the transaction: models are slow
        with self.conn.transaction():
            result = self._write(item, now, protect=protect, guard=not allow_protected)
            result = self._retag(result, wanted, guard=not allow_protected)
            self.semantic.write(vectors, _changed([result]))
            return result

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
        checked, wanted = batch_items.checked(items, now)
        vectors = self.semantic.prepare([item[1:3] for item in checked])
        with self.conn.transaction():
            results = self._write_all(checked, now, guard=guard)
            if any(tags is not None for tags in wanted):
                results = [self._retag(r, tags, guard=guard) for r, tags in zip(results, wanted)]
            self.semantic.write(vectors, _changed(results))
            return results

    def _retag(self, result: UpsertResult, tags: tuple[str, ...] | None, *, guard=False):
        """Inside the write's transaction: the written fact's tags become ``tags`` as
        ``storage.tags.retagged`` decides (the same rule on both backends)."""
        row = self.conn.execute(SEQ_TAGS_SQL, (result.fact.slot, result.fact.key)).fetchone()
        seq = row["seq"]
        write, result = retagged(result, tags, tuple(row["tags"]), guard)
        if write is not None:
            fact_tags.replace(self.conn, seq, write)
        return result

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
        (doc,) = tokens.documents([(slot, old.key, value)])
        conn.execute(
            ARCHIVE_UPDATE_SQL,
            ("update", now, source, row["seq"], value, confidence, source, now, expires,
             protected_at, doc.terms, jsonb(doc.freqs), doc.length, row["seq"]),
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
                result = UpsertResult("restored", fact, None)
            else:
                tags_now = fact_tags.of_seq(self.conn, row["seq"])
                old = dataclasses.replace(Fact.from_row(row), tags=tags_now)
                transfer.archive(self.conn, row["seq"], "restore", now, by)
                fact = lifecycle.with_value(old, entry, now)
                transfer.overwrite(self.conn, row["seq"], fact)
                result = UpsertResult("restored", fact, old)
        # its vector after the row's lock is released (a model is slow), as the file embeds a
        # restored value; a failure leaves it to the next search's backfill
        vectors = self.semantic.prepare([result.fact])
        if vectors is not None:
            with self.conn.transaction():
                self.semantic.write(vectors, [result.fact])
        return result

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


def _changed(results: list[UpsertResult]) -> list[Fact]:
    """The facts these writes created or changed (the Store's own rule)."""
    return [result.fact for result in results if result.action not in ("unchanged", PROTECTED)]


def _new_fact(item: tuple, now: int, protected_at: int | None = None) -> Fact:
    slot, key, value, confidence, source, expires = item
    return Fact(
        secrets.token_hex(8), slot, key, value, confidence, 0, source, now, now, now, 0,
        protected_at=protected_at, expires_at=expires,
    )  # fmt: skip


def jsonb(freqs: dict):
    from psycopg.types.json import Jsonb

    return Jsonb(freqs) if freqs else None
