"""slotmem against the same SQL run raw, side by side on the same machine in one run.

    python benchmarks/bench_store.py [--sizes 10000,100000] [--queries 200]

Bulk load: Store.upsert_many (validation, history, ids) vs executemany of the same UPSERT
statement into an identical fresh schema. Query: Store.query_facts (sanitizing, ranking SQL,
hit objects; access tracking off, and on) vs the same ranking SQL executed raw with a prebuilt
MATCH expression. Ratios are what to read: the machines are noisy.
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

from synthetic import Corpus

from slotmem import Store, query
from slotmem.store import UPSERT_SQL


def load_raw(path: Path, items: list[dict]) -> float:
    store = Store(path)  # schema only
    rows = [
        (secrets.token_hex(8), i["slot"], i["key"], i["value"], i["confidence"], i["source"], 1, 1, 1)
        for i in items
    ]
    start = time.perf_counter()
    conn = store.conn
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(UPSERT_SQL, rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    store.close()
    return len(items) / elapsed


def load_slotmem(path: Path, items: list[dict]) -> tuple[Store, float]:
    store = Store(path)
    start = time.perf_counter()
    store.upsert_many(items)
    return store, len(items) / (time.perf_counter() - start)


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return statistics.median(samples) * 1000, samples[int(len(samples) * 0.95) - 1] * 1000


def time_queries(store: Store, texts: list[str]) -> dict[str, tuple[float, float]]:
    raw_sql = store_sql(store)
    timings: dict[str, list[float]] = {"raw SQL": [], "query_facts": [], "query_facts+track": []}
    for text in texts:
        params = {"match": query.build(text), "limit": 10, "now": 0}
        start = time.perf_counter()
        store.conn.execute(raw_sql, params).fetchall()
        timings["raw SQL"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.query_facts(text, track_access=False)
        timings["query_facts"].append(time.perf_counter() - start)
        start = time.perf_counter()
        store.query_facts(text)
        timings["query_facts+track"].append(time.perf_counter() - start)
    return {name: percentiles(values) for name, values in timings.items()}


def store_sql(store: Store) -> str:
    return f"""SELECT * FROM (SELECT f.*, {store.ranking.columns()}
        FROM memory_facts_fts JOIN memory_facts f ON f.seq = memory_facts_fts.rowid
        WHERE memory_facts_fts MATCH :match) ORDER BY score DESC LIMIT :limit"""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"{'facts':>8} | {'raw upsert/s':>12} | {'slotmem/s':>10} | {'ratio':>6} || "
          f"{'query':>6} | {'raw p50/p95 ms':>15} | {'slotmem p50/p95':>16} | {'+track p50':>10} | {'p50 ratio':>9}")  # fmt: skip
    for size in (int(s) for s in args.sizes.split(",")):
        corpus = Corpus()
        items = corpus.facts(size)
        with tempfile.TemporaryDirectory() as tmp:
            raw_rate = load_raw(Path(tmp) / "raw.db", items)
            store, rate = load_slotmem(Path(tmp) / "slotmem.db", items)
            for kind, make in (("common", corpus.common_query), ("rare", corpus.rare_query)):
                texts = [make() for _ in range(args.queries)]
                t = time_queries(store, texts)
                raw, ours, tracked = t["raw SQL"], t["query_facts"], t["query_facts+track"]
                print(f"{size:>8} | {raw_rate:>12,.0f} | {rate:>10,.0f} | {rate / raw_rate:>6.2f} || "
                      f"{kind:>6} | {raw[0]:>7.2f}/{raw[1]:<7.2f} | {ours[0]:>8.2f}/{ours[1]:<7.2f} | "
                      f"{tracked[0]:>10.2f} | {ours[0] / raw[0]:>9.2f}")  # fmt: skip
            store.close()


if __name__ == "__main__":
    main()
