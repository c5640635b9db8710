"""`slotmem backup`: one consistent moment of the file while other processes write (issue 13,
item 8)."""

import multiprocessing
import time

import pytest
from click.testing import CliRunner

from slotmem import InvalidInput, Store
from slotmem.cli import cli
from tests.conftest import fts_integrity_error


def _write(path, writer, stop, started):
    """Each transaction adds one fact and bumps this writer's counter: in any consistent copy,
    a writer's facts number exactly its counter."""
    with Store(path) as store:
        started.release()
        n = 0
        while not stop.is_set():
            with store.transaction():
                store.upsert("log", f"w{writer}.{n}", f"writer {writer} wrote entry {n}")
                store.upsert("count", f"w{writer}", str(n + 1))
            n += 1


def consistent(path) -> int:
    with Store(path) as copy:
        assert copy.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert fts_integrity_error(copy) is None
        total = 0
        for counter in copy.list_facts("count", limit=None):
            written = copy.conn.execute(
                "SELECT count(*) FROM memory_facts WHERE slot = 'log' AND key LIKE ?",
                (f"{counter.key}.%",),
            ).fetchone()[0]
            assert written == int(counter.value), counter.key
            total += written
        assert copy.slots().get("log", 0) == total
        return total


def test_backup_while_four_processes_write(tmp_path):
    path = tmp_path / "memory.db"
    with Store(path, create=True) as store:
        store.upsert("user", "name", "Maja")
    ctx = multiprocessing.get_context("spawn")
    stop, started = ctx.Event(), ctx.Semaphore(0)
    writers = [ctx.Process(target=_write, args=(path, i, stop, started)) for i in range(4)]
    for writer in writers:
        writer.start()
    try:
        for _ in writers:
            assert started.acquire(timeout=60)
        time.sleep(0.5)
        copies = []
        for i in range(3):
            result = CliRunner().invoke(
                cli, ["backup", str(tmp_path / f"b{i}.db"), "-d", str(path)]
            )
            assert result.exit_code == 0, result.output
            assert result.output.startswith("backed up ")
            copies.append(tmp_path / f"b{i}.db")
            time.sleep(0.3)
    finally:
        stop.set()
        for writer in writers:
            writer.join(60)
    totals = [consistent(copy) for copy in copies]
    assert 0 < totals[0] <= totals[1] <= totals[2], totals
    with Store(path) as store:
        assert store.stats()["facts"] > totals[-1]
    assert not list(tmp_path.glob(".*partial"))


def test_backup_refuses_to_overwrite_and_keeps_nothing_half_made(store, tmp_path):
    store.upsert("user", "k", "v")
    taken = tmp_path / "taken.db"
    taken.write_text("my thesis")
    with pytest.raises(InvalidInput, match="exists"):
        store.backup(taken)
    assert taken.read_text() == "my thesis"
    report = store.backup(tmp_path / "copy.db")
    assert report["facts"] == 1 and report["bytes"] > 0
    with Store(tmp_path / "copy.db") as copy:
        assert copy.get("user", "k").value == "v"
    files = sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".db" or "partial" in p.name)
    assert files == ["copy.db", "memory.db", "taken.db"]
