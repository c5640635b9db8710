"""The Store's write path: upsert (one fact or many), delete, rate, pin and protect; the rows
they write and when what they write expires."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import operator
from collections.abc import Iterable, Mapping
from itertools import compress, repeat
from typing import TYPE_CHECKING

from .. import validation
from ..errors import InvalidInput, protected_error
from ..records import Fact, created
from ..storage import items as batch_items
from ..storage import rows
from ..storage import tags as fact_tags
from ..storage.tags import PROTECTED, retagged
from .core import Core, _expired, _translated

if TYPE_CHECKING:
    from ..reports import UpsertResult


class Writes(Core):
    """Writing facts: every old value goes to history first."""

    @_translated
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
        """Create or update the fact (slot, key). An overwritten value goes to history.

        ``protect``: a person wrote it, so agents may not overwrite or forget it (it stays
        protected until ``unprotect``). ``allow_protected=False`` (what agents pass) refuses to
        change a protected fact with ProtectedFact.

        ``ttl`` (seconds, a ``timedelta`` or text such as ``"2h"``, ``"3d"``) or ``expires_at``
        (a moment: see ``validation.moment``) makes the fact expire: from then on it is never
        returned, and ``prune`` moves it into history (reason ``expired``). A write without
        either makes the fact permanent again.

        ``tags``: None keeps the fact's tags (a new fact has none); a list replaces them
        (``[]`` removes them all). See ``validation.tags`` for what a tag may be."""
        now = self.clock()
        item = (
            *validation.fact(slot, key, value, confidence, source),
            _expiry(ttl, expires_at, now),
        )
        wanted = None if tags is None else validation.tags(tags)
        vectors = self.semantic.prepare([item[1:3]])  # before the write lock: models can be slow
        with self.transaction():
            result = self._write(item, now, protect=protect, guard=not allow_protected)
            result = self._retag(result, wanted, guard=not allow_protected)
            self.semantic.write(vectors, _changed([result]))
        return result

    @_translated
    def upsert_many(
        self,
        items: Iterable[Mapping],
        *,
        allow_protected: bool = True,
        skip_protected: bool = False,
    ) -> list[UpsertResult]:
        """Upsert many facts in one transaction; one invalid item rejects the whole batch.
        Each item: slot, key, value, and optionally confidence, source, ttl, expires_at, tags
        (as ``upsert``'s).

        ``allow_protected=False`` (what agents pass): an item that would change a protected
        fact (its value, confidence or expiry, in any spelling of its key) rejects the batch
        with ProtectedFact; ``skip_protected=True``: such an item is left out instead, its
        result's action ``"protected"`` (the fact as it is), and the others are written.
        The result of a new key makes its Fact when ``fact`` is first read (a bulk load whose
        results are not read makes none): an UpsertResult like any other."""
        now = self.clock()
        guard = PROTECTED if skip_protected else (not allow_protected)
        with _cycle_collector_paused():
            checked, wanted = batch_items.checked(items, now)
        vectors = self.semantic.prepare(item[1:3] for item in checked)
        with self.transaction():
            results = self._write_all(checked, now, guard=guard)
            if any(tags is not None for tags in wanted):
                results = [
                    self._retag(result, tags, guard=guard) for result, tags in zip(results, wanted)
                ]
            if vectors is not None:  # the leg on: the facts' vectors (their list costs a load)
                self.semantic.write(vectors, _changed(results))
        return results

    def _retag(self, result: UpsertResult, tags: tuple[str, ...] | None, *, guard=False):
        """Inside the write's transaction: the written fact's tags become ``tags`` as
        ``storage.tags.retagged`` decides (the same rule on both backends)."""
        seq = self._seq(result.fact.slot, result.fact.key)
        write, result = retagged(result, tags, fact_tags.of_seq(self.conn, seq), guard)
        if write is not None:
            fact_tags.replace(self.conn, seq, write)
        return result

    def _seq(self, slot: str, key: str) -> int:
        row = self.conn.execute(
            "SELECT seq FROM memory_facts WHERE slot = ? AND key = ?", (slot, key)
        ).fetchone()
        return row[0]

    def _write_all(self, items: list[tuple], now: int, *, guard=False) -> list[UpsertResult]:
        """New keys go in with multi-row statements (``rows.upsert_rows``); keys that exist or
        repeat, in any spelling (``Owner`` for ``owner``: validation.key_form), take _write's
        path (``guard``: as there)."""
        forms = list(map(validation.key_form, map(_KEY, items)))
        existing = self._existing(items, forms)
        ids = _new_ids(len(items))
        if not existing and _distinct(items, forms):
            return self._create_all(items, forms, ids, now)
        results: list[UpsertResult] = []
        batch: list[tuple] = []
        written: set[tuple[str, str]] = set()
        for start in range(0, len(items), PAUSED_ITEMS):
            end = start + PAUSED_ITEMS
            with _cycle_collector_paused():
                for item, form, fact_id in zip(items[start:end], forms[start:end], ids[start:end]):
                    pair = (item[0], form)
                    if pair in existing or pair in written:
                        if batch:
                            rows.upsert_rows(self.conn, batch)
                            batch.clear()
                        results.append(self._write(item, now, guard=guard))
                    else:  # _new_fact and _upsert_row, written out: a bulk load's cost per fact
                        slot, key, value, confidence, source, expires = item
                        batch.append(
                            (fact_id, slot, key, value, confidence, source, now, now, now, None,
                             expires, form)
                        )  # fmt: skip
                        results.extend(created([fact_id], [item], now))
                    written.add(pair)
        if batch:
            rows.upsert_rows(self.conn, batch)
        return results

    def _create_all(
        self, items: list[tuple], forms: list[str], ids: list[str], now: int
    ) -> list[UpsertResult]:
        """Every item a new key (none in the file, none twice): their rows written by
        ``rows.upsert_rows`` per run of PAUSED_ITEMS, and their results (``records.created``)."""
        results: list[UpsertResult] = []
        for start in range(0, len(items), PAUSED_ITEMS):
            part = slice(start, start + PAUSED_ITEMS)
            with _cycle_collector_paused():
                # each row zipped from the items' columns (in C: a comprehension that unpacked
                # each item cost 0.3 us a fact), in rows.UPSERT_SQL's order
                slots, keys, values, confidences, sources, expiries = zip(*items[part])
                when = repeat(now)
                rows.upsert_rows(
                    self.conn,
                    list(zip(ids[part], slots, keys, values, confidences, sources, when, when,
                             when, repeat(None), expiries, forms[part])),
                )  # fmt: skip
                results += created(ids[part], items[part], now)
        return results

    def _existing(self, items: list[tuple], forms: list[str]) -> set[tuple[str, str]]:
        """The (slot, key form) of the items' keys (``forms``: their key forms) in the file:
        per slot, its key forms read whole when it holds no more facts than the batch brings
        it (a bulk load into a new or small slot: one short read), else the batch's forms
        looked up, handed over as one JSON array."""
        slots = list(map(_SLOT, items))
        found: set[tuple[str, str]] = set()
        names = set(slots)
        for slot in names:
            slot_forms = (
                forms if len(names) == 1 else list(compress(forms, map(slot.__eq__, slots)))
            )
            held = self.conn.execute(
                "SELECT key_form FROM memory_facts WHERE slot = ? LIMIT +?",
                (slot, len(slot_forms) + 1),
            ).fetchall()
            if len(held) <= len(slot_forms):  # every key form of the slot
                if held:  # (a new slot holds none: no set of the batch's forms to make)
                    asked = set(slot_forms)
                    found.update((slot, form) for (form,) in held if form in asked)
                continue
            found.update((slot, form) for form in self._held(slot, slot_forms))
        return found

    def _held(self, slot: str, forms: list[str]) -> list[str]:
        """Which of ``forms`` the slot holds: one statement, the forms as one JSON array."""
        import json  # here: a read (a hook's `slotmem context`) needs none of it

        return [
            form
            for (form,) in self.conn.execute(
                """SELECT key_form FROM memory_facts
                   WHERE slot = ? AND key_form IN (SELECT value FROM json_each(?))""",
                (slot, json.dumps(forms)),
            )
        ]

    def _write(self, item: tuple, now: int, *, protect: bool = False, guard=False) -> UpsertResult:
        """Inside a transaction: write one checked item. ``guard``: a change to a protected fact
        raises ProtectedFact (True) or is left out, answered ``"protected"`` (PROTECTED)."""
        from ..reports import UpsertResult  # here: a read loads none of reports.py

        slot, key, value, confidence, source, expires = item
        protected_at = now if protect else None
        row = self._row(slot, key)
        if row is not None and _expired(row, now):  # gone for every reader: a new fact
            self._remove(row["seq"], "expired", now, source)
            row = None
        if row is None:
            fact = _new_fact(item, now, protected_at)
            self.conn.execute(rows.UPSERT_SQL, _upsert_row(fact))
            return UpsertResult("created", fact)
        old = Fact.from_row(row)
        if (old.value, old.confidence, old.expires_at) == (value, confidence, expires):
            if protect and not old.protected:
                self.conn.execute(
                    "UPDATE memory_facts SET protected_at = ? WHERE seq = ?", (now, row["seq"])
                )
                old = dataclasses.replace(old, protected_at=now)
            return UpsertResult("unchanged", old, old)
        if guard and old.protected:
            if guard == PROTECTED:
                return UpsertResult(PROTECTED, old, old)
            raise protected_error(slot, old.key, "overwrite")
        rows.archive(self.conn, row["seq"], "update", now, source)
        fact = dataclasses.replace(
            old,
            value=value,
            confidence=confidence,
            source=source,
            updated_at=now,
            expires_at=expires,
            protected_at=old.protected_at or protected_at,
        )
        self.conn.execute(rows.UPSERT_SQL, _upsert_row(fact))
        return UpsertResult("updated", fact, old)

    def _remove(self, seq: int, reason: str, now: int, by: str | None) -> None:
        """Inside a transaction: the row into history, out of every index, out of the table."""
        rows.remove(self.conn, [seq], reason, now, by, self.semantic.forget)

    @_translated
    def delete(
        self, slot: str, key: str, *, source: str | None = None, allow_protected: bool = True
    ) -> bool:
        """Delete the fact; its last state goes to history. False when there was none (an
        expired fact is none: ``prune`` removes it). ``allow_protected=False`` (what agents
        pass) refuses a protected fact (ProtectedFact)."""
        slot, key = validation.slot(slot), validation.key(key)
        with self.transaction():
            now = self.clock()
            row = self._row(slot, key, now)
            if row is None:
                return False
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], "forget")
            self._remove(row["seq"], "delete", now, source)
        return True

    @_translated
    def renew(self, slot: str, key: str, ttl, *, allow_protected: bool = True) -> Fact | None:
        """Make the live fact slot/key expire ``ttl`` from now (a read that keeps a fact alive:
        LangGraph's ``refresh_ttl``). Its value, its update time and its history stay as they
        were. None when there is no such fact or it never expires (it stays permanent).
        ``allow_protected=False`` refuses a protected fact (ProtectedFact)."""
        slot, key = validation.slot(slot), validation.key(key)
        lifetime = validation.duration(ttl)
        with self.transaction():
            now = self.clock()
            row = self._row(slot, key, now)
            if row is None or row["expires_at"] is None:
                return None
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], "renew")
            self.conn.execute(
                "UPDATE memory_facts SET expires_at = ? WHERE seq = ?", (now + lifetime, row["seq"])
            )
        return dataclasses.replace(Fact.from_row(row), expires_at=now + lifetime)

    @_translated
    def rate(
        self,
        slot: str,
        key: str,
        rating: int,
        comment: str | None = None,
        *,
        allow_protected: bool = True,
    ) -> Fact:
        """Record human feedback (-3..3); the fact's quality becomes the rounded mean rating.
        ``allow_protected=False`` (what agents pass) refuses to rate a protected fact
        (ProtectedFact): an agent's rating must not demote or, rated badly, help prune what a
        person wrote."""
        slot, key, rating = validation.slot(slot), validation.key(key), validation.rating(rating)
        comment = None if comment is None else validation.value(comment)
        with self.transaction():
            now = self.clock()
            row = self._row(slot, key, now)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to rate")
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], "rate")
            self.conn.execute(
                "INSERT INTO memory_feedback (fact_id, rating, comment, at) VALUES (?, ?, ?, ?)",
                (row["id"], rating, comment, now),
            )
            self.conn.execute(
                """UPDATE memory_facts SET quality = (
                       SELECT max(-3, min(3, cast(round(avg(rating)) AS INTEGER)))
                       FROM memory_feedback WHERE fact_id = ?) WHERE seq = ?""",
                (row["id"], row["seq"]),
            )
            return Fact.from_row(self._row(slot, row["key"]))

    @_translated
    def pin(self, slot: str, key: str) -> Fact:
        """Pin the fact: it is in every context built for its slot, first, whatever the
        message, and prune never removes it. Pinning a pinned fact changes nothing."""
        return self._mark(slot, key, "pinned_at", True, "pin")

    @_translated
    def unpin(self, slot: str, key: str) -> Fact:
        """Undo ``pin``: the fact competes on relevance again and may be pruned."""
        return self._mark(slot, key, "pinned_at", False, "unpin")

    @_translated
    def protect(self, slot: str, key: str) -> Fact:
        """Protect the fact from agents: they may read it, not overwrite or forget it (unless
        started with leave to). Facts written with the command line are protected already."""
        return self._mark(slot, key, "protected_at", True, "protect")

    @_translated
    def unprotect(self, slot: str, key: str) -> Fact:
        """Undo ``protect``: agents may overwrite and forget the fact again."""
        return self._mark(slot, key, "protected_at", False, "unprotect")

    @_translated
    def tag(self, slot: str, key: str, *tags: str, allow_protected: bool = True) -> Fact:
        """Add ``tags`` to the fact slot/key (those it has stay; at most
        ``validation.MAX_TAGS`` in all). ``allow_protected=False`` refuses a protected fact."""
        return self._change_tags(slot, key, tags, True, allow_protected)

    @_translated
    def untag(self, slot: str, key: str, *tags: str, allow_protected: bool = True) -> Fact:
        """Remove ``tags`` from the fact slot/key (a tag it does not have is no error)."""
        return self._change_tags(slot, key, tags, False, allow_protected)

    def _change_tags(
        self, slot: str, key: str, tags: tuple, on: bool, allow_protected: bool
    ) -> Fact:
        slot, key = validation.slot(slot), validation.key(key)
        checked = validation.tags(tags)
        if not checked:
            raise InvalidInput("give at least one tag")
        verb = "tag" if on else "untag"
        with self.transaction():
            now = self.clock()
            row = self._row(slot, key, now)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            if not allow_protected and row["protected_at"] is not None:
                raise protected_error(slot, row["key"], verb)
            (fact_tags.add if on else fact_tags.remove)(self.conn, row["seq"], checked)
            tags_now = fact_tags.of_seq(self.conn, row["seq"])
        return dataclasses.replace(Fact.from_row(row), tags=tags_now)

    def _mark(self, slot: str, key: str, column: str, on: bool, verb: str) -> Fact:
        """Set (to now) or clear a fact's ``pinned_at`` or ``protected_at``; a fact already so
        is left as it is."""
        slot, key = validation.slot(slot), validation.key(key)
        with self.transaction():
            now = self.clock()
            row = self._row(slot, key, now)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            if (row[column] is not None) != on:
                self.conn.execute(
                    f"UPDATE memory_facts SET {column} = ? WHERE seq = ?",
                    (now if on else None, row["seq"]),
                )
                row = self._row(slot, key)
            tags_now = fact_tags.of_seq(self.conn, row["seq"])
        return dataclasses.replace(Fact.from_row(row), tags=tags_now)


def _changed(results: list[UpsertResult]) -> list[Fact]:
    return [result.fact for result in results if result.action not in ("unchanged", PROTECTED)]


_SLOT = operator.itemgetter(0)
_KEY = operator.itemgetter(1)


def _distinct(items: list[tuple], forms: list[str]) -> bool:
    """No two items of one slot with one key form."""
    return len(set(forms)) == len(items) or len(set(zip(map(_SLOT, items), forms))) == len(items)


_expiry = validation.expiry  # shared with slotmem.pg


# Items written with Python's cycle collector paused: the objects a bulk load makes (facts,
# rows, results) hold no cycles, and the collections their number set off (each full one walks
# every live object) cost a 100,000-fact load about 4 µs per fact. The collector runs again
# between runs of this many items, so other threads' cycles wait a fraction of a second at most
# (a multiple of rows.MOST_ROWS: where SQLite allows 24,576 bound parameters or more, each run
# is written in whole multi-row statements; with fewer, a run ends in a shorter one).
PAUSED_ITEMS = 4096


@contextlib.contextmanager
def _cycle_collector_paused():
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _new_ids(count: int) -> list[str]:
    """``count`` new fact ids: 16 random hex digits each, as ``secrets.token_hex(8)`` makes
    them, from one read of the system's random source."""
    import secrets  # here: a read (a hook's `slotmem context`) needs none of it

    return secrets.token_bytes(8 * count).hex(" ", 8).split(" ") if count else []


def _new_fact(item: tuple, now: int, protected_at: int | None = None) -> Fact:
    slot, key, value, confidence, source, expires = item
    return Fact(
        _new_ids(1)[0],
        slot,
        key,
        value,
        confidence,
        0,
        source,
        now,
        now,
        now,
        0,
        protected_at=protected_at,
        expires_at=expires,
    )


def _upsert_row(fact: Fact) -> tuple:
    """rows.UPSERT_SQL's parameters for ``fact``."""
    return (
        fact.id,
        fact.slot,
        fact.key,
        fact.value,
        fact.confidence,
        fact.source,
        fact.created_at,
        fact.updated_at,
        fact.last_accessed,
        fact.protected_at,
        fact.expires_at,
        validation.key_form(fact.key),
    )
