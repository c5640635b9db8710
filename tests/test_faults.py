"""A full disk met by export, prune, dedupe, import, backup and migrations (issue 22): each is one
SlotmemError line, nothing half written is left, and the file is not said to be damaged.

A full disk is simulated deterministically: SQLite's ``max_page_count`` (SQLITE_FULL, as the
driver reports it), an OSError(ENOSPC) from the one Python call that writes (the lock file, an
export's fsync), or RLIMIT_FSIZE in a child process (a real write that fails)."""

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from slotmem import DiskFull, SlotmemError, StorageError, Store
from slotmem.cli import cli
from slotmem.storage import backup, db
from tests.test_files import FakeError, one_line_error


def no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if "partial" in p.name)


# -- the lock file beside the database ------------------------------------------------------------
@pytest.mark.parametrize("command", ["prune", "dedupe"])
def test_prune_and_dedupe_on_a_full_disk(store, clock, monkeypatch, command):
    store.set_policy("user", cap=1, min_age_days=0, min_access_count=99)
    store.upsert("user", "coffee_pref", "Drinks a flat white every morning at the Corner Cafe!")
    store.upsert("user", "drink.morning", "Every morning drinks a flat white at the Corner Cafe.")
    store.upsert("user", "city", "Lives in Porto.")
    clock.advance(days=1)
    before = store.stats()["facts"]
    monkeypatch.setattr(os, "pwrite", no_space)  # the prune's note in the -lock file
    run = store.prune if command == "prune" else store.dedupe
    with pytest.raises(DiskFull, match=r"memory\.db-lock: the disk is full") as caught:
        run()
    assert "\n" not in str(caught.value) and store.stats()["facts"] == before
    result = CliRunner().invoke(cli, [command, "-d", str(store.path)])
    one_line_error(result, "-lock", "disk is full")
    monkeypatch.undo()  # space again: the same Store prunes
    run()
    assert store.stats()["facts"] < before


def test_import_and_undo_flush_on_a_full_disk(store, monkeypatch):
    store.upsert("user", "b", "B", source="flush:chat.json|model:m|prompt:p")
    monkeypatch.setattr(os, "pwrite", no_space)
    with pytest.raises(DiskFull, match="-lock: the disk is full"):
        store.import_records(['{"slot": "user", "key": "a", "value": "A"}'])
    with pytest.raises(DiskFull, match="-lock: the disk is full"):
        store.undo_flush("chat.json")
    assert [fact.key for fact in store.list_facts()] == ["b"]


# -- export -------------------------------------------------------------------------------------
def test_export_to_a_full_disk_leaves_no_file(store, tmp_path, monkeypatch):
    store.upsert("user", "a", "A")
    target = tmp_path / "memory.jsonl"
    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(DiskFull, match="memory.jsonl: the disk is full"):
        store.export_to(target)
    result = CliRunner().invoke(cli, ["export", "-o", str(target), "-d", str(store.path)])
    one_line_error(result, "memory.jsonl", "disk is full")
    assert not target.exists() and leftovers(tmp_path) == []
    target.write_text("the export of yesterday\n")
    result = CliRunner().invoke(cli, ["export", "-o", str(target), "-d", str(store.path)])
    assert result.exit_code == 1 and target.read_text() == "the export of yesterday\n"
    monkeypatch.undo()
    assert store.export_to(target) == len(store.export())
    assert store.import_records(target.read_text().splitlines()).counts() == {"unchanged": 1}


EXPORT_PAST_LIMIT = r"""
import resource, signal, sys
from click.testing import CliRunner
from slotmem import Store
from slotmem.cli import cli
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
with Store(sys.argv[1], create=True) as store:
    for i in range(50):
        store.upsert("user", f"k{i}", "x" * 3000)
resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))  # more than the -shm file
result = CliRunner().invoke(cli, ["export", "-o", sys.argv[2], "-d", sys.argv[1]])
print(result.exit_code, "|", result.output.strip().replace("\n", "\\n"))
"""


def test_export_that_really_fails_to_write_leaves_no_file(tmp_path):
    target = tmp_path / "out.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", EXPORT_PAST_LIMIT, str(tmp_path / "m.db"), str(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    code, output = done.stdout.strip().split(" | ")
    assert code == "1" and output.startswith("Error: cannot write") and "\\n" not in output, done
    assert str(target) in output
    assert not target.exists() and leftovers(tmp_path) == []


# -- migrations and backups -----------------------------------------------------------------------
def pages(monkeypatch, count: int, module=db, name="configure"):
    """Every new connection may grow its file to ``count`` pages: then the disk is full."""
    original = getattr(module, name)

    def limited(*args, **kwargs):
        result = original(*args, **kwargs)
        conn = result if result is not None else args[0]
        conn.execute(f"PRAGMA max_page_count = {count}")
        return result

    monkeypatch.setattr(module, name, limited)


@pytest.mark.parametrize("count", [3, 8, 20])
def test_migrating_on_a_full_disk_is_disk_full(tmp_path, monkeypatch, count):
    pages(monkeypatch, count)
    path = tmp_path / "memory.db"
    with pytest.raises(DiskFull, match="memory.db: the disk is full") as caught:
        Store(path, create=True)
    assert "\n" not in str(caught.value) and "not damaged" in str(caught.value)
    monkeypatch.undo()
    with Store(path, create=True) as store:  # space again: the migrations finish
        store.upsert("user", "a", "A")
        assert store.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"


def test_a_failed_backup_leaves_nothing(store, tmp_path, monkeypatch):
    for i in range(200):
        store.upsert("user", f"k{i}", "x" * 500)
    real = backup.connect

    def copy_with_a_journal(path, mode="rw"):
        conn = real(path, mode)
        conn.execute("PRAGMA max_page_count = 20")
        return conn

    monkeypatch.setattr(backup, "connect", copy_with_a_journal)
    with pytest.raises(DiskFull):
        store.backup(tmp_path / "copy.db")
    assert not (tmp_path / "copy.db").exists() and leftovers(tmp_path) == []
    monkeypatch.setattr(os, "link", no_space)  # the finished copy cannot take its name
    monkeypatch.setattr(backup, "connect", real)
    with pytest.raises(DiskFull, match="copy.db"):
        store.backup(tmp_path / "copy.db")
    assert not (tmp_path / "copy.db").exists() and leftovers(tmp_path) == []


def test_a_failed_backup_removes_the_journal_sqlite_left(tmp_path):
    """A copy that fails on a full disk, its rollback failing too, leaves a hot journal."""

    class FailingSource:
        def backup(self, copy):
            [(_, _, path)] = copy.execute("PRAGMA database_list").fetchall()
            Path(f"{path}-journal").write_bytes(b"what SQLite could not roll back")
            raise db.OperationalError("database or disk is full")

    with pytest.raises(DiskFull, match="copy.db: the disk is full"):
        backup.backup(FailingSource(), tmp_path / "memory.db", tmp_path / "copy.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# -- a file that cannot get its -shm on a full disk ------------------------------------------------
@pytest.mark.parametrize(
    "name, message", [("SQLITE_IOERR_SHMSIZE", "disk I/O error"), (None, "disk I/O error")]
)
def test_an_io_error_on_a_full_disk_is_disk_full_and_not_damage(name, message, monkeypatch):
    monkeypatch.setattr(db, "free_bytes", lambda directory: 4096)
    error = db.translate(FakeError(name, message), Path("/data/agent.db"))
    assert isinstance(error, DiskFull) and "/data/agent.db" in str(error)
    assert "not damaged" in str(error) and "backup" not in str(error)
    monkeypatch.setattr(db, "free_bytes", lambda directory: 10 << 30)
    error = db.translate(FakeError(name, message), Path("/data/agent.db"))
    assert type(error) is StorageError and "backup" not in str(error)


def test_a_closed_file_on_a_full_disk_says_so_in_every_command(store, monkeypatch):
    store.upsert("user", "a", "A")
    store.close()
    monkeypatch.setattr(db, "free_bytes", lambda directory: 0)
    real = db.first_read

    def no_room_for_the_shm(conn, path):
        raise db.translate(FakeError("SQLITE_IOERR_SHMSIZE", "disk I/O error"), path)

    monkeypatch.setattr(db, "first_read", no_room_for_the_shm)
    for args in (["get", "user", "a"], ["list"], ["prune"], ["export"], ["stats"]):
        line = one_line_error(CliRunner().invoke(cli, [*args, "-d", str(store.path)]))
        assert "disk is full" in line and "backup" not in line, (args, line)
    monkeypatch.setattr(db, "first_read", real)
    with pytest.raises(SlotmemError):
        raise db.translate(FakeError("SQLITE_FULL", "database or disk is full"), store.path)


def test_fts_shadow_table_on_a_full_disk_is_disk_full():
    error = db.translate(
        FakeError(
            "SQLITE_ERROR", "fts5: error creating shadow table x_data: database or disk is full"
        ),
        Path("/data/agent.db"),
    )
    assert isinstance(error, DiskFull)


def test_export_end_marker_in_the_cli_file(store, tmp_path):
    store.upsert("user", "a", "A")
    target = tmp_path / "memory.jsonl"
    CliRunner().invoke(cli, ["export", "-o", str(target), "-d", str(store.path)])
    lines = target.read_text().splitlines()
    assert json.loads(lines[-1])["records"] == len(lines) - 2
