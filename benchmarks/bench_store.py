"""slotmem against raw SQL on synthetic facts: load rate, file size, query latency.

    python benchmarks/bench_store.py [--sizes 10000,100000] [--queries 200] [--no-raw-load]
    python benchmarks/bench_store.py --sizes 1000000      # about 10 minutes

Load: Store.upsert_many (validation, history, ids) vs executemany of the same UPSERT statement
into an identical fresh schema. Size: the file's bytes per fact after a WAL checkpoint.
Queries (common: 5 of the 50 most frequent words; rare: 3 words of rank 5,000 or more), over
all slots, then common ones filtered to a slot of a third of the facts (@user) and to one of the
oldest 0.1% (@pinned: a user's preferences in a big episodic memory):
- raw OR: the naive statement, every term OR-ed in one MATCH, bm25 × confidence, ORDER BY,
  LIMIT 10, run raw (the baseline: bm25 scores every posting of every common word; timed on
  the first 20 queries only);
- raw plan: the very statement query_facts runs (terms looked up beforehand), run raw;
- query_facts: the whole call (terms, vocabulary lookups, statement, Hit objects), access
  tracking off, then on; and its mean CPU time per call (tracking off), the figure to compare
  on a shared machine.
Ratios are what to read: the machines are noisy.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import or_query
from synthetic import Corpus

from slotmem import Store, validation
from slotmem.search import plan as lexical
from slotmem.search.terms import parse
from slotmem.storage.rows import UPSERT_SQL, upsert_rows

RAW_OR_SQL = """
    SELECT f.*, -bm25(memory_facts_fts, 2.0, 1.0, 0.0) * f.confidence AS score
    FROM memory_facts_fts JOIN memory_facts f ON f.seq = memory_facts_fts.rowid
    WHERE memory_facts_fts MATCH :match ORDER BY score DESC LIMIT 10"""
RAW_OR_SAMPLE = 20
KINDS = [  # (label, Corpus method, slots)
    ("common", "common_query", None),
    ("rare", "rare_query", None),
    ("common @user", "common_query", ["user"]),  # a slot holding a third of the facts
    ("common @pinned", "common_query", ["pinned"]),  # the oldest 0.1% of the facts
]
HEADER = (
    f"{'facts':>9} | {'bytes/fact':>10} | {'query':>13} | {'raw OR p50/p95':>15} | "
    f"{'raw plan p50/p95':>16} | {'query_facts p50/p95':>19} | {'+track p50':>10} | "
    f"{'query_facts CPU':>15}"
)


def load_raw(path: Path, items: list[dict], multi: bool = False) -> tuple[float, float]:
    """Facts per second, by the clock and by this process's CPU time (the figure to compare on
    a shared machine, where the clock also counts the time other processes held the CPUs).
    ``multi``: the rows written as slotmem writes them (``rows.upsert_rows``: statements of up to
    2,048 rows), not one ``executemany`` row at a time."""
    Store(path, create=True).close()  # schema only
    rows = [
        (
            secrets.token_hex(8),
            i["slot"],
            i["key"],
            i["value"],
            i["confidence"],
            i["source"],
            1,
            1,
            1,
            None,  # protected_at
            None,  # expires_at
            validation.key_form(i["key"]),
        )
        for i in items
    ]
    store = Store(path)
    start, cpu = time.perf_counter(), time.process_time()
    store.conn.execute("BEGIN IMMEDIATE")
    if multi:
        upsert_rows(store.conn, rows)
    else:
        store.conn.executemany(UPSERT_SQL, rows)
    store.conn.execute("COMMIT")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    store.close()
    return len(items) / elapsed, len(items) / cpu


def load_slotmem(path: Path, items: list[dict], batch: int = 100_000) -> tuple[Store, float, float]:
    store = Store(path, create=True)
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(items), batch):
        store.upsert_many(items[i : i + batch])
    rate = len(items) / (time.perf_counter() - start)
    cpu_rate = len(items) / (time.process_time() - cpu)
    store.checkpoint()
    return store, rate, cpu_rate


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1000, samples[max(0, int(len(samples) * 0.95) - 1)] * 1000


def timed(call, *args, **options) -> float:
    """Seconds taken by call(*args, **options), rows fetched when it returns a cursor."""
    start = time.perf_counter()
    result = call(*args, **options)
    if hasattr(result, "fetchall"):
        result.fetchall()
    return time.perf_counter() - start


def time_queries(store: Store, texts: list[str], slots) -> dict[str, tuple[float, float]]:
    conn, timings = store.conn, {"raw OR": [], "raw plan": [], "query_facts": [], "+track": []}
    cpu = 0.0
    raw_or = RAW_OR_SQL.replace("ORDER BY", "AND f.slot = :slot ORDER BY") if slots else RAW_OR_SQL
    for text in texts[:RAW_OR_SAMPLE]:  # seconds each at 1M facts: a sample is enough
        params = {"match": or_query(text), "slot": slots and slots[0]}
        timings["raw OR"].append(timed(conn.execute, raw_or, params))
    for text in texts:
        plan = lexical.plan(conn, parse(text))
        if plan:  # no arms: no term occurs, nothing to run
            sql, params = store.ranking.sql(plan, slots)
            sql = f"SELECT * FROM ({sql}) ORDER BY score DESC, seq DESC LIMIT 10"
            timings["raw plan"].append(timed(conn.execute, sql, params))
        began = time.process_time()
        timings["query_facts"].append(
            timed(store.query_facts, text, slots=slots, track_access=False)
        )
        cpu += time.process_time() - began
        timings["+track"].append(timed(store.query_facts, text, slots=slots))
    found = {name: percentiles(values) for name, values in timings.items()}
    found["cpu"] = (cpu / len(texts) * 1000, 0.0)  # mean CPU ms: the figure for a shared machine
    return found


def bench_size(size: int, queries: int, raw_load: bool) -> None:
    corpus = Corpus()
    items = corpus.facts(size)
    for item in items[: max(10, size // 1000)]:  # the oldest 0.1%: a small slot in a big file
        item["slot"] = "pinned"
    chars = sum(len(item["value"]) for item in items) / size
    with tempfile.TemporaryDirectory() as tmp:
        nan = float("nan")
        raw_rate, raw_cpu = load_raw(Path(tmp) / "raw.db", items) if raw_load else (nan, nan)
        store, rate, cpu = load_slotmem(Path(tmp) / "slotmem.db", items)
        per_fact = store.path.stat().st_size / size
        print(
            f"# {size:,} facts, values of {chars:.0f} characters on average: upsert_many "
            f"{rate:,.0f}/s, raw executemany {raw_rate:,.0f}/s ({rate / raw_rate:.2f}x); "
            f"by CPU time {cpu:,.0f}/s and {raw_cpu:,.0f}/s ({cpu / raw_cpu:.2f}x)",
            flush=True,
        )
        for kind, make, slots in KINDS:
            t = time_queries(store, [getattr(corpus, make)() for _ in range(queries)], slots)
            cells = [f"{t[name][0]:>7.2f}/{t[name][1]:<7.2f}" for name in ("raw OR", "raw plan")]
            qf = f"{t['query_facts'][0]:>9.2f}/{t['query_facts'][1]:<9.2f}"
            print(
                f"{size:>9} | {per_fact:>10.0f} | {kind:>13} | {cells[0]:>15} | {cells[1]:>16} | "
                f"{qf:>19} | {t['+track'][0]:>10.2f} | {t['cpu'][0]:>15.3f}",
                flush=True,
            )
        store.close()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-raw-load", action="store_true", help="skip the raw load (saves time)")
    args = parser.parse_args(argv)
    print(HEADER)
    for size in (int(s) for s in args.sizes.split(",")):
        bench_size(size, args.queries, not args.no_raw_load)


if __name__ == "__main__":
    main()
