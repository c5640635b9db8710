"""Hybrid search at scale: index build rate and query_facts latency, lexical vs hybrid.

    python benchmarks/bench_semantic.py [--facts 100000] [--queries 100]   # needs slotmem[semantic]

The model is loaded before timing (its load is a one-off per process). Synthetic facts come from
benchmarks/synthetic.py, spread over three slots.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Corpus

from slotmem import Store


def timed(store: Store, texts: list[str], **options) -> tuple[float, float]:
    samples = []
    for text in texts:
        start = time.perf_counter()
        store.query_facts(text, track_access=False, **options)
        samples.append(time.perf_counter() - start)
    samples.sort()
    return statistics.median(samples) * 1000, samples[int(len(samples) * 0.95) - 1] * 1000


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    corpus = Corpus()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "bench.db") as store:
        store.upsert_many(corpus.facts(args.facts))
        store.semantic.model().embed("warm up")  # model load is not part of the figures
        start = time.perf_counter()
        report = store.semantic.reindex()
        seconds = time.perf_counter() - start
        print(f"{args.facts:,} facts embedded and indexed in {seconds:.1f} s "
              f"({args.facts / seconds:,.0f} facts/s, model {report['model']})\n")  # fmt: skip
        print("| query | slots | lexical p50/p95 ms | hybrid p50/p95 ms |\n|---|---|---|---|")
        for kind, make in (("common", corpus.common_query), ("rare", corpus.rare_query)):
            texts = [make() for _ in range(args.queries)]
            for slots in (["user"], None):
                lex = timed(store, texts, slots=slots, semantic=False)
                hyb = timed(store, texts, slots=slots)
                print(f"| {kind} | {slots[0] if slots else 'all'} | {lex[0]:.1f} / {lex[1]:.1f} | "
                      f"{hyb[0]:.1f} / {hyb[1]:.1f} |")  # fmt: skip


if __name__ == "__main__":
    main()
