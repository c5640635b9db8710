"""Access tracking (slotmem/storage/access.py): a search never waits for the write lock to record
what it returned, never fails because it cannot, loses no count, and a fact it returned is never
pruned a moment later."""

import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from slotmem import Store, StoreBusy
from slotmem.storage import access, db
from tests.conftest import fts_integrity_error

WARNING = "access counts not recorded"


@pytest.fixture
def old_facts(store, clock):
    """Facts unused for 60 days in a slot over its cap: prune would take every one of them."""
    store.upsert_many(
        {"slot": "user", "key": f"k{i}", "value": f"fact number {i}"} for i in range(4)
    )
    store.upsert("user", "tea", "The user drinks green tea.")
    store.set_policy("user", cap=0, min_age_days=30, min_access_count=3)
    clock.advance(days=60)
    return store


@pytest.fixture
def blocker(db_path):
    """Another connection, holding the write lock until released."""
    conn = db.connect(db_path)
    conn.execute("BEGIN IMMEDIATE")
    yield conn
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    conn.close()


def access_count(db_path, key="tea") -> int:
    conn = db.connect(db_path)
    try:
        row = conn.execute("SELECT access_count FROM memory_facts WHERE key = ?", (key,)).fetchone()
        return -1 if row is None else row[0]
    finally:
        conn.close()


def test_a_search_does_not_wait_for_the_write_lock(old_facts, blocker, db_path):
    start = time.perf_counter()
    [hit] = old_facts.query_facts("green tea")
    assert time.perf_counter() - start < db.BUSY_TIMEOUT_MS / 1000 / 4  # it would wait 10 s
    assert hit.fact.key == "tea" and hit.fact.access_count == 1  # as the caller sees it
    assert access_count(db_path) == 0  # queued, not written
    blocker.execute("COMMIT")
    old_facts.flush_accesses()
    assert access_count(db_path) == 1


def test_a_search_records_at_once_when_it_can(old_facts, db_path):
    old_facts.query_facts("green tea")
    assert access_count(db_path) == 1  # no flush needed


def test_a_fact_just_returned_is_not_pruned_by_a_prune_that_follows(old_facts, db_path, clock):
    """The search's access is still queued (the lock was busy) when the prune starts: the prune
    waits for it to be written, then sees the fact as used."""
    pruner = Store(db_path, clock=clock)
    blocker = db.connect(db_path)
    blocker.execute("BEGIN IMMEDIATE")
    writing = old_facts._accesses._writing  # hold the queue back (a test's privilege)
    writing.acquire()
    try:
        [hit] = old_facts.query_facts("green tea")
        blocker.execute("COMMIT")
        reports = []
        prune = threading.Thread(target=lambda: reports.append(pruner.prune_slot("user")))
        prune.start()
        prune.join(0.5)
        assert prune.is_alive() and access_count(db_path) == 0  # waiting for the search
    finally:
        writing.release()
    prune.join(5)
    assert not prune.is_alive()
    [report] = reports
    assert {f.key for f in report.removed} == {"k0", "k1", "k2", "k3"}
    assert old_facts.get("user", "tea").access_count == 1 and hit.fact.key == "tea"
    pruner.close()
    blocker.close()


def test_a_search_during_a_prune_does_not_return_what_the_prune_removed(
    old_facts, db_path, clock, monkeypatch
):
    from slotmem import search
    from slotmem.storage import retention

    inside, go, read = threading.Event(), threading.Event(), threading.Event()
    prune_slot, run = retention.prune_slot, search.run

    def slow_prune(*args, **options):
        report = prune_slot(*args, **options)
        inside.set()  # the facts are deleted, not yet committed
        go.wait(5)
        return report

    def searched(*args, **options):
        hits = run(*args, **options)
        read.set()
        return hits

    monkeypatch.setattr(retention, "prune_slot", slow_prune)
    monkeypatch.setattr(search, "run", searched)
    pruner = Store(db_path, clock=clock)
    prune = threading.Thread(target=lambda: pruner.prune_slot("user"))
    prune.start()
    assert inside.wait(5)
    found = []
    searcher = threading.Thread(target=lambda: found.extend(old_facts.query_facts("green tea")))
    searcher.start()
    assert read.wait(5)  # it read the fact, which the prune has not removed yet for readers
    go.set()
    prune.join(5)
    searcher.join(5)
    assert found == [] and old_facts.get("user", "tea") is None
    pruner.close()


def test_the_lock_file_is_let_go_once_queued_accesses_are_written(old_facts, db_path, clock):
    """Even when they are written before the search that queued them is over."""
    blocker = db.connect(db_path)
    blocker.execute("BEGIN IMMEDIATE")
    with old_facts.tracking() as track:
        tea = old_facts.get("user", "tea")
        assert track([tea.id]) == {tea.id}  # queued: the lock is busy
        blocker.execute("COMMIT")
        old_facts.flush_accesses()
    blocker.close()
    with Store(db_path, clock=clock) as pruner:
        start = time.perf_counter()
        assert len(pruner.prune_slot("user").removed) == 4
        assert time.perf_counter() - start < 2  # nothing holds the lock file any more


def test_no_count_is_lost_under_concurrent_writers(store, db_path):
    store.upsert_many(
        {"slot": "user", "key": f"k{i}", "value": f"green tea {i}"} for i in range(30)
    )
    stop = threading.Event()

    def write(n):
        with Store(db_path) as writer:
            i = 0
            while not stop.is_set():
                writer.upsert("noise", f"w{n}.{i % 50}", f"line {i}")
                i += 1

    writers = [threading.Thread(target=write, args=(n,)) for n in range(2)]
    for thread in writers:
        thread.start()
    returned = 0
    try:
        for i in range(60):
            returned += len(store.query_facts(f"green tea {i % 30}", limit=5))
    finally:
        stop.set()
        for thread in writers:
            thread.join()
    store.flush_accesses()
    total = store.conn.execute("SELECT sum(access_count) FROM memory_facts").fetchone()[0]
    assert total == returned > 0


def test_a_read_only_connection_still_answers_with_one_warning(old_facts, caplog):
    old_facts.conn.execute("PRAGMA query_only = ON")  # every write now fails, even as root
    with caplog.at_level(logging.WARNING, logger="slotmem"):
        for _ in range(3):
            [hit] = old_facts.query_facts("green tea")
            assert hit.fact.key == "tea"
    warnings = [r for r in caplog.records if WARNING in r.getMessage()]
    assert len(warnings) == 1 and "readonly" in warnings[0].getMessage()


def test_a_file_opened_read_only_answers_with_one_warning(old_facts, db_path, caplog):
    with Store(db_path, readonly=True) as reader, caplog.at_level(logging.WARNING, "slotmem"):
        for _ in range(2):
            hits = reader.query_facts("green tea")
            assert [h.fact.key for h in hits] == ["tea"]
            assert hits[0].fact.access_count == 0  # the hit does not claim an uncounted access
    assert [r.getMessage() for r in caplog.records if WARNING in r.getMessage()] == [
        f"{WARNING} in {db_path} (the file is open read-only)"
    ]
    assert access_count(db_path) == 0


def test_a_lock_held_past_the_timeout_loses_the_counts_with_one_warning(
    old_facts, monkeypatch, caplog
):
    def busy(conn, path):
        raise StoreBusy("stayed locked")

    monkeypatch.setattr(access.db, "transaction", busy)
    with caplog.at_level(logging.WARNING, logger="slotmem"):
        for _ in range(2):
            assert [h.fact.key for h in old_facts.query_facts("green tea")] == ["tea"]
            old_facts.flush_accesses()
    assert [r.getMessage() for r in caplog.records if WARNING in r.getMessage()] == [
        f"{WARNING} in {old_facts.path} (the write lock stayed busy)"
    ]


FULL_DISK = """
import logging, resource, signal, sys
from slotmem import Store
logging.basicConfig(level=logging.WARNING, format="%(message)s")
store = Store(sys.argv[1])
store.checkpoint()  # the WAL is empty: the next write must grow it
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
for _ in range(3):
    print(len(store.query_facts("green tea")))
store.close()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE")
def test_a_full_disk_still_answers_with_one_warning(old_facts, db_path):
    old_facts.close()
    out = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(db_path)],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1", "1"]
    assert out.stderr.count(WARNING) == 1, out.stderr


KILLED = """
import sys, time
from slotmem import Store
from slotmem.storage import db
store = Store(sys.argv[1])
blocker = db.connect(sys.argv[1])
blocker.execute("BEGIN IMMEDIATE")  # the search's access must queue: it holds the lock file
store._accesses._writing.acquire()  # and stays queued
assert store.query_facts("green tea")
blocker.execute("COMMIT")
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(access.fcntl is None, reason="no lock file without fcntl")
def test_a_searcher_killed_with_queued_accesses_leaves_nothing_held(old_facts, db_path):
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(db_path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline().strip() == "ready"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    start = time.perf_counter()
    report = old_facts.prune_slot("user")  # the lock file was let go with the process
    assert time.perf_counter() - start < 2 and len(report.removed) == 5  # its count was lost
    assert fts_integrity_error(old_facts) is None


def test_a_forked_child_records_its_own_accesses(old_facts, db_path):
    if not hasattr(os, "fork"):
        pytest.skip("no fork")
    old_facts.query_facts("green tea")
    pid = os.fork()
    if pid == 0:  # the child: its own connection, lock file handle and queue
        try:
            old_facts.query_facts("green tea")
            old_facts.close()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    old_facts.flush_accesses()
    assert access_count(db_path) == 2


def test_without_tracking_nothing_is_written(old_facts, blocker, db_path):
    old_facts.query_facts("green tea", track_access=False)
    with old_facts.tracking(enabled=False) as track:
        assert track(["anything"]) == {"anything"}
    blocker.execute("COMMIT")
    old_facts.flush_accesses()
    assert access_count(db_path) == 0
