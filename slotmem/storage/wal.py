"""The write-ahead log: checkpoints where they are cheap, and what to say when it grows.

A WAL is copied into the database by checkpoints and starts over once every reader has moved
past it. A connection that keeps a read transaction open (an unfinished cursor, a transaction
left open by a long-lived agent) pins the frames after its snapshot: they cannot be copied,
the WAL cannot start over, and every write makes it longer. Nothing inside SQLite can release
such a reader; slotmem says how large the WAL is, that a reader holds it, and which processes
have it open, so that a person can end that reader.

Litestream is such a reader by design, and checkpoints the WAL itself (storage/litestream.py):
slotmem leaves a file it replicates alone, and judges its WAL against Litestream's limit.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import litestream

FIX = (
    "end the read transaction or cursor that process keeps open (or restart it), then run "
    "'slotmem doctor --repair', which checkpoints and truncates the WAL"
)


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def checkpoint(conn, mode: str = "PASSIVE") -> tuple[int, int, int]:
    """(busy, WAL frames, frames checkpointed); PASSIVE never waits for anyone."""
    busy, log, done = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
    return busy, log, done


def checkpoint_fully(conn) -> bool:
    """Copy the whole WAL into the database and truncate it, if no reader pins it. A pinned
    WAL is left alone (TRUNCATE would wait the whole busy timeout for that reader). True when
    the WAL was truncated, and on a file Litestream replicates, which slotmem leaves to
    Litestream to checkpoint (see storage/litestream.py)."""
    if litestream.replicated(conn):
        return True
    _, log, done = checkpoint(conn)
    if log > done:
        return False
    busy, _, _ = checkpoint(conn, "TRUNCATE")
    return not busy


def report(conn, path: Path, *, can_checkpoint: bool) -> tuple[bool, str]:
    """(ok, what to say): a WAL larger than the database (and than what SQLite's own automatic
    checkpoints leave) is reported with what holds it."""
    wal, main = size(wal_path(path)), size(path)
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    normal = max(main, page_size * max(pages, 1000))
    replicated = litestream.wal_limit(conn)
    if replicated is not None:
        if wal <= replicated:
            return True, (
                f"{megabytes(wal)} (database {megabytes(main)}; Litestream replicates this file "
                f"and truncates its WAL past {megabytes(replicated)})"
            )
        return False, (
            f"the WAL is {megabytes(wal)}, past the {megabytes(replicated)} at which Litestream "
            "truncates it: Litestream is not running for this file (start 'slotmem "
            "replicate'), or a connection keeps an old read transaction open; processes with "
            f"the file open: {', '.join(holding(path)) or 'none found'}"
        )
    if wal <= normal:
        return True, f"{megabytes(wal)} (database {megabytes(main)})"
    pinned = ""
    if can_checkpoint:
        _, log, done = checkpoint(conn)  # cheap: copies what it can, waits for no one
        if log <= done:
            return True, (
                f"{megabytes(wal)}, all checkpointed: cut back at the next write "
                f"(database {megabytes(main)})"
            )
        pinned = f" ({log - done} of {log} pages cannot be checkpointed)"
    holders = ", ".join(holding(path)) or "none found (another machine, or no /proc here)"
    return False, (
        f"the WAL is {megabytes(wal)}, larger than the database ({megabytes(main)}): a "
        f"connection keeps an old read transaction open{pinned}; processes with the file "
        f"open: {holders}"
    )


def check(conn, path: Path, *, can_checkpoint: bool) -> dict:
    ok, detail = report(conn, path, can_checkpoint=can_checkpoint)
    from .health import check_row  # the doctor's: not imported by a read

    return check_row("WAL size", ok, detail, FIX)


def holding(path: Path) -> list[str]:
    """The processes that have the file's WAL open, as 'pid (command)' (Linux's /proc)."""
    target = os.path.realpath(wal_path(path))
    found = []
    for pid in sorted(filter(str.isdigit, _listdir("/proc")), key=int):
        fds = f"/proc/{pid}/fd"
        if any(_readlink(f"{fds}/{fd}") == target for fd in _listdir(fds)):
            found.append(
                f"{pid} ({_command(pid)}{', this one' if int(pid) == os.getpid() else ''})"
            )
    return found


def megabytes(count: int) -> str:
    return f"{count / 1e6:.1f} MB"


def _listdir(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []


def _readlink(link: str) -> str | None:
    try:
        return os.readlink(link)
    except OSError:
        return None


def _command(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as file:
            words = file.read().split(b"\0")
    except OSError:
        return "?"
    return " ".join(w.decode(errors="replace") for w in words if w)[:80] or "?"
