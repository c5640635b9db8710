"""Duplicates: does ``Store.duplicates`` find facts said twice under two keys, and only those?

    python benchmarks/dedupe.py [--semantic] [--seeds 5] [--sweep]

Each seed is a memory of 500 facts (benchmarks/personal_memory.py): 480 facts, and 20 of them
said again under another key and in other words (``coffee_order``: "Orders a flat white every
morning." and ``drink.morning``: "Has a flat white each morning."; ``friend.ana.job``: "Ana
works as a carpenter." and ``ana_occupation``: "Ana's occupation: carpenter."). The memory is
full of near misses that are not duplicates: five facts about each friend, "X lives in Porto"
for several X, the same status for several projects. A pair found is right when it is one of
the 20 seeded pairs, false otherwise.

The families are split in two: the score's constants and thresholds
(``slotmem.search.duplicates``) were fitted on other memories' pairs of the dev half's families
(``benchmarks/fit_dedupe.py``; ``--sweep`` prints the dev rows at other thresholds); the test
half's are held out, and its row at the shipped threshold is the one to quote. Figures are
summed over the seeds (20 pairs each).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import personal_memory as pm

from slotmem import Store
from slotmem.search.duplicates import THRESHOLDS

PAIRS = 20
SWEEP = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def build(memory: pm.Memory, path: Path, semantic: bool) -> Store:
    """A file holding ``memory``'s facts (embedded when ``semantic``)."""
    store = Store(path, create=True)
    store.upsert_many([{"slot": f.slot, "key": f.key, "value": f.value} for f in memory.facts])
    if semantic:
        store.semantic.reindex()
    return store


def score(store: Store, memory: pm.Memory, method: str, threshold: float) -> tuple[int, int]:
    seeded = {frozenset((a.key, b.key)) for a, b in memory.duplicates}
    pairs = store.duplicates(threshold=threshold, semantic=method == "vector")
    found = {frozenset((p.keep.key, p.drop.key)) for p in pairs}
    return len(found & seeded), len(found - seeded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="Also by vector similarity")
    parser.add_argument("--seeds", type=int, default=5, help="Memories (seeds 14, 15, ...)")
    parser.add_argument("--sweep", action="store_true", help="Print the dev half's sweep")
    args = parser.parse_args()
    methods = ["lexical"] + (["vector"] if args.semantic else [])
    totals: dict[tuple, list[int]] = {}
    seconds: dict[str, float] = dict.fromkeys(methods, 0.0)
    calls: dict[str, int] = dict.fromkeys(methods, 0)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(14, 14 + args.seeds):
            for part in ("dev", "test"):
                memory = pm.memory(seed, duplicates=PAIRS, part=part)
                store = build(memory, Path(tmp) / f"{seed}-{part}.db", args.semantic)
                for method in methods:
                    thresholds = {THRESHOLDS[method]}
                    if args.sweep and part == "dev":
                        thresholds.update(SWEEP)
                    for threshold in sorted(thresholds):
                        start = time.perf_counter()
                        found, false = score(store, memory, method, threshold)
                        seconds[method] += time.perf_counter() - start
                        calls[method] += 1
                        total = totals.setdefault((method, part, threshold), [0, 0, 0])
                        total[0] += found
                        total[1] += false
                        total[2] += PAIRS
                store.close()
    print(f"{args.seeds} memories of 500 facts, {PAIRS} seeded pairs each\n")
    print("| method | part | threshold | pairs found | false pairs | per memory |")
    print("|---|---|---|---|---|---|")
    for (method, part, threshold), (found, false, seeded) in sorted(totals.items()):
        shipped = " (shipped)" if threshold == THRESHOLDS[method] else ""
        print(
            f"| {method} | {part} | {threshold}{shipped} | {found}/{seeded} | {false} | "
            f"{found / args.seeds:.1f} found, {false / args.seeds:.1f} false |"
        )
    for method in methods:
        print(f"\n{method}: {seconds[method] / calls[method]:.2f} s per search of 500 facts")


if __name__ == "__main__":
    main()
