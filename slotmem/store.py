"""Store: the facade over one slotmem .db file."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import secrets
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from . import search, validation
from .errors import InvalidInput, ProtectedFact, StorageError
from .records import (
    HISTORY_REASONS,
    Change,
    ChangeReport,
    Fact,
    HistoryEntry,
    Hit,
    PruneReport,
    SlotPolicy,
    UpsertResult,
)
from .search import DocFreqs, Query, Ranking, duplicates
from .search.relevance import DEFAULT_FLOOR
from .storage import (
    access,
    backup,
    db,
    health,
    lifecycle,
    litestream,
    migrate,
    retention,
    rows,
    transfer,
    wal,
)
from .vectors.semantic import Semantic

log = logging.getLogger("slotmem")
LIST_ORDERS = {
    "accessed": "last_accessed DESC, seq DESC",
    "pinned": "pinned_at IS NULL, pinned_at, seq",  # pinned facts first, in the order pinned
    "used": "access_count DESC, last_accessed DESC, seq DESC",
    "updated": "updated_at DESC, seq DESC",
    "created": "seq DESC",
    "key": "slot, key",
}


def _translated(method):
    """Driver errors leave the Store as SlotmemErrors that name the file and the fix."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except db.DatabaseError as e:
            raise db.translate(e, self.path) from e

    return wrapper


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Store:
    """Facts in slots, in one SQLite file. Safe to share between threads and processes."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        create: bool = False,
        readonly: bool | None = None,
        clock: Callable[[], int] = now_ms,
        ranking: Ranking | None = None,
    ):
        """Open the slotmem file at ``path``. ``create=True`` makes it (and its directory) when
        it does not exist; otherwise a missing file is a DatabaseNotFound. A file that is not
        slotmem's (another application's SQLite database) is refused and left untouched.
        ``readonly`` (default: when this process cannot write the file or its directory, or the
        file is a follower kept by ``slotmem follow``) opens it for reading only: get, list,
        search (without access tracking), doctor and stats work, writes raise
        ReadOnlyDatabase."""
        self.path = db.checked_path(path)
        exists = self.path.exists()
        self.follower = exists and litestream.is_follower(self.path)
        if self.follower and readonly is False:
            raise InvalidInput(f"{self.path} is a follower (slotmem follow): it is only read")
        if exists:
            self.readonly = not db.writable(self.path) if readonly is None else bool(readonly)
            self.readonly = self.readonly or self.follower
        elif not create:
            raise db.not_found(self.path)
        elif readonly:
            raise InvalidInput(f"{self.path} does not exist: a read-only store cannot create it")
        else:
            _make_directory(self.path.parent)
            self.readonly = False
        self.clock = clock
        self.ranking = ranking or Ranking()
        self._connections = db.Connections(
            self.path, readonly=self.readonly, create=not exists, check=migrate.check_owner
        )
        try:
            self.migrated = migrate.migrate(self.conn, self.path, readonly=self.readonly)
        except BaseException:
            self._connections.close()
            raise
        self.semantic = Semantic(self._connections, clock)
        self._doc_freqs = DocFreqs()
        self._accesses = access.Accesses(self._connections)

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def conn(self):
        """This thread's connection (a new one after fork)."""
        return self._connections.get()

    def transaction(self):
        """``with store.transaction(): ...`` groups writes into one BEGIN IMMEDIATE transaction."""
        return db.transaction(self.conn, self.path)

    def close(self) -> None:
        self._accesses.close()
        self.semantic.close()
        self._connections.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _row(self, slot: str, key: str, now: int | None = None):
        """The row of slot/key; with ``now``, None when it has expired by then."""
        row = self.conn.execute(
            "SELECT * FROM memory_facts WHERE slot = ? AND key = ?", (slot, key)
        ).fetchone()
        return None if row is None or (now is not None and _expired(row, now)) else row

    def _archive(self, seq: int, reason: str, now: int, by: str | None) -> None:
        rows.archive(self.conn, seq, reason, now, by)

    # -- writes -----------------------------------------------------------------------------
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
    ) -> UpsertResult:
        """Create or update the fact (slot, key). An overwritten value goes to history.

        ``protect``: a person wrote it, so agents may not overwrite or forget it (it stays
        protected until ``unprotect``). ``allow_protected=False`` (what agents pass) refuses to
        change a protected fact with ProtectedFact.

        ``ttl`` (seconds, a ``timedelta`` or text such as ``"2h"``, ``"3d"``) or ``expires_at``
        (a moment: see ``validation.moment``) makes the fact expire: from then on it is never
        returned, and ``prune`` moves it into history (reason ``expired``). A write without
        either makes the fact permanent again."""
        now = self.clock()
        item = (
            *validation.fact(slot, key, value, confidence, source),
            _expiry(ttl, expires_at, now),
        )
        vectors = self.semantic.prepare([item[2]])  # before the write lock: models can be slow
        with self.transaction():
            result = self._write(item, now, protect=protect, guard=not allow_protected)
            self.semantic.write(vectors, _changed([result]))
        return result

    @_translated
    def upsert_many(self, items: Iterable[Mapping]) -> list[UpsertResult]:
        """Upsert many facts in one transaction; one invalid item rejects the whole batch.
        Each item: slot, key, value, and optionally confidence, source, ttl, expires_at."""
        now = self.clock()
        checked = []
        for number, item in enumerate(items):
            try:
                extra = set(item) - {"slot", "key", "value", "confidence", "source", *EXPIRY}
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
                        _expiry(item.get("ttl"), item.get("expires_at"), now),
                    )
                )
            except (KeyError, TypeError) as e:
                raise InvalidInput(f"item {number}: needs slot, key and value ({e!r})") from None
            except InvalidInput as e:
                raise InvalidInput(f"item {number}: {e}") from None
        vectors = self.semantic.prepare([item[2] for item in checked])
        with self.transaction():
            results = self._write_all(checked, now)
            self.semantic.write(vectors, _changed(results))
        return results

    def _write_all(self, items: list[tuple], now: int) -> list[UpsertResult]:
        """New keys go in with one executemany; keys that exist (or repeat) take _write's path."""
        existing = self._existing(items)
        results: list[UpsertResult] = []
        batch: list[tuple] = []
        written: set[tuple[str, str]] = set()
        for item in items:
            pair = item[:2]
            if pair in existing or pair in written:
                if batch:
                    self.conn.executemany(rows.UPSERT_SQL, batch)
                    batch.clear()
                results.append(self._write(item, now))
            else:
                fact = _new_fact(item, now)
                batch.append(_upsert_row(fact))
                results.append(UpsertResult("created", fact))
            written.add(pair)
        if batch:
            self.conn.executemany(rows.UPSERT_SQL, batch)
        return results

    def _existing(self, items: list[tuple], chunk: int = 500) -> set[tuple[str, str]]:
        by_slot: dict[str, list[str]] = {}
        for slot, key, *_ in items:
            by_slot.setdefault(slot, []).append(key)
        found: set[tuple[str, str]] = set()
        for slot, keys in by_slot.items():
            for start in range(0, len(keys), chunk):
                part = keys[start : start + chunk]
                sql = f"SELECT key FROM memory_facts WHERE slot = ? AND key IN ({', '.join('?' * len(part))})"
                found.update((slot, key) for (key,) in self.conn.execute(sql, [slot, *part]))
        return found

    def _write(
        self, item: tuple, now: int, *, protect: bool = False, guard: bool = False
    ) -> UpsertResult:
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
            raise _protected(slot, key, "overwrite")
        self._archive(row["seq"], "update", now, source)
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
        self._archive(seq, reason, now, by)
        self.semantic.forget([seq])
        self.conn.execute("DELETE FROM memory_facts WHERE seq = ?", (seq,))

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
                raise _protected(slot, key, "forget")
            self._remove(row["seq"], "delete", now, source)
        return True

    @_translated
    def rate(self, slot: str, key: str, rating: int, comment: str | None = None) -> Fact:
        """Record human feedback (-3..3); the fact's quality becomes the rounded mean rating."""
        slot, key = validation.slot(slot), validation.key(key)
        if isinstance(rating, bool) or not isinstance(rating, int) or not -3 <= rating <= 3:
            raise InvalidInput(f"rating must be an integer from -3 to 3, not {rating!r}")
        comment = None if comment is None else validation.value(comment)
        with self.transaction():
            now = self.clock()
            row = self._row(slot, key, now)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to rate")
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
            return Fact.from_row(self._row(slot, key))

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
        return Fact.from_row(row)

    # -- reads ------------------------------------------------------------------------------
    @_translated
    def get(self, slot: str, key: str) -> Fact | None:
        """The fact slot/key, or None (none, or expired)."""
        row = self._row(validation.slot(slot), validation.key(key), self.clock())
        return None if row is None else Fact.from_row(row)

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
    ) -> list[Fact]:
        """Facts of one slot, of several (a list) or of all, most recently accessed first by
        default; ``pinned``: only the pinned ones; ``since``/``until``: only those last updated
        in that window (``validation.window``). Expired facts are never listed."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
        now = self.clock()
        start, stop = validation.window(since, until, now)
        params: list = [now]
        tests = [rows.live("?")]
        if slot:
            names = validation.slots(slot) or []
            tests.append(f"slot IN ({', '.join('?' * len(names))})")
            params.extend(names)
        for test, value in (("updated_at >= ?", start), ("updated_at < ?", stop)):
            if value is not None:
                tests.append(test)
                params.append(value)
        if pinned:
            tests.append("pinned_at IS NOT NULL")
        sql = (
            f"SELECT * FROM memory_facts WHERE {' AND '.join(tests)} ORDER BY {LIST_ORDERS[order]}"
        )
        if limit is not None:
            sql += " LIMIT ?"
            params.append(validation.count(limit, "limit"))
        return [Fact.from_row(row) for row in self.conn.execute(sql, params)]

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
    ) -> list[Hit]:
        """Facts matching ``text``, best first. Never raises on any text; bumps access stats.

        ``min_relevance`` drops hits less likely than that to be relevant (``Hit.relevance``, in
        [0, 1], the same scale for lexical and hybrid search). When the file has semantic search
        on (``slotmem reindex``) and this process can load sqlite-vec, the lexical and semantic
        legs are fused (``semantic=False``: lexical only). ``since``/``until`` keep the facts
        last updated in that window. Expired facts are never returned.
        """
        slots = validation.slots(slots)
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
        )
        with self._accesses.window(track_access) as record:
            hits = search.run(
                self.conn,
                query,
                ranking=self.ranking,
                now=self.clock(),
                freqs=self._doc_freqs,
                vectors=self.semantic.leg() if semantic else None,
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

    # -- deprecated ---------------------------------------------------------------------------
    def flush(self, transcript, model=None, **options):
        """Deprecated: use ``slotmem.ingest.flush(store, transcript, model, ...)``. The flusher
        is a client of the Store, not a part of it."""
        warnings.warn(
            "Store.flush is deprecated: use slotmem.ingest.flush(store, transcript, model)",
            DeprecationWarning,
            stacklevel=2,
        )
        from .ingest.flusher import flush

        return flush(self, transcript, model, **options)

    # -- retention --------------------------------------------------------------------------
    @_translated
    def policies(self) -> list[SlotPolicy]:
        rows = self.conn.execute("SELECT * FROM memory_slots ORDER BY slot").fetchall()
        return [SlotPolicy(*row) for row in rows]

    @_translated
    def policy(self, slot: str) -> SlotPolicy | None:
        row = self.conn.execute(
            "SELECT * FROM memory_slots WHERE slot = ?", (validation.slot(slot),)
        ).fetchone()
        return None if row is None else SlotPolicy(*row)

    @_translated
    def set_policy(
        self,
        slot: str,
        *,
        cap: int,
        min_age_days: float = 30,
        min_access_count: int = 3,
        description: str | None = None,
        min_relevance: float | str | None = None,
    ) -> SlotPolicy:
        """Set the retention policy `slotmem prune` applies to ``slot``, and the slot's floor
        for what reaches a prompt (``min_relevance``: a probability; ``"default"`` goes back to
        slotmem's default; None keeps what the slot had, as for ``description``)."""
        reset = min_relevance == "default"
        policy = SlotPolicy(
            validation.slot(slot),
            validation.count(cap, "cap"),
            validation.non_negative(min_age_days, "min_age_days"),
            validation.count(min_access_count, "min_access_count"),
            None if description is None else validation.value(description),
            None if reset else validation.relevance(min_relevance),
        )
        floor = "NULL" if reset else "coalesce(excluded.min_relevance, min_relevance)"
        with self.transaction():
            self.conn.execute(
                "INSERT INTO memory_slots VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (slot) DO UPDATE "
                "SET cap = excluded.cap, min_age_days = excluded.min_age_days, "
                "min_access_count = excluded.min_access_count, "
                "description = coalesce(excluded.description, description), "
                f"min_relevance = {floor}",
                dataclasses.astuple(policy),
            )
            saved = self.policy(slot)
        assert saved is not None  # written in this transaction
        return saved

    @_translated
    def min_relevance(self, slot: str | None = None) -> float:
        """The floor of what reaches a prompt from ``slot``: its policy's, else the default
        (slotmem.search.relevance.DEFAULT_FLOOR, which no slot gives)."""
        policy = None if slot is None else self.policy(slot)
        if policy is None or policy.min_relevance is None:
            return DEFAULT_FLOOR
        return policy.min_relevance

    @_translated
    def default_policy(self) -> SlotPolicy:
        """The retention policy of every slot without one of its own (slot ``"*"``):
        slotmem.storage.retention.DEFAULT_POLICY until ``set_default_policy``."""
        return retention.default_policy(self.conn)

    @_translated
    def set_default_policy(
        self, *, cap: int, min_age_days: float = 30, min_access_count: int = 3
    ) -> SlotPolicy:
        """Set the policy ``prune`` applies to slots that have none of their own."""
        policy = SlotPolicy(
            "*",
            validation.count(cap, "cap"),
            validation.non_negative(min_age_days, "min_age_days"),
            validation.count(min_access_count, "min_access_count"),
        )
        with self.transaction():
            retention.set_default(self.conn, policy)
        return self.default_policy()

    @_translated
    def prune_slot(
        self,
        slot: str,
        *,
        cap: int | None = None,
        min_age_days: float | None = None,
        min_access_count: int | None = None,
        dry_run: bool = False,
    ) -> PruneReport:
        """Remove ``slot``'s expired facts and bring it down towards ``cap``: see
        slotmem.storage.retention. Arguments default to the slot's policy, else the default
        policy."""
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
        gate = contextlib.nullcontext() if dry_run else self._accesses.exclusive()
        with gate, self.transaction():
            return retention.prune_slot(
                self.conn,
                slot,
                cap,
                age,
                count,
                now=self.clock(),
                dry_run=dry_run,
                archive=self._archive,
                forget=self.semantic.forget,
            )

    @_translated
    def prune(self, *, dry_run: bool = False) -> list[PruneReport]:
        """Prune every slot (what cron runs): each by its policy, a slot without one by the
        default policy; then checkpoint the WAL."""
        slots = {p.slot for p in self.policies()}
        slots.update(
            slot for (slot,) in self.conn.execute("SELECT DISTINCT slot FROM memory_facts")
        )
        reports = [self.prune_slot(slot, dry_run=dry_run) for slot in sorted(slots)]
        if not dry_run and not self.checkpoint():
            log.warning(
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
        entry = lifecycle.find_entry(self.conn, slot, key, version)
        vectors = self.semantic.prepare([entry.value])
        with self.transaction():
            fact, previous = lifecycle.restore(self.conn, entry, now=self.clock(), by=by)
            self.semantic.write(vectors, [fact])
        return UpsertResult("restored", fact, previous)

    @_translated
    def undo_flush(self, source: str, *, dry_run: bool = False) -> ChangeReport:
        """Revert what flushes of ``source`` (a transcript name as the flush reported it, or a
        whole ``flush:...`` provenance) wrote: each fact whose value one wrote goes back to its
        value before (``reverted``), or away when a flush created it (``deleted``); facts
        changed since are ``kept``. Every value replaced goes to history (reason ``undo``)."""
        source = validation.text(source, "source", validation.MAX_SOURCE_CHARS, single_line=True)
        planned, written = lifecycle.undo_flush(
            self.conn, source, now=self.clock(), dry_run=True, forget=self.semantic.forget
        )
        if dry_run:
            return planned
        vectors = self.semantic.prepare([fact.value for fact in written])
        with self._accesses.exclusive(), self.transaction():
            report, written = lifecycle.undo_flush(
                self.conn, source, now=self.clock(), dry_run=False, forget=self.semantic.forget
            )
            self.semantic.write(vectors, written)
        return report

    @_translated
    def export(self, slot: str | None = None) -> list[dict]:
        """The records of an export (slotmem.storage.transfer): a header, then every fact of
        ``slot`` (None: of the file) with every column, its history, feedback and policies."""
        slot = None if slot is None else validation.slot(slot)
        return list(transfer.export(self.conn, slot, self.clock()))

    @_translated
    def import_records(
        self,
        lines: Iterable[str],
        *,
        mode: str = "merge",
        dry_run: bool = False,
        name: str = "the file",
    ) -> ChangeReport:
        """Import an export's JSON lines (``mode``: merge, replace or skip-existing; see
        slotmem.storage.transfer.apply). Every line is checked first, as any write is, and
        scanned as the flusher scans facts: a bad line is an InvalidInput naming it (``name``
        line N) and nothing is written. Values are embedded when semantic search is on."""
        if mode not in transfer.MODES:
            raise InvalidInput(f"mode must be one of {', '.join(transfer.MODES)}, not {mode!r}")
        parsed = transfer.read(lines, name, self.clock())
        if dry_run:
            return transfer.apply(
                self.conn, parsed, mode, now=self.clock(), dry_run=True, forget=self.semantic.forget
            )[0]
        vectors = self.semantic.prepare([fact.value for _, fact in parsed.facts])
        with self._accesses.exclusive(), self.transaction():
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
        """Near-duplicate pairs of facts in ``slot`` (None: in each slot), most similar first:
        by vector similarity when the file has semantic search on (``semantic=False``: by
        lexical overlap), at least ``threshold`` (default: the method's, in
        slotmem.search.duplicates)."""
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
        return sorted(found, key=lambda pair: (-pair.similarity, pair.slot, pair.keep.key))

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
        (reason ``merge``). A fact already merged away is not merged again."""
        report = ChangeReport(dry_run=dry_run)
        pairs = self.duplicates(slot, threshold=threshold, semantic=semantic)
        with contextlib.ExitStack() as stack:
            if not dry_run:
                stack.enter_context(self._accesses.exclusive())
                stack.enter_context(self.transaction())
            gone: set[str] = set()
            for pair in pairs:
                if pair.keep.id in gone or pair.drop.id in gone:
                    continue
                gone.add(pair.drop.id)
                note = (
                    f"merged into {pair.keep.key} ({pair.method} similarity {pair.similarity:.2f})"
                )
                report.changes.append(
                    Change(
                        "merged", pair.slot, pair.drop.key, pair.keep.value, pair.drop.value, note
                    )
                )
                if not dry_run:
                    lifecycle.merge(
                        self.conn,
                        pair.keep,
                        pair.drop,
                        now=self.clock(),
                        forget=self.semantic.forget,
                    )
        return report

    # -- health -------------------------------------------------------------------------------
    @_translated
    def doctor(self) -> list[dict]:
        """One row per check (name, ok, detail, and the fix when not ok): integrity, the
        full-text indexes, the schema, the semantic leg, the journal mode."""
        conn = self.conn
        journal = health.journal_check(conn, self._connections.immutable, self.follower)
        wal_row = wal.check(conn, self.path, can_checkpoint=not self.readonly)
        return [*health.checks(conn), *self.semantic.checks(), journal, wal_row]

    @_translated
    def repair(self) -> list[str]:
        """Rebuild what is derived (the full-text indexes, the vector index) from what is true
        (memory_facts, memory_embeddings). Returns what was done."""
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

    # -- introspection ----------------------------------------------------------------------
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


def _make_directory(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError(
            f"cannot create the directory {directory} ({e.strerror}): create it, or give "
            "a path in a directory this user may write"
        ) from None


def _changed(results: list[UpsertResult]) -> list[Fact]:
    return [result.fact for result in results if result.action != "unchanged"]


EXPIRY = ("ttl", "expires_at")


def _expiry(ttl, expires_at, now: int) -> int | None:
    """When a fact written now expires: ``ttl`` after now, or at ``expires_at`` (None: never)."""
    if ttl is not None and expires_at is not None:
        raise InvalidInput("give ttl or expires_at, not both")
    if ttl is not None:
        return now + validation.duration(ttl)
    if expires_at is None:
        return None
    moment = validation.moment(expires_at, now, "expires_at")
    if moment <= now:
        raise InvalidInput("expires_at is not in the future")
    return moment


def _expired(row, now: int) -> bool:
    return row["expires_at"] is not None and row["expires_at"] <= now


def _new_fact(item: tuple, now: int, protected_at: int | None = None) -> Fact:
    slot, key, value, confidence, source, expires = item
    return Fact(
        secrets.token_hex(8),
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
    )


def _protected(slot: str, key: str, verb: str) -> ProtectedFact:
    return ProtectedFact(
        f"{slot}/{key} is protected (a person wrote it): an agent cannot {verb} it. Ask the "
        f"person, or they can run 'slotmem unprotect {slot}/{key}'"
    )
