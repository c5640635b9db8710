"""A reader that stays open pins the WAL: slotmem bounds what it can, and says what it cannot
(issue 13, item 5)."""

import json
import logging
import subprocess
import sys

from click.testing import CliRunner

from slotmem import Store
from slotmem.cli import cli
from slotmem.storage import db, wal

PIN = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN")
conn.execute("SELECT count(*) FROM memory_facts").fetchone()  # a snapshot held open
print("pinned", flush=True)
sys.stdin.read()  # until the test lets go
"""


def grow(store, batches=20, size=100):
    for b in range(batches):
        store.upsert_many(
            [
                {"slot": "episodic", "key": f"e{b}.{i}", "value": f"event {b} {i} " + "x" * 3000}
                for i in range(size)
            ]
        )


def test_pinned_reader_is_reported_and_released(db_path, caplog):
    with Store(db_path, create=True) as store:
        assert store.conn.execute("PRAGMA journal_size_limit").fetchone()[0] == (
            db.JOURNAL_SIZE_LIMIT
        )
        store.upsert("user", "name", "Maja")
        reader = subprocess.Popen(
            [sys.executable, "-c", PIN, str(db_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert reader.stdout.readline().strip() == "pinned"
            grow(store, batches=14)
            wal_bytes = wal.size(wal.wal_path(db_path))
            assert wal_bytes > wal.size(db_path)  # the WAL cannot start over: it grows
            row = {r["check"]: r for r in store.doctor()}["WAL size"]
            assert row["ok"] is False and "larger than the database" in row["detail"]
            assert f"{reader.pid} (" in row["detail"] and "cannot be checkpointed" in row["detail"]
            assert "doctor --repair" in row["fix"]
            stats = store.stats()
            assert stats["wal_bytes"] == wal_bytes and "old read transaction" in stats["wal"]
            out = CliRunner().invoke(cli, ["doctor", "-d", str(db_path)])
            assert out.exit_code == 1 and "[BAD] WAL size" in out.output
            with caplog.at_level(logging.WARNING, logger="slotmem"):
                store.prune()  # returns at once: it does not wait out the busy timeout
            assert "could not be checkpointed" in caplog.text
        finally:
            reader.communicate("")
        assert "checkpointed and truncated the WAL" in store.repair()
        assert wal.size(wal.wal_path(db_path)) == 0
        assert {r["check"]: r for r in store.doctor()}["WAL size"]["ok"]
        stats = json.loads(CliRunner().invoke(cli, ["stats", "--json", "-d", str(db_path)]).output)
        assert stats["wal_bytes"] < db.JOURNAL_SIZE_LIMIT


def test_journal_size_limit_cuts_a_big_wal_back(db_path, monkeypatch):
    monkeypatch.setattr(db, "JOURNAL_SIZE_LIMIT", 1 << 20)  # 1 MB, to keep the test small
    with Store(db_path, create=True) as store, Store(db_path) as other:
        other.conn.execute("BEGIN")
        other.conn.execute("SELECT count(*) FROM memory_facts").fetchone()
        grow(store, batches=5)  # about 1.5 MB appended while the reader holds on
        assert wal.size(wal.wal_path(db_path)) > db.JOURNAL_SIZE_LIMIT
        other.conn.execute("ROLLBACK")
        wal.checkpoint(store.conn)  # all copied: the next write starts the WAL over
        store.upsert("user", "k", "v")
        assert wal.size(wal.wal_path(db_path)) <= db.JOURNAL_SIZE_LIMIT
