"""Train the write scan's model (slotmem/safety/model.py) on the dev rows of
benchmarks/data/safety.json and write slotmem/data/injection-model.json.gz.

    python benchmarks/train_safety.py [--check]

A logistic regression (L2, classes weighted to balance) over the features ``model.features``
extracts. Its two settings (the regularisation C and the weight of the ideas) and its threshold
are chosen by cross-validation inside the dev rows: ten random folds, five times over, and
folds that each hold out one kind of attack (a new kind of disguise or phrasing) with a share of
the ordinary facts; the settings that catch the most attacks out of fold, both ways of folding
weighing alike, win. The threshold is the lowest probability at which at most MAX_FALSE of the
dev ordinary facts, scored by models that never saw them, would be rejected. No test, holdout2
or holdout3 row is read. Needs numpy (the semantic extra); --check compares the result with
the shipped file instead of writing it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from pathlib import Path

import numpy as np

from slotmem.safety.model import WEIGHTS, design, features, model_text

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "safety.json"
OUT = ROOT / "slotmem" / WEIGHTS
GRID = [(c, scale) for c in (3.0, 10.0, 30.0, 100.0, 300.0) for scale in (0.3, 0.6, 1.0)]
MAX_FALSE = 0.01  # of the dev ordinary facts, out of fold; the patterns add their own
SEEDS = range(5)


def swapped(text: str) -> str:
    """``text`` about the other subject: the dev rows' ordinary facts are mostly about "Maja"
    and their attacks mostly name "the user", and a model must not learn that the subject of a
    fact is what makes it an attack. Each row is trained on as written and swapped."""
    if "Maja" in text:
        return re.sub(r"(^|[.!?]\s+)the user", r"\1The user", text.replace("Maja", "the user"))
    return re.sub(r"\b[Tt]he user\b", "Maja", text)


def fit(rows: list[tuple[dict[str, float], bool]], c: float) -> tuple[dict[str, float], float]:
    """Weights and bias minimising sum(class weight * log loss) + |w|^2 / (2c): Newton's
    method, each step solved through the n x n form (far fewer rows than features)."""
    names = sorted({name for values, _ in rows for name in values})
    index = {name: i for i, name in enumerate(names)}
    x = np.zeros((len(rows), len(names) + 1))
    x[:, -1] = 1.0  # the bias, regularised like the rest (as liblinear does)
    for i, (values, _) in enumerate(rows):
        for name, value in values.items():
            x[i, index[name]] = value
    y = np.array([label for _, label in rows], dtype=float)
    weight = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (weight * (p - y)) + w / c
        root = np.sqrt(weight * p * (1 - p))
        xs = x * root[:, None]
        # (I/c + xs'xs)^-1 g = c (g - xs' (I/c + xs xs')^-1 xs g)
        inner = np.linalg.solve(np.eye(len(y)) / c + xs @ xs.T, xs @ gradient)
        step = c * (gradient - xs.T @ inner)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return {name: float(w[i]) for name, i in index.items() if w[i]}, float(w[-1])


def scores(rows, fitted) -> np.ndarray:
    weights, bias = fitted
    z = [bias + sum(v * weights.get(n, 0.0) for n, v in values.items()) for values, _ in rows]
    return 1 / (1 + np.exp(-np.array(z)))


def out_of_fold(examples: list[list], folds: list[int], c: float) -> np.ndarray:
    """Each row scored by a model trained on the other folds (a row and its swapped copy are
    always in the same fold)."""
    found = np.zeros(len(examples))
    for fold in sorted(set(folds)):
        train = [e for row, f in zip(examples, folds) if f != fold for e in row]
        held = [i for i, f in enumerate(folds) if f == fold]
        found[held] = scores([examples[i][0] for i in held], fit(train, c))
    return found


def fold_plans(dev: list[dict]) -> list[list[int]]:
    """Ten random folds per seed, then one fold per kind of attack (ordinary facts spread)."""
    plans = []
    for seed in SEEDS:
        order = list(range(len(dev)))
        random.Random(seed).shuffle(order)
        folds = [0] * len(dev)
        for k, i in enumerate(order):
            folds[i] = k % 10
        plans.append(folds)
    kinds = sorted({r["kind"] for r in dev if r["label"] == "attack"})
    rng = random.Random(0)
    plans.append(
        [
            kinds.index(r["kind"]) if r["label"] == "attack" else rng.randrange(len(kinds))
            for r in dev
        ]
    )
    return plans


def threshold(oof: np.ndarray, attack: np.ndarray) -> float:
    """The lowest cut with at most MAX_FALSE of the ordinary facts at or above it."""
    ordinary = np.sort(oof[~attack])[::-1]
    allowed = int(MAX_FALSE * len(ordinary))
    return float(ordinary[allowed]) + 1e-9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Compare with the shipped file")
    args = parser.parse_args()
    dev = [r for r in json.loads(DATA.read_text())["injection"] if r["split"] == "dev"]
    attack = np.array([r["label"] == "attack" for r in dev])
    texts = [dict.fromkeys([r["text"], swapped(r["text"])]) for r in dev]
    plain = [[features(model_text(text)) for text in both] for both in texts]
    plans = fold_plans(dev)
    print("| C | idea weight | caught out of fold (random folds) | (one kind held out) |")
    print("|---|---|---|---|")
    results = []
    for c, scale in GRID:
        examples = [[(design(*f, scale), a) for f in row] for row, a in zip(plain, attack)]
        oofs = [out_of_fold(examples, plan, c) for plan in plans]
        caught = [(oof[attack] >= threshold(oof, attack)).mean() for oof in oofs]
        # new kinds of attack count as much as new rows of known kinds
        results.append(((np.mean(caught[:-1]) + caught[-1]) / 2, c, scale, oofs))
        print(f"| {c} | {scale} | {np.mean(caught[:-1]):.1%} | {caught[-1]:.1%} |")
    _, c, scale, oofs = max(results, key=lambda r: r[0])
    pooled = np.concatenate(oofs[:-1])  # the random folds: every row scored once per seed
    cut = threshold(pooled, np.tile(attack, len(oofs) - 1))
    weights, bias = fit([(design(*f, scale), a) for row, a in zip(plain, attack) for f in row], c)
    model = {
        "about": "slotmem's write-scan model: trained by benchmarks/train_safety.py on the dev "
        f"rows of benchmarks/data/safety.json (C={c}); threshold by cross-validation",
        "bias": round(bias, 5),
        "idea_scale": scale,
        "threshold": round(cut, 5),
        "weights": {n: round(w, 5) for n, w in sorted(weights.items()) if abs(w) >= 1e-4},
    }
    print(
        f"\nchosen: C={c}, idea weight {scale}, threshold {cut:.3f}, {len(model['weights'])} weights"
    )
    blob = json.dumps(model, indent=0, ensure_ascii=False, sort_keys=True).encode()
    if args.check:
        shipped = json.loads(gzip.decompress(OUT.read_bytes()))
        same = shipped == json.loads(blob)
        print("the shipped model matches" if same else "the shipped model differs")
        sys.exit(0 if same else 1)
    OUT.write_bytes(gzip.compress(blob, mtime=0))
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
