"""PostgresStore's plumbing: opening a memory (its migrations), this thread's connection, the
memory's lock, and the one-line refusal of what a PostgreSQL memory does not do (yet)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from .. import validation
from ..errors import file_only
from ..search import Ranking
from . import search as pg_search
from . import server
from .target import parse
from .vectors import PgVectors

log = logging.getLogger(__name__)

FILE_ONLY = {"backup", "checkpoint"}  # WAL checkpoints and file copies: the file's own


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Core:
    """What every part of a PostgresStore stands on: the target, its connections, its lock."""

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
        self._refresher: threading.Thread | None = None
        self._refresher_lock = threading.Lock()
        self.semantic = PgVectors(self._connections, clock, self.target.memory, self.readonly)
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

    def refresh_soon(self) -> None:
        """Refresh the lexical statistics in a background thread (one at a time in this
        process; skipped when another process holds the memory's lock): the search that found
        them stale does not wait for it."""
        if self.readonly:
            return
        with self._refresher_lock:
            if self._refresher is not None and self._refresher.is_alive():
                return
            self._refresher = threading.Thread(
                target=self._refresh_quietly, name="slotmem-pg-statistics", daemon=True
            )
            self._refresher.start()

    def _refresh_quietly(self) -> None:
        try:
            conn = self.conn  # this thread's own
            with conn.transaction():
                taken = conn.execute(
                    "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0)) AS taken",
                    (server.lock_key(self.target.memory),),
                ).fetchone()["taken"]
                if taken:
                    pg_search.refresh(conn, self.clock())
        except Exception as e:  # noqa: BLE001 - a background refresh must not kill anything
            log.warning("refreshing the statistics of %s failed: %s", self.target, e)

    def close(self) -> None:
        self.semantic.close()
        refresher = self._refresher
        if refresher is not None:
            refresher.join(30)  # its connection closes below
        self._connections.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __getattr__(self, name: str):
        if name in FILE_ONLY:
            raise file_only(name)
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


def _expired(row, now: int) -> bool:
    return row["expires_at"] is not None and row["expires_at"] <= now
