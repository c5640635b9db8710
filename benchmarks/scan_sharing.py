"""Where sharing the signature scan between two threads starts to pay (``semantic.SHARE_ROWS``).

    python benchmarks/scan_sharing.py [--rows 33000 100000 250000 333000 1000000] [--questions 60]

For each size, random signatures of that many rows in the layout ``scan.Signatures`` holds (16
shards, 3 slots), scanned across every slot for random questions: wall time (ms, median) of the
scan run by a worker thread while the calling thread waits ("alone"), and of the same scan with
the calling thread joining in (``Scan.help``, "shared"), alternated question by question. A
hybrid search's calling thread joins only from ``SHARE_ROWS`` rows.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from slotmem.storage.workers import Worker
from slotmem.vectors import scan

SHARDS, SLOTS = 16, ("agent", "project", "user")


def signatures(rows: int, rng) -> scan.Signatures:
    """``rows`` random signatures (rounded down to a multiple of 48), sorted as the index's copy
    is: (shard, slot, seq)."""
    per = rows // (len(SLOTS) * SHARDS)
    total = per * len(SLOTS) * SHARDS
    words = rng.integers(0, 2**63, size=(total, 16), dtype=np.uint64)
    partitions, shards, at = {}, {}, 0
    for shard in range(SHARDS):
        first = at
        for slot in SLOTS:
            partitions[slot, shard] = (at, at + per)
            at += per
        shards[shard] = (first, at)
    return scan.Signatures(
        np.arange(total, dtype=np.int64),
        np.ascontiguousarray(words[:, : scan.SCREEN_WORDS].T),
        np.ascontiguousarray(words[:, scan.SCREEN_WORDS :]),
        partitions,
        shards,
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--rows", type=int, nargs="+", default=[33_000, 100_000, 250_000, 1_000_000]
    )
    parser.add_argument("--questions", type=int, default=60)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(1)
    worker = Worker("bench-scan")
    print("| rows | alone ms | shared ms | shared ÷ alone |\n|---|---|---|---|")
    try:
        for rows in args.rows:
            index = signatures(rows, rng)
            walls: dict[bool, list[float]] = {False: [], True: []}
            for i in range(args.questions):
                question = rng.integers(0, 2**63, size=16, dtype=np.uint64).tobytes()
                for shared in (i % 2 == 0, i % 2 != 0):
                    task = index.scan(question, None, 4, SHARDS)
                    start = time.perf_counter()
                    job = worker.submit(task.run)
                    assert job is not None
                    if shared:
                        task.help()
                    job.result()
                    walls[shared].append(time.perf_counter() - start)
            alone, shared = (statistics.median(walls[key]) * 1000 for key in (False, True))
            print(f"| {len(index):,} | {alone:.2f} | {shared:.2f} | {shared / alone:.2f} |")
    finally:
        worker.shutdown()


if __name__ == "__main__":
    main()
