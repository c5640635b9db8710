"""A tag filter's cost: query_facts with ``tags=[...]`` against the same query unfiltered, on
synthetic facts (synthetic.Corpus, as bench_store.py), a tag on 1% and one on 10% of them.

    python benchmarks/bench_tags.py [--facts 100000] [--queries 200]

Each query runs unfiltered, filtered to the 10% tag and filtered to the 1% tag, one right after
the other (side by side, so the machine's noise falls on all three alike), access tracking off,
lexical. The figure to read is the ratio of the filtered p50 (and total) to the unfiltered one;
the issue's bar is 1.2. The tags are written with one INSERT ... SELECT into memory_fact_tags
(as ``Store.tag`` writes them, without 11,000 transactions).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Corpus

from slotmem import Store

TAGS = {"ten": 10, "one": 100}  # tag -> every Nth fact has it


def build(path: Path, n: int, corpus: Corpus) -> Store:
    store = Store(path, create=True)
    facts = corpus.facts(n)
    for start in range(0, n, 10_000):
        store.upsert_many(facts[start : start + 10_000])
    with store.transaction():
        for tag, every in TAGS.items():
            store.conn.execute(
                "INSERT INTO memory_fact_tags (fact_seq, tag) "
                "SELECT seq, ? FROM memory_facts WHERE seq % ? = 0",
                (tag, every),
            )
    store.conn.execute("ANALYZE")
    return store


def timed(store: Store, text: str, tags) -> tuple[float, int]:
    start = time.perf_counter()
    hits = store.query_facts(text, limit=10, track_access=False, semantic=False, tags=tags)
    return (time.perf_counter() - start) * 1000, len(hits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    corpus = Corpus()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        store = build(Path(tmp) / "tags.db", args.facts, corpus)
        print(f"{args.facts:,} facts loaded in {time.perf_counter() - started:.0f} s")
        for kind in ("common", "rare"):
            queries = [getattr(corpus, f"{kind}_query")() for _ in range(args.queries)]
            for text in queries[:5]:  # warm the page cache and the vocabulary lookups
                timed(store, text, None)
            runs: dict[str, list[float]] = {"none": [], "ten": [], "one": []}
            found = {name: 0 for name in runs}
            for text in queries:
                for name, times in runs.items():
                    ms, hits = timed(store, text, None if name == "none" else [name])
                    times.append(ms)
                    found[name] += hits
            base = statistics.median(runs["none"])
            for name, label in (
                ("none", "unfiltered"),
                ("ten", "tag on 10%"),
                ("one", "tag on 1%"),
            ):
                p50 = statistics.median(runs[name])
                p95 = statistics.quantiles(runs[name], n=20)[-1]
                total = sum(runs[name]) / sum(runs["none"])
                print(
                    f"{kind:>6} | {label:>10} | p50 {p50:7.2f} ms | p95 {p95:7.2f} ms | "
                    f"p50 ratio {p50 / base:.2f} | total ratio {total:.2f} | "
                    f"hits/query {found[name] / len(queries):.1f}"
                )
        store.close()


if __name__ == "__main__":
    main()
