"""The Store's plumbing: opening the file, this thread's connection, transactions, the
translation of driver errors every public method goes through; the deprecated ``flush``."""

from __future__ import annotations

import functools
import os
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from .. import validation
from ..errors import InvalidInput, StorageError
from ..search import DocFreqs, Ranking
from ..storage import access, db, forks, litestream, migrate, rows
from ..vectors.semantic import Semantic


def _translated(method):
    """Driver errors leave the Store as SlotmemErrors that name the file and the fix; a fork
    in another thread waits until the call is done."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            with forks.calling():  # a fork waits for it: see slotmem.storage.forks
                return method(self, *args, **kwargs)
        except db.DatabaseError as e:
            raise db.translate(e, self.path) from e

    return wrapper


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Core:
    """What every part of the Store stands on: the open file and its connections."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        create: bool = False,
        readonly: bool | None = None,
        clock: Callable[[], int] = now_ms,
        ranking: Ranking | None = None,
        migration_progress: Callable[[str, int, int], None] | None = None,
    ):
        """Open the slotmem file at ``path``. ``create=True`` makes it (and its directory) when
        it does not exist; otherwise a missing file is a DatabaseNotFound. A file that is not
        slotmem's (another application's SQLite database) is refused and left untouched.
        ``readonly`` (default: when this process cannot write the file or its directory, or the
        file is a follower kept by ``slotmem follow``) opens it for reading only: get, list,
        search (without access tracking), doctor and stats work, writes raise
        ReadOnlyDatabase. ``migration_progress(migration, done, total)`` is told how a long
        schema migration is going (``slotmem migrate`` draws its progress bar)."""
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
        with forks.calling():  # a fork in another thread waits for the file to be open
            self._connections = db.Connections(
                self.path, readonly=self.readonly, create=not exists, check=migrate.check_owner
            )
            try:
                self.migrated = migrate.migrate(
                    self.conn, self.path, readonly=self.readonly, progress=migration_progress
                )
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
        self._doc_freqs = DocFreqs()  # and the postings in memory with it (search/common.py)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _row(self, slot: str, key: str, now: int | None = None):
        """The row of slot/key, else of the key spelled another way (``Owner``, ``owner\u200b``
        for ``owner``: validation.key_form); with ``now``, None when it has expired by then."""
        conn = self.conn
        row = conn.execute(
            "SELECT * FROM memory_facts WHERE slot = ? AND key = ?", (slot, key)
        ).fetchone()
        if row is None:
            row = conn.execute(rows.SAME_KEY_SQL, (slot, validation.key_form(key))).fetchone()
        return None if row is None or (now is not None and _expired(row, now)) else row

    # -- deprecated ---------------------------------------------------------------------------
    def flush(self, transcript, model=None, **options):
        """Deprecated: use ``slotmem.ingest.flush(store, transcript, model, ...)``. The flusher
        is a client of the Store, not a part of it."""
        warnings.warn(
            "Store.flush is deprecated: use slotmem.ingest.flush(store, transcript, model)",
            DeprecationWarning,
            stacklevel=2,
        )
        from ..ingest.flusher import flush

        return flush(self, transcript, model, **options)


def _make_directory(directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StorageError(
            f"cannot create the directory {directory} ({e.strerror}): create it, or give "
            "a path in a directory this user may write"
        ) from None


def _expired(row, now: int) -> bool:
    return row["expires_at"] is not None and row["expires_at"] <= now
