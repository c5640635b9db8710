"""The signature scan alone at scale, on random signatures held in memory (no file, no model).

    python benchmarks/bench_scan_scale.py [--facts 1000000] [--queries 50]

Builds ``slotmem.vectors.scan.Signatures`` of random 1,024-bit signatures in three slots of 16
shards each, as ``scan.load`` lays a file's out (``scan.arrange``), and times
``Signatures.candidates`` (the 16 nearest of each shard, as a hybrid search asks) for one slot
and for every slot: CPU time per question, p50 and p95. Random signatures have no near
neighbours: time the scan here, its recall with ``bench_semantic.py --scan-only``. What a million-fact file's scan costs without embedding a million facts
(hours on a small machine); run it from another checkout to compare its scan.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from slotmem.vectors import scan, simhash

SLOTS = ("agent", "project", "user")
SHARDS = 16


def signatures(facts: int, seed: int = 7):
    import numpy as np

    rng = np.random.default_rng(seed)
    seqs = np.arange(1, facts + 1, dtype=np.int64)
    slots = np.array(SLOTS, dtype=object)[seqs % len(SLOTS)]
    words = rng.integers(0, 2**63, size=(facts, simhash.BITS // 64), dtype=np.uint64)
    return scan.arrange(seqs, slots, seqs % SHARDS, words)


def main(argv=None) -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=50)
    args = parser.parse_args(argv)
    copy = signatures(args.facts)
    rng = np.random.default_rng(11)
    questions = [
        rng.integers(0, 256, size=simhash.BITS // 8, dtype=np.uint8).tobytes()
        for _ in range(args.queries)
    ]
    per_shard = simhash.CANDIDATES // SHARDS
    print(f"{args.facts:,} random signatures, {copy.nbytes / 2**20:.0f} MiB in memory\n")
    print("| scan | CPU p50 / p95 ms |\n|---|---|")
    for label, slots in (("one slot", ["user"]), ("all slots", None)):
        times = []
        for question in questions:
            start = time.process_time()
            copy.candidates(question, slots, per_shard, SHARDS)
            times.append(time.process_time() - start)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(f"| {label} | {statistics.median(times) * 1000:.1f} / {p95 * 1000:.1f} |")


if __name__ == "__main__":
    main()
