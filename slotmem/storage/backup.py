"""Online backups: the database as of one moment, copied while other processes go on writing.

SQLite's backup API copies every page in one step, inside one read transaction, so the copy is
one consistent snapshot (writers are not blocked: WAL readers never block them). The copy goes
to a temporary file beside the destination, is checked, and only then takes its name, so a
failed backup leaves nothing half written. A ``-wal`` file must never be copied or moved
without its own database: SQLite would replay it into whatever file it finds beside it.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from ..errors import InvalidInput, StorageError
from .db import DatabaseError, checked_path, connect, translate, translate_os


def backup(conn, source: Path, dest: str | os.PathLike) -> dict:
    """Copy the database ``conn`` has open (``source``) into the new file ``dest``."""
    target = checked_path(dest)
    if target.exists():
        raise InvalidInput(f"{target} exists: a backup is written to a new file")
    if not target.parent.is_dir():
        raise StorageError(f"cannot write {target}: the directory {target.parent} does not exist")
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        copy = connect(partial, "rwc")
        try:
            copy.execute("PRAGMA journal_mode = OFF")  # a failed copy is deleted, not rolled back
            conn.backup(copy)  # every page in one step: one snapshot
            check = copy.execute("PRAGMA quick_check").fetchone()[0]
            facts = copy.execute("SELECT count(*) FROM memory_facts").fetchone()[0]
        finally:
            copy.close()
        if check != "ok":
            raise StorageError(f"the copy of {source} failed its check ({check}); nothing kept")
        _claim(partial, target)
    except DatabaseError as e:
        raise translate(e, target) from e
    except OSError as e:
        raise translate_os(e, target) from e
    finally:
        for leftover in (
            partial,
            *(Path(f"{partial}{end}") for end in ("-journal", "-wal", "-shm")),
        ):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
    return {"path": str(target), "facts": facts, "bytes": target.stat().st_size}


NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK)


def _claim(partial: Path, target: Path) -> None:
    """Give the finished copy its name, unless a file took that name meanwhile."""
    try:
        os.link(partial, target)  # fails if the name exists: never overwrites
    except FileExistsError:
        raise InvalidInput(f"{target} exists: a backup is written to a new file") from None
    except OSError as e:
        if e.errno not in NO_HARD_LINKS:
            raise  # a full disk: the caller says so
        os.replace(partial, target)
