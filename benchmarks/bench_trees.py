"""Hybrid and lexical p50 of two checkouts side by side: bench_semantic.py run by each, alternated
process by process, each run on a fresh copy of a kept file; the median of the runs per cell.

    python benchmarks/bench_trees.py --before OTHER_CHECKOUT --db KEPT [--facts 100000]
        [--queries 100] [--runs 4]

``--after`` defaults to this checkout. Each run copies KEPT (a file bench_semantic.py built)
next to it and deletes the copy after; every run's hybrid p50 per question kind is printed as it
ends, then the table (wall p50 before / now, their ratio, and CPU p50 of every thread).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROW = re.compile(
    r"\| (common|rare|sentence) \| (user|all) \| ([\d.]+) / [\d.]+ \| ([\d.]+) / [\d.]+ \| "
    r"([\d.]+) / [\d.]+ \|"
)
RECALL = re.compile(r"\| sentence queries \| ([\d.]+) \| ([\d.]+) \|")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the other checkout")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--db", type=Path, required=True, help="a file bench_semantic.py built")
    parser.add_argument("--facts", type=int, default=100_000, help="its --facts")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args(argv)
    cells: dict = defaultdict(lambda: defaultdict(list))
    recall: dict = defaultdict(set)
    copy = args.db.with_name(f"{args.db.stem}-run{os.getpid()}.db")
    for run in range(args.runs):
        trees = [("before", args.before), ("now", args.after)]
        for name, tree in trees if run % 2 == 0 else trees[::-1]:
            shutil.copy(args.db, copy)
            try:
                out = subprocess.run(
                    [
                        sys.executable,
                        str(tree / "benchmarks" / "bench_semantic.py"),
                        "--db",
                        str(copy),
                        "--facts",
                        str(args.facts),
                        "--queries",
                        str(args.queries),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            finally:
                copy.unlink(missing_ok=True)
            for line in out.splitlines():
                if found := ROW.match(line):
                    figures = tuple(map(float, found.groups()[2:]))
                    cells[found[1], found[2]][name].append(figures)
                elif found := RECALL.match(line):
                    recall[name].add(found.groups())
            load = (
                Path("/proc/loadavg").read_text().split()[0]
                if Path("/proc/loadavg").exists()
                else "?"
            )
            done = ", ".join(f"{k[0]} {k[1]} {v[name][-1][1]}" for k, v in cells.items())
            print(f"run {run} {name} (load {load}): hybrid p50 {done}", flush=True)
    print(
        "\n| query | slots | lexical p50 before / now | hybrid p50 before / now | now ÷ before "
        "| hybrid CPU p50 before / now |\n|---|---|---|---|---|---|"
    )
    for (kind, slots), runs in cells.items():
        before, now = (
            [statistics.median(r[i] for r in runs[n]) for i in range(3)] for n in ("before", "now")
        )
        print(
            f"| {kind} | {slots} | {before[0]:.2f} / {now[0]:.2f} | {before[1]:.2f} / "
            f"{now[1]:.2f} | {now[1] / before[1]:.2f} | {before[2]:.1f} / {now[2]:.1f} |"
        )
    print(f"\nvector recall@10 (one slot, all): {dict(recall)}")


if __name__ == "__main__":
    main()
