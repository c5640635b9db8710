"""Migrations, refusal of newer or corrupt files, concurrent writers, a killed writer."""

import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys

import pytest
from sqlite_utils import Database

from slotmem import CorruptDatabase, InvalidInput, SchemaTooNew, Store
from slotmem.storage import db, migrate
from tests.conftest import fts_integrity_error


def test_new_file_gets_every_migration(db_path):
    with Store(db_path, create=True) as store:
        assert store.migrated == migrate.migration_names()
        assert migrate.applied_migrations(store.conn) == migrate.migration_names()
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL


def test_file_made_by_0001_alone_is_upgraded(db_path):
    conn = db.connect(db_path, "rwc")
    migrate.migration_set().apply(Database(conn), stop_before=migrate.migration_names()[1:])
    conn.execute(
        "INSERT INTO memory_facts (id, slot, key, value, created_at, updated_at, last_accessed) "
        "VALUES ('f1', 'user', 'timezone', 'Europe/Stockholm', 1, 1, 1)"
    )
    conn.close()
    with Store(db_path, create=True) as store:
        assert store.migrated == migrate.migration_names()[1:]
        assert store.get("user", "timezone").value == "Europe/Stockholm"
        assert store.policy("user") is not None
        assert [h.fact.key for h in store.query_facts("Stockholm")] == ["timezone"]


def test_newer_schema_is_refused_and_untouched(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "k", "v")
        store.conn.execute(
            "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
            "VALUES ('slotmem', '9999_from_the_future', 'later')"
        )
    before = db_path.read_bytes()
    with pytest.raises(SchemaTooNew, match="9999_from_the_future.*pip install -U slotmem"):
        Store(db_path, create=True)
    assert db_path.read_bytes() == before


def test_garbage_file_is_a_clear_error(db_path):
    db_path.write_bytes(b"this is not a database at all" * 200)
    with pytest.raises(CorruptDatabase, match="not a SQLite database.*backup"):
        Store(db_path, create=True)


def test_directory_is_a_clear_error(tmp_path):
    with pytest.raises(Exception, match="directory"):
        Store(tmp_path, create=True)


def _increment(path, times, queue):
    try:
        with Store(path, create=True) as store:
            for _ in range(times):
                with store.transaction():  # BEGIN IMMEDIATE: read-modify-write without lost updates
                    fact = store.get("project", "counter")
                    store.upsert(
                        "project", "counter", str(int(fact.value) + 1), source=str(os.getpid())
                    )
        queue.put("ok")
    except Exception as e:  # noqa: BLE001 - reported to the parent
        queue.put(repr(e))


def test_four_processes_no_lost_update(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("project", "counter", "0")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    workers = [ctx.Process(target=_increment, args=(db_path, 200, queue)) for _ in range(4)]
    for worker in workers:
        worker.start()
    results = [queue.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    assert results == ["ok"] * 4
    with Store(db_path, create=True) as store:
        assert store.get("project", "counter").value == "800"
        assert len(store.history("project", "counter")) == 800
        assert fts_integrity_error(store) is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_forked_child_gets_its_own_connection(store):
    store.upsert("user", "k", "parent")
    parent_conn = store.conn
    pid = os.fork()
    if pid == 0:  # child: must not reuse the parent's connection
        code = 0
        try:
            code = 0 if store.conn is not parent_conn else 3
            store.upsert("user", "k", "child")
        except BaseException:  # noqa: BLE001
            code = 4
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.conn is parent_conn
    assert store.get("user", "k").value == "child"


def _write_then_die(path):
    store = Store(path, create=True)
    with store.transaction():
        for i in range(100):
            store.upsert("project", f"k{i}", f"half written {i}")
        os.kill(os.getpid(), signal.SIGKILL)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX-only")
def test_killed_writer_leaves_nothing_half_written(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("project", "kept", "written before the crash")
    child = multiprocessing.get_context("spawn").Process(target=_write_then_die, args=(db_path,))
    child.start()
    child.join(timeout=60)
    assert child.exitcode == -signal.SIGKILL
    with Store(db_path, create=True) as store:
        assert store.slots() == {"project": 1}
        assert fts_integrity_error(store) is None
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_threads_use_their_own_connections(store):
    import threading

    seen, errors = [], []

    def work(n):
        try:
            seen.append(id(store.conn))
            for i in range(20):
                store.upsert("agent", f"t{n}-{i}", f"thread {n} item {i}")
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(set(seen)) == 4
    assert store.slots() == {"agent": 80}


def test_slotmem_leaves_sqlite_utils_driver_alone(db_path):
    """Other users of sqlite-utils in the process (llm's logs database, when slotmem runs as an
    llm plugin) keep the driver sqlite-utils chose, whichever driver slotmem uses."""
    script = """
import sys
import sqlite_utils.db, sqlite_utils.utils
before = sqlite_utils.utils.sqlite3
import slotmem
from slotmem.storage import db
with slotmem.Store(sys.argv[1], create=True) as store:
    store.upsert("user", "city", "Malmö")
assert sqlite_utils.utils.sqlite3 is before and sqlite_utils.db.sqlite3 is before
other = sqlite_utils.Database(sys.argv[1] + ".other")
assert type(other.conn).__module__.startswith(before.__name__), type(other.conn)
other["no_such_table"].drop(ignore=True)  # catches its own driver's OperationalError
print(db.driver.__name__, before.__name__)
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(db_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_driver_choice_from_environment(monkeypatch):
    monkeypatch.setenv(db.DRIVER_ENV, "sqlite3")
    assert db.choose_driver() is sqlite3
    monkeypatch.setenv(db.DRIVER_ENV, "oracle")
    with pytest.raises(InvalidInput, match="sqlean, pysqlite3 or sqlite3"):
        db.choose_driver()
