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
from .records import Fact, HistoryEntry, Hit, PruneReport, SlotPolicy, UpsertResult
from .search import DocFreqs, Query, Ranking
from .search.relevance import DEFAULT_FLOOR
from .storage import access, backup, db, health, litestream, migrate, retention, wal
from .vectors.semantic import Semantic

UPSERT_SQL = """
INSERT INTO memory_facts
    (id, slot, key, value, confidence, source, created_at, updated_at, last_accessed,
     protected_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (slot, key) DO UPDATE SET
    value = excluded.value, confidence = excluded.confidence,
    source = excluded.source, updated_at = excluded.updated_at,
    protected_at = coalesce(memory_facts.protected_at, excluded.protected_at)
"""
ARCHIVE_SQL = """
INSERT INTO memory_fact_history
    (fact_id, slot, key, value, confidence, quality, source, created_at, updated_at,
     last_accessed, access_count, reason, changed_at, changed_by)
SELECT id, slot, key, value, confidence, quality, source, created_at, updated_at,
       last_accessed, access_count, ?, ?, ?
FROM memory_facts WHERE seq = ?
"""
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

    def _row(self, slot: str, key: str):
        return self.conn.execute(
            "SELECT * FROM memory_facts WHERE slot = ? AND key = ?", (slot, key)
        ).fetchone()

    def _archive(self, seq: int, reason: str, now: int, by: str | None) -> None:
        self.conn.execute(ARCHIVE_SQL, (reason, now, by, seq))

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
        protect: bool = False,
        allow_protected: bool = True,
    ) -> UpsertResult:
        """Create or update the fact (slot, key). An overwritten value goes to history.

        ``protect``: a person wrote it, so agents may not overwrite or forget it (it stays
        protected until ``unprotect``). ``allow_protected=False`` (what agents pass) refuses to
        change a protected fact with ProtectedFact."""
        item = validation.fact(slot, key, value, confidence, source)
        vectors = self.semantic.prepare([item[2]])  # before the write lock: models can be slow
        with self.transaction():
            result = self._write(item, self.clock(), protect=protect, guard=not allow_protected)
            self.semantic.write(vectors, _changed([result]))
        return result

    @_translated
    def upsert_many(self, items: Iterable[Mapping]) -> list[UpsertResult]:
        """Upsert many facts in one transaction; one invalid item rejects the whole batch."""
        checked = []
        for number, item in enumerate(items):
            try:
                extra = set(item) - {"slot", "key", "value", "confidence", "source"}
                if extra:
                    raise InvalidInput(f"unknown field(s) {sorted(extra)}")
                checked.append(
                    validation.fact(
                        item["slot"],
                        item["key"],
                        item["value"],
                        item.get("confidence", 1.0),
                        item.get("source"),
                    )
                )
            except (KeyError, TypeError) as e:
                raise InvalidInput(f"item {number}: needs slot, key and value ({e!r})") from None
            except InvalidInput as e:
                raise InvalidInput(f"item {number}: {e}") from None
        now = self.clock()
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
                    self.conn.executemany(UPSERT_SQL, batch)
                    batch.clear()
                results.append(self._write(item, now))
            else:
                slot, key, value, confidence, source = item
                fact = Fact(
                    secrets.token_hex(8), slot, key, value, confidence, 0, source, now, now, now, 0
                )
                batch.append((fact.id, *item, now, now, now, None))
                results.append(UpsertResult("created", fact))
            written.add(pair)
        if batch:
            self.conn.executemany(UPSERT_SQL, batch)
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
        slot, key, value, confidence, source = item
        protected_at = now if protect else None
        row = self._row(slot, key)
        if row is None:
            fact_id = secrets.token_hex(8)
            self.conn.execute(
                UPSERT_SQL,
                (fact_id, slot, key, value, confidence, source, now, now, now, protected_at),
            )
            fact = Fact(
                fact_id,
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
                None,
                protected_at,
            )
            return UpsertResult("created", fact)
        old = Fact.from_row(row)
        if old.value == value and old.confidence == confidence:
            if protect and not old.protected:
                self.conn.execute(
                    "UPDATE memory_facts SET protected_at = ? WHERE seq = ?", (now, row["seq"])
                )
                old = dataclasses.replace(old, protected_at=now)
            return UpsertResult("unchanged", old, old)
        if guard and old.protected:
            raise _protected(slot, key, "overwrite")
        self._archive(row["seq"], "update", now, source)
        self.conn.execute(
            UPSERT_SQL,
            (old.id, slot, key, value, confidence, source, now, now, now, protected_at),
        )
        fact = dataclasses.replace(
            old,
            value=value,
            confidence=confidence,
            source=source,
            updated_at=now,
            protected_at=old.protected_at or protected_at,
        )
        return UpsertResult("updated", fact, old)

    @_translated
    def delete(
        self, slot: str, key: str, *, source: str | None = None, allow_protected: bool = True
    ) -> bool:
        """Delete the fact; its last state goes to history. False when there was none.
        ``allow_protected=False`` (what agents pass) refuses a protected fact (ProtectedFact)."""
        slot, key = validation.slot(slot), validation.key(key)
        with self.transaction():
            row = self._row(slot, key)
            if row is None:
                return False
            if not allow_protected and row["protected_at"] is not None:
                raise _protected(slot, key, "forget")
            self._archive(row["seq"], "delete", self.clock(), source)
            self.semantic.forget([row["seq"]])
            self.conn.execute("DELETE FROM memory_facts WHERE seq = ?", (row["seq"],))
        return True

    @_translated
    def rate(self, slot: str, key: str, rating: int, comment: str | None = None) -> Fact:
        """Record human feedback (-3..3); the fact's quality becomes the rounded mean rating."""
        slot, key = validation.slot(slot), validation.key(key)
        if isinstance(rating, bool) or not isinstance(rating, int) or not -3 <= rating <= 3:
            raise InvalidInput(f"rating must be an integer from -3 to 3, not {rating!r}")
        comment = None if comment is None else validation.value(comment)
        with self.transaction():
            row = self._row(slot, key)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to rate")
            self.conn.execute(
                "INSERT INTO memory_feedback (fact_id, rating, comment, at) VALUES (?, ?, ?, ?)",
                (row["id"], rating, comment, self.clock()),
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
            row = self._row(slot, key)
            if row is None:
                raise InvalidInput(f"no fact {slot}/{key} to {verb}")
            if (row[column] is not None) != on:
                self.conn.execute(
                    f"UPDATE memory_facts SET {column} = ? WHERE seq = ?",
                    (self.clock() if on else None, row["seq"]),
                )
                row = self._row(slot, key)
        return Fact.from_row(row)

    # -- reads ------------------------------------------------------------------------------
    @_translated
    def get(self, slot: str, key: str) -> Fact | None:
        row = self._row(validation.slot(slot), validation.key(key))
        return None if row is None else Fact.from_row(row)

    @_translated
    def list_facts(
        self,
        slot: str | Iterable[str] | None = None,
        *,
        limit: int | None = 50,
        order: str = "accessed",
        pinned: bool = False,
    ) -> list[Fact]:
        """Facts of one slot, of several (a list) or of all, most recently accessed first by
        default; ``pinned``: only the pinned ones."""
        if order not in LIST_ORDERS:
            raise InvalidInput(f"order must be one of {', '.join(LIST_ORDERS)}, not {order!r}")
        params: list = (validation.slots(slot) or []) if slot else []
        tests = [f"slot IN ({', '.join('?' * len(params))})"] if slot else []
        if pinned:
            tests.append("pinned_at IS NOT NULL")
        where = f"WHERE {' AND '.join(tests)}" if tests else ""
        sql = f"SELECT * FROM memory_facts {where} ORDER BY {LIST_ORDERS[order]}"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(validation.count(limit, "limit"))
        return [Fact.from_row(row) for row in self.conn.execute(sql, params)]

    @_translated
    def history(self, slot: str, key: str, *, limit: int | None = None) -> list[HistoryEntry]:
        """Old values of (slot, key), newest first: overwrites, deletes and prunes."""
        sql = """SELECT fact_id, slot, key, value, confidence, quality, source, reason, changed_at,
                        changed_by FROM memory_fact_history WHERE slot = ? AND key = ?
                 ORDER BY hid DESC"""
        params: list = [validation.slot(slot), validation.key(key)]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(validation.count(limit, "limit"))
        return [HistoryEntry(*row) for row in self.conn.execute(sql, params)]

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
    ) -> list[Hit]:
        """Facts matching ``text``, best first. Never raises on any text; bumps access stats.

        ``min_relevance`` drops hits less likely than that to be relevant (``Hit.relevance``, in
        [0, 1], the same scale for lexical and hybrid search). When the file has semantic search
        on (``slotmem reindex``) and this process can load sqlite-vec, the lexical and semantic
        legs are fused (``semantic=False``: lexical only).
        """
        slots = validation.slots(slots)
        query = Query.parse(
            text,
            slots=None if slots is None else tuple(slots),
            limit=validation.positive_int(limit, "limit"),
            min_score=None if min_score is None else float(min_score),
            min_relevance=validation.relevance(min_relevance),
            explain=explain,
            semantic=semantic,
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
    def prune_slot(
        self,
        slot: str,
        *,
        cap: int | None = None,
        min_age_days: float | None = None,
        min_access_count: int | None = None,
        dry_run: bool = False,
    ) -> PruneReport:
        """Bring ``slot`` down towards ``cap``: see slotmem.storage.retention. Arguments default to the policy."""
        slot = validation.slot(slot)
        policy = self.policy(slot) or SlotPolicy(slot, 500, 30, 3)
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
        """Prune every slot that has a policy (what cron runs), then checkpoint the WAL."""
        reports = [self.prune_slot(p.slot, dry_run=dry_run) for p in self.policies()]
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
        rows = self.conn.execute(
            "SELECT slot, count(*) FROM memory_facts GROUP BY slot ORDER BY slot"
        )
        return {slot: count for slot, count in rows}

    @_translated
    def stats(self) -> dict:
        conn = self.conn
        return {
            "path": str(self.path),
            "facts": conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0],
            "slots": self.slots(),
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


def _protected(slot: str, key: str, verb: str) -> ProtectedFact:
    return ProtectedFact(
        f"{slot}/{key} is protected (a person wrote it): an agent cannot {verb} it. Ask the "
        f"person, or they can run 'slotmem unprotect {slot}/{key}'"
    )


def _changed(results: list[UpsertResult]) -> list[Fact]:
    return [result.fact for result in results if result.action != "unchanged"]
