"""Fit the constants and thresholds of slotmem/search/duplicates.py on the dev half's families.

    python benchmarks/fit_dedupe.py [--alternatives]   # pip install 'slotmem[semantic]'; ~70 s

``FIT_SEEDS`` memories of 500 facts (benchmarks/personal_memory.py; not the seeds
benchmarks/dedupe.py reports on), each with 20 facts said again under another key, all drawn
from the dev half's families: no pair of the test half's families is ever a seeded pair here
(their facts are among the near misses, as in any memory). Each slot's candidate pairs by both
methods (``duplicates.candidates``) are labelled (one of the seeded pairs or not), then, for
each method, a logistic regression (``fit_relevance.logistic``: Newton's method, a little L2)
gives the score's constants, and the threshold is the lowest of ``GRID`` at which the memories
hold at most ``MAX_FALSE`` false pairs each (half of what the target allows: held-out families
bring some).

Printed: the constants and thresholds fitted on all of them (what slotmem ships), then how well
that generalises to families it was not fitted on, within the dev half: the dev families in
three groups; for each, the constants and threshold fitted on the first memories without that
group's pairs, measured on the last ones' pairs of that group (found, as a share of 20 per
memory) and on their false pairs. ``--alternatives`` measures subsets of the features the same way.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import personal_memory as pm
from dedupe import PAIRS, build
from fit_relevance import logistic  # the same regression, intercept first

from slotmem.search import duplicates

FIT_SEEDS = range(100, 130)
HELD = 10  # the last memories, where the cross-validation measures
MAX_FALSE = 1.0
GRID = [round(0.05 * i, 2) for i in range(1, 20)]
FEATURES = {"vector": ("cosine", "overlap", "conflict"), "lexical": ("overlap", "conflict")}
DEV_FAMILIES = [family.name for family in pm.FAMILIES if pm.split(family, "dev")]
GROUPS = [DEV_FAMILIES[i::3] for i in range(3)]


@dataclass(frozen=True)
class Row:
    seed: int
    method: str
    family: str | None  # the seeded pair's family; None: not a seeded pair
    cosine: float
    overlap: float
    conflict: float


def collect(directory: Path) -> list[Row]:
    rows = []
    for seed in FIT_SEEDS:
        memory = pm.memory(seed, duplicates=PAIRS, part="dev")
        seeded = {frozenset((a.key, b.key)): a.family.name for a, b in memory.duplicates}
        store = build(memory, directory / f"{seed}.db", semantic=True)
        vectors = store.semantic.leg()
        for method in FEATURES:
            for slot in store.slots():
                found = duplicates.candidates(
                    store.conn,
                    slot,
                    now=store.clock(),
                    vectors=vectors if method == "vector" else None,
                )
                rows += [
                    Row(
                        seed,
                        method,
                        seeded.get(frozenset((c.a.key, c.b.key))),
                        c.cosine or 0.0,
                        c.overlap,
                        c.conflict,
                    )
                    for c in found
                ]
        store.close()
    return rows


def matrix(rows: list[Row], names) -> np.ndarray:
    return np.array([[getattr(r, n) for n in names] for r in rows]).reshape(-1, len(names))


def scores(w: np.ndarray, rows: list[Row], names) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(w[0] + matrix(rows, names) @ w[1:], -60, 60)))


def counts(rows: list[Row], p: np.ndarray, threshold: float) -> tuple[int, int]:
    """(seeded pairs found, false pairs) at ``threshold``."""
    above = p >= threshold
    found = sum(1 for r, a in zip(rows, above) if a and r.family)
    return found, int(above.sum()) - found


def fit(rows: list[Row], names) -> tuple[np.ndarray, float]:
    """The constants and the lowest threshold of GRID with at most MAX_FALSE per memory."""
    w = logistic(matrix(rows, names), np.array([r.family is not None for r in rows], float))
    p = scores(w, rows, names)
    memories = len({r.seed for r in rows})
    allowed = [t for t in GRID if counts(rows, p, t)[1] <= MAX_FALSE * memories]
    return w, min(allowed, default=GRID[-1])


def cross_validate(rows: list[Row], names) -> list[tuple[float, float, float]]:
    """For each group of dev families: (threshold, found per memory as a share of 20, false
    per memory) on the held-out memories' pairs of that group."""
    held_seeds = set(FIT_SEEDS[-HELD:])
    out = []
    for group in GROUPS:
        train = [r for r in rows if r.seed not in held_seeds and r.family not in group]
        test = [r for r in rows if r.seed in held_seeds and (r.family is None or r.family in group)]
        w, threshold = fit(train, names)
        found, false = counts(test, scores(w, test, names), threshold)
        seeded = sum(1 for r in test if r.family)
        out.append((threshold, PAIRS * found / seeded, false / HELD))
    return out


def report(rows: list[Row], method: str, names) -> str:
    part = [r for r in rows if r.method == method]
    folds = cross_validate(part, names)
    cells = " | ".join(f"{t} | {found:.1f} found, {false:.1f} false" for t, found, false in folds)
    found = np.mean([f[1] for f in folds])
    false = np.mean([f[2] for f in folds])
    return f"| {method} | {', '.join(names)} | {cells} | **{found:.1f} found, {false:.1f} false** |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alternatives", action="store_true", help="Also subsets of features")
    args = parser.parse_args()
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        rows = collect(Path(tmp))
    print(
        f"{len(FIT_SEEDS)} memories, {len(rows)} candidates, {time.perf_counter() - start:.0f} s\n"
    )
    for method, names in FEATURES.items():
        w, threshold = fit([r for r in rows if r.method == method], names)
        constants = tuple(round(float(v), 2) for v in w)
        print(f"{method.upper()} = {constants}  # {', '.join(('intercept', *names))}")
        print(f"THRESHOLDS[{method!r}] = {threshold}")
    groups = " | ".join(f"group {i + 1}: threshold | pairs" for i in range(len(GROUPS)))
    print(f"\nDev families held out, {HELD} memories each ({PAIRS} pairs = all found):\n")
    print(f"| method | features | {groups} | mean |")
    print("|---|---|" + "---|---|" * len(GROUPS) + "---|")
    tried = list(FEATURES.items())
    if args.alternatives:
        tried += [
            ("vector", ("cosine",)),
            ("vector", ("cosine", "overlap")),
            ("vector", ("cosine", "conflict")),
            ("lexical", ("overlap",)),
            ("lexical", ("conflict",)),
        ]
    for method, names in tried:
        print(report(rows, method, names))


if __name__ == "__main__":
    main()
