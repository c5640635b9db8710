"""Replication with Litestream: how far a follower trails, how long a restore takes, and what
the replica costs in storage per fact.

    python benchmarks/replication.py            # about 12 minutes, a directory replica
    python benchmarks/replication.py --s3       # the same against moto's S3 on 127.0.0.1
    python benchmarks/replication.py --only lag --seconds 20

lag: into a file of --base facts, a writer upserts at 10 and then 50 writes/s through the Store
(each write one transaction: a new fact and a sequence number) for --seconds each, while
`slotmem replicate` and `slotmem follow` run with their defaults (1 s sync interval, 1 s follow
interval); a reader opens the follower afresh every 20 ms and reads the sequence number. Lag is
the time from a write's commit to the first read that sees it.

restore: a file of --facts facts (100,000) is replicated, 1,000 facts are updated, and the
replica is restored with `slotmem restore-from` (Litestream's restore, then doctor on the new
file: both timed), latest and at a timestamp before the updates.

beside: beside a running Litestream, how long a TRUNCATE checkpoint (another program's) and
`slotmem prune` take; then, with Litestream killed, 100 facts written, slotmem's prune or a
PASSIVE checkpoint, one more write, Litestream restarted: what a restored copy lacks.

storage: an hour of writes with slotmem's default settings, then with Litestream's own defaults (one write per second, three new
facts for each update of an existing one, into a file of --base facts), simulated in 1/--scale
of the time: every Litestream interval (the sync and file-monitor intervals, the compaction
levels of 30 s, 5 min and 1 h, level-0 retention of 5 min and its 15 s check, the 1 min
checkpoint, the snapshot interval and retention) is divided by --scale and the writes come
--scale times as fast. Reported: the replica's bytes after the hour, per fact in the file and
against the file's own size.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import logging
import os
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Corpus

from slotmem import Store
from slotmem.storage import replication


def slotmem(*args, log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "slotmem", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=60)


def build(path: Path, n: int, corpus: Corpus) -> Store:
    store, items = Store(path, create=True), corpus.facts(n)
    for start in range(0, n, 50_000):
        store.upsert_many(items[start : start + 50_000])
    store.checkpoint()
    return store


def follower_seq(path: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            row = conn.execute(
                "SELECT value FROM memory_facts WHERE slot = 'bench' AND key = 'seq'"
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return -1
    return int(row[0]) if row else -1


def wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise SystemExit(f"{what} did not happen within {seconds:.0f} s")


def percentile(values: list[float], share: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * share))]


# -- lag ----------------------------------------------------------------------------------------
def bench_lag(folder: Path, url: str, base: int, seconds: float, rates: list[int]) -> None:
    corpus = Corpus(seed=11)
    source, follower = folder / "lag.db", folder / "lag-follower.db"
    store = build(source, base, corpus)
    store.upsert("bench", "seq", "0")
    procs = [
        slotmem("replicate", "-d", str(source), "--to", url, log=folder / "replicate.log"),
        slotmem("follow", url, "-o", str(follower), log=folder / "follow.log"),
    ]
    try:
        wait_for(lambda: follower_seq(follower) == 0, 60, "the follower's first copy")
        seq = 0
        print(f"{'writes/s':>8} | {'writes':>6} | {'lag p50':>8} | {'lag p95':>8} | {'max':>6}")
        for rate in rates:
            lags, missing, seq = measure(store, follower, corpus, rate, seconds, seq)
            print(
                f"{rate:>8} | {len(lags):>6} | {statistics.median(lags):>7.2f}s | "
                f"{percentile(lags, 0.95):>7.2f}s | {max(lags):>5.2f}s"
                + (f"  ({missing} never seen)" if missing else ""),
                flush=True,
            )
    finally:
        for proc in procs:
            stop(proc)
        store.close()


def measure(store, follower, corpus, rate, seconds, seq) -> tuple[list[float], int, int]:
    """Write at ``rate`` for ``seconds`` while a thread watches the follower: the lags, the
    writes never seen (within 30 s of the last), and the last sequence number."""
    committed: dict[int, float] = {}
    seen: dict[int, float] = {}
    stopped: list[float] = []

    def watch(last: int) -> None:
        while not stopped or (last < max(committed) and time.perf_counter() - stopped[0] < 30):
            value = follower_seq(follower)
            now = time.perf_counter()
            for i in range(last + 1, value + 1):
                seen[i] = now
            last = max(last, value)
            time.sleep(0.02)

    reader = threading.Thread(target=watch, args=(seq,))
    reader.start()
    first, start = seq + 1, time.perf_counter()
    for i in range(int(rate * seconds)):
        time.sleep(max(0.0, start + i / rate - time.perf_counter()))
        seq += 1
        store.upsert_many(
            [
                {"slot": "project", "key": f"lag.{rate}.{i}", "value": corpus.sentence()},
                {"slot": "bench", "key": "seq", "value": str(seq)},
            ]
        )
        committed[seq] = time.perf_counter()
    stopped.append(time.perf_counter())
    reader.join()
    lags = [seen[i] - committed[i] for i in range(first, seq + 1) if i in seen]
    return lags, seq + 1 - first - len(lags), seq


# -- restore ------------------------------------------------------------------------------------
def bench_restore(folder: Path, url: str, n: int) -> None:
    corpus = Corpus(seed=13)
    source = folder / "big.db"
    started = time.perf_counter()
    store = build(source, n, corpus)
    size = source.stat().st_size
    print(f"# {n:,} facts, {size / 1e6:.0f} MB, built in {time.perf_counter() - started:.0f} s")
    proc = slotmem("replicate", "-d", str(source), "--to", url, log=folder / "big.log")
    try:
        with replication.config_file(replication.restore_config(url, folder / "probe.db")) as cfg:
            wait_for(
                lambda: replication.snapshots(folder / "probe.db", cfg), 300, "the first snapshot"
            )
        time.sleep(1.5)
        moment = dt.datetime.now(dt.timezone.utc).isoformat()
        time.sleep(1.5)
        store.upsert_many(
            {"slot": "user", "key": f"fact.{i}", "value": corpus.sentence()} for i in range(1000)
        )
        time.sleep(3)  # a few sync intervals: the updates are in the replica
    finally:
        stop(proc)
        store.close()
    print(f"{'restore':>12} | {'facts':>7} | {'Litestream':>10} | {'doctor':>7} | {'total':>7}")
    for label, extra in [("latest", []), ("timestamp", ["--timestamp", moment])]:
        output = folder / f"restored-{label}.db"
        start = time.perf_counter()
        replication.restore(url, output, at=extra[1] if extra else None)
        restored = time.perf_counter() - start
        with Store(output) as copy:
            rows = copy.doctor()
            checked = time.perf_counter() - start - restored
            assert all(row["ok"] for row in rows), rows
            count = copy.conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0]
        print(
            f"{label:>12} | {count:>7,} | {restored:>9.2f}s | {checked:>6.2f}s | "
            f"{restored + checked:>6.2f}s",
            flush=True,
        )


# -- storage ------------------------------------------------------------------------------------
VARIANTS = {  # what slotmem writes, and Litestream's own defaults for the same file
    "slotmem": {},
    "Litestream": {
        "levels": [{"interval": "30s"}, {"interval": "5m"}, {"interval": "1h"}],
        "snapshot": {"interval": "24h", "retention": "24h"},
    },
}


def scaled_config(db: Path, url: str, scale: float, overrides: dict) -> str:
    """slotmem's config (with ``overrides``) with every interval divided by ``scale``."""

    def each(duration: str) -> str:
        return replication.go_duration(round(replication.seconds(duration) / scale, 6))

    config = {**replication.config([(db, url)]), **overrides}
    config["snapshot"] = {k: each(v) for k, v in config["snapshot"].items()}
    config["levels"] = [{"interval": each(level["interval"])} for level in config["levels"]]
    config["l0-retention"] = each("5m")  # Litestream's defaults, scaled like the rest
    config["l0-retention-check-interval"] = each("15s")
    entry = config["dbs"][0]
    entry["monitor-interval"] = each("1s")
    entry["checkpoint-interval"] = each("1m")
    entry["replica"]["sync-interval"] = each(entry["replica"]["sync-interval"])
    return replication.to_yaml(config) + "\n"


def replica_objects(url: str) -> list[tuple[int, int]]:
    """(level, bytes) of every object in the replica."""
    if url.startswith("file://"):
        root = Path(url.removeprefix("file://"))
        return [(int(p.parent.name), p.stat().st_size) for p in root.rglob("*.ltx")]
    import boto3

    bucket, _, rest = url.removeprefix("s3://").partition("/")
    prefix, _, query = rest.partition("?")
    endpoint = dict(p.split("=", 1) for p in query.split("&"))["endpoint"]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    found = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for item in page.get("Contents", []):
            found.append((int(item["Key"].split("/")[-2]), item["Size"]))
    return found


def simulate_hour(folder: Path, url: str, base: int, scale: float, overrides: dict) -> None:
    corpus = Corpus(seed=17)
    source = folder / f"hour-{len(list(folder.glob('hour-*.db')))}.db"
    store = build(source, base, corpus)
    with replication.config_file(scaled_config(source, url, scale, overrides)) as cfg:
        log = open(folder / "hour.log", "ab")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [replication.binary(), "replicate", "-config", str(cfg)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=replication.environment(),
            start_new_session=True,
        )
        try:
            start = time.perf_counter()
            for i in range(3600):  # one write per simulated second
                time.sleep(max(0.0, start + i / scale - time.perf_counter()))
                if i % 4 == 3:  # an update of an existing fact
                    fact = corpus.facts(1)[0]
                    key = f"fact.{corpus.rng.randrange(base)}"
                    store.upsert(("user", "project", "agent")[int(key[5:]) % 3], key, fact["value"])
                else:
                    store.upsert("project", f"hour.{i}", corpus.sentence())
            time.sleep(10 / scale + 1)  # the last syncs
        finally:
            stop(proc)
            log.close()
    facts = store.conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0]
    store.checkpoint()
    file_bytes = source.stat().st_size
    store.close()
    objects = replica_objects(url)
    total = sum(size for _, size in objects)

    def mb(levels) -> str:
        return f"{sum(size for level, size in objects if level in levels) / 1e6:.1f}"

    name = next(k for k, v in VARIANTS.items() if v == overrides)
    print(
        f"{name:>10} | {facts:>6,} | {file_bytes / 1e6:>5.1f} | {total / 1e6:>7.1f} | "
        f"{total / facts:>9,.0f} | {total / file_bytes:>5.1f} | {mb({0}):>5} | "
        f"{mb(set(range(1, 9))):>6} | {mb({9}):>5}",
        flush=True,
    )


def bench_storage(folder: Path, url_for, base: int, scale: float) -> None:
    print(
        f"# an hour of writes simulated in {3600 / scale / 60:.1f} minutes (--scale {scale:g}); "
        "MB of the replica by level: L0 (kept 5 min), compacted (kept with the oldest "
        "snapshot), snapshots"
    )
    print(
        f"{'settings':>10} | {'facts':>6} | {'file':>5} | {'replica':>7} | {'bytes/fact':>9} | "
        f"{'×file':>5} | {'L0':>5} | {'L1-L8':>6} | {'snap':>5}"
    )
    for number, overrides in enumerate(VARIANTS.values()):
        simulate_hour(folder, url_for(f"hour-{number}"), base, scale, overrides)


# -- living beside Litestream --------------------------------------------------------------------
def restored_facts(url: str, folder: Path, name: str) -> set:
    replication.restore(url, folder / name)
    with Store(folder / name) as copy:
        return {(f.slot, f.key, f.value) for f in copy.list_facts(limit=None)}


def bench_beside(folder: Path, url_for) -> None:
    """What a checkpoint costs beside a running Litestream, and what one made while it is down
    loses from the replica."""
    corpus = Corpus(seed=19)
    print(f"{'beside Litestream':>34} | result")
    source = folder / "beside.db"
    store = build(source, 2_000, corpus)
    url = url_for("beside")
    proc = slotmem("replicate", "-d", str(source), "--to", url, log=folder / "beside.log")
    time.sleep(3)
    raw = replication_free_connection(source)
    for label, run in [
        (
            "TRUNCATE checkpoint (10 s timeout)",
            lambda: raw.execute("PRAGMA wal_checkpoint(TRUNCATE)"),
        ),
        ("slotmem prune", store.prune),
    ]:
        store.upsert("user", "stall", corpus.sentence())
        start = time.perf_counter()
        run()
        print(f"{label:>34} | {time.perf_counter() - start:.2f} s", flush=True)
    for label, checkpoint in [
        ("while down, slotmem prune", store.prune),
        ("while down, a PASSIVE checkpoint", lambda: raw.execute("PRAGMA wal_checkpoint(PASSIVE)")),
    ]:
        time.sleep(2)  # everything so far is in the replica
        stop_hard(proc)
        store.upsert_many(
            {"slot": "project", "key": f"down.{label}.{i}", "value": corpus.sentence()}
            for i in range(100)
        )
        checkpoint()
        store.upsert("user", "after", label)  # starts the WAL over if it was checkpointed
        expected = {(f.slot, f.key, f.value) for f in store.list_facts(limit=None)}
        proc = slotmem("replicate", "-d", str(source), "--to", url, log=folder / "beside.log")
        time.sleep(4)
        got = restored_facts(url, folder, f"beside-{len(expected)}.db")
        print(
            f"{label:>34} | restored copy lacks {len(expected - got)} of {len(expected)} facts",
            flush=True,
        )
    stop(proc)
    raw.close()
    store.close()


def replication_free_connection(path: Path):
    """A plain connection of slotmem's driver, as another program would open the file."""
    from slotmem.storage import db

    conn = db.driver.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def stop_hard(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


# -- S3 on loopback ------------------------------------------------------------------------------
@contextlib.contextmanager
def moto_s3():
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")
    endpoint = f"http://127.0.0.1:{port}"
    boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1").create_bucket(Bucket="bench")
    try:
        yield lambda name: f"s3://bench/{name}?endpoint={endpoint}&region=us-east-1"
    finally:
        server.stop()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=["lag", "restore", "storage", "beside"], action="append")
    parser.add_argument("--s3", action="store_true", help="an S3 replica (moto on 127.0.0.1)")
    parser.add_argument("--base", type=int, default=10_000, help="facts in the lag/storage file")
    parser.add_argument("--seconds", type=float, default=30, help="writing time per lag rate")
    parser.add_argument("--facts", type=int, default=100_000, help="facts in the restored file")
    parser.add_argument("--scale", type=float, default=20, help="the simulated hour's speed-up")
    args = parser.parse_args(argv)
    parts = args.only or ["lag", "restore", "storage", "beside"]
    print(
        f"# Litestream {subprocess.check_output([replication.binary(), 'version'], text=True).strip()}"
    )
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        if args.s3:
            url_for = stack.enter_context(moto_s3())
        else:
            url_for = lambda name: (folder / "replicas" / name).as_uri()
        if "lag" in parts:
            bench_lag(folder, url_for("lag"), args.base, args.seconds, [10, 50])
        if "restore" in parts:
            bench_restore(folder, url_for("big"), args.facts)
        if "storage" in parts:
            bench_storage(folder, url_for, args.base, args.scale)
        if "beside" in parts:
            bench_beside(folder, url_for)


if __name__ == "__main__":
    main()
