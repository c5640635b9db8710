"""Living beside Litestream: what slotmem must know about a file that Litestream replicates.

Litestream adds two tables of its own (``_litestream_seq``, ``_litestream_lock``), keeps its
state in ``.NAME-litestream`` beside the file, holds a read transaction open between its syncs,
and checkpoints the WAL itself (PASSIVE past 1,000 pages, TRUNCATE past 121,359). slotmem leaves
a file it replicates to it: no checkpoint of slotmem's and no automatic checkpoint of SQLite's
(``wal_autocheckpoint = 0``). A TRUNCATE would wait the whole busy timeout on Litestream's
reader while holding the write lock. Worse, while Litestream is down any checkpoint lets the
next write restart the WAL, and Litestream 0.5.17, restarted, then never shipped the frames it
had missed (docs/replication.md). Left alone, the WAL only grows until Litestream is back and
ships it all. The WAL is judged against Litestream's limit, not the file's size.

A follower (``slotmem follow``: ``litestream restore -f``) is a copy Litestream writes page by
page in rollback-journal mode; it marks each applied step in ``FILE-txid`` beside it. Readers
must open it read-only, never switch its journal mode, and start a fresh connection when that
mark changes: Litestream does not always bump the page-1 change counter that SQLite's page
cache trusts, and a long-lived connection read "database disk image is malformed".
"""

from __future__ import annotations

import os
from pathlib import Path

PREFIX = "_litestream_"
META_SUFFIX = "-litestream"  # Litestream keeps a file's state in .NAME-litestream beside it
TRUNCATE_PAGES = 121_359  # Litestream's forced TRUNCATE checkpoint (its DefaultTruncatePageN)


def is_litestream_table(name: str) -> bool:
    """Litestream's own tables: foreign-file detection and schema checks skip them."""
    return name.startswith(PREFIX)


def has_state(path: str | os.PathLike) -> bool:
    """Has Litestream replicated the file at ``path`` (its state is beside it)? One stat."""
    path = Path(path)
    return (path.parent / f".{path.name}{META_SUFFIX}").is_dir()


def replicated(conn) -> bool:
    """Does Litestream replicate this file (its tables are in it, its state beside it)? A copy
    restored from a replica has the tables but not the state."""
    if not has_state(conn.execute("PRAGMA database_list").fetchone()[2]):
        return False
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND substr(name, 1, ?) = ?",
        (len(PREFIX), PREFIX),
    ).fetchone()
    return row is not None


def wal_limit(conn) -> int | None:
    """The WAL size past which Litestream would have truncated it (None: not replicated)."""
    if not replicated(conn):
        return None
    return TRUNCATE_PAGES * conn.execute("PRAGMA page_size").fetchone()[0]


def txid_path(path: str | os.PathLike) -> Path:
    return Path(f"{os.fspath(path)}-txid")


def follower_mark(path: str | os.PathLike) -> tuple[int, int] | None:
    """(mtime_ns, inode) of a follower's ``-txid`` file, which Litestream replaces after every
    step it applies; None when ``path`` is not a follower."""
    try:
        stat = txid_path(path).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_ino


def is_follower(path: str | os.PathLike) -> bool:
    return follower_mark(path) is not None
