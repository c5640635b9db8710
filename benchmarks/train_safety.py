"""Train the write scan's models (slotmem/safety/model.py) on every labelled row of
benchmarks/data/safety*.json, and write slotmem/data/injection-model.json.gz (the base model)
and injection-model-semantic.json.gz (the same features and the text's vector from the default
embedding model, for an install with the semantic extra).

    python benchmarks/train_safety.py [--check] [--only base|semantic]

A logistic regression (L2, classes weighted to balance, the bias regularised) over the features
``model.features`` extracts, with the settings of GRID and SEMANTIC_GRID (the regularisation C,
the weight of the ideas, of the spelling features and of the embedding). Since the eighth round
every split is trained on (each a file written at one time by one author; safety.json's five
splits counted alone), and the threshold comes from leaving one split out
(benchmarks/safety_cv.py): each split's rows scored by the model trained on the others, the cut
the lowest probability at which at most MAX_FALSE (the base model: BASE_MAX_FALSE) of all the
ordinary facts, so scored, would be refused; the model also reports the band below it
(UNSURE_FALSE) as unsure. The split a text comes from is never the split that scores it, so
the cut is what unseen wording meets. A row is scored as the scan weighs it: the semantic model
its whole text, the base model the most its text or any of its sentences (``model.segments``)
weighs; each row is trained on as written and with its subject swapped, and an ordinary row's
sentences as ordinary (an attack's are not: its first sentence is often an ordinary fact).

The fit is solved in the primal by L-BFGS over the sparse features (the sixth and seventh
rounds solved the same objective by Newton's method in the dual: minutes a fit instead of
seconds). The texts' vectors are kept in a cache file in the temporary directory between runs.
Needs the semantic extra (numpy and the embedding model); --check compares the results with the
shipped files instead of writing them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

from slotmem.safety.model import SEMANTIC_WEIGHTS, WEIGHTS
from slotmem.vectors.embedders import DEFAULT_MODEL, MiniLM

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "slotmem" / WEIGHTS
SEMANTIC_OUT = ROOT / "slotmem" / SEMANTIC_WEIGHTS
# (C, idea weight, spelling weight, embedding weight): the seventh round's settings; leaving
# one split out, C 30 or 300 and the other settings tried in the eighth round moved the mean
# by under half a point (docs/benchmarks.md)
GRID = [(300.0, 0.3, 0.0, 0.0)]
SEMANTIC_GRID = [(300.0, 0.3, 1.0, 2.0)]
# of the ordinary facts, each scored by the model that held its split out. The eighth round's
# shares were 1% (semantic) and 1.1% (base); in the tenth, leaving one split out with
# safety-train10.json trained on, the mean split of the older ones (semantic scan): 1.1% / 1%
# 84.9% caught, 2.1% refused; 1.5% / 1.25% 87.3%, 2.4%; 2% / 1.5% 89.0%, 2.6%. The middle pair
# was chosen (unseen splits have refused up to 1.7 points more than this estimate: holdout8),
# and the base model's share then raised to 1.75% (cut 0.943): at 1.5% (0.952) an order after a
# project fact in tests/test_scan_sentences.py passed (0.949)
# In the eleventh round (structure features, safety-train11.json), leaving one split out, the
# mean of the thirteen oldest splits and train10's fold (semantic scan): 1.75% / 1.25% 87.9%
# caught, 2.0% refused, train10 52.2% / 2.3%; 2% / 1.5% 89.2%, 2.1%, train10 57.4% / 3.1%;
# 2.25% / 1.75% 90.1%, 2.2%, train10 58.2% / 3.6%. The middle pair was chosen on these figures
# (the older splits refuse less than the tenth round's 2.5% estimate at its shares); the
# round's held-back split (train11-test) was read only after
# In the twelfth round (persona, allegiance, wide deletion and house-rule features,
# safety-train12.json), leaving one split out over all 17 splits with the multilingual reader
# (0.5%), the mean split (semantic scan; base scan): 2% / 1.5% 89.5% caught, 2.51% refused
# (88.6%, 2.60%); 2.25% / 1.75% 90.5%, 2.75% (89.3%, 2.85%); 2.5% / 2% 90.8%, 2.94% (89.6%,
# 2.99%); 2.75% / 2.25% 91.2%, 3.18% (90.2%, 3.31%). The loosest pair whose mean split refuses
# at most 3.0% was chosen (the unseen splits refused less than this estimate on two of three:
# 0.5% and 2.6%, 3.7% on holdout9); the round's held-back split (train12-test) was read only after
MAX_FALSE = 0.02
BASE_MAX_FALSE = 0.025
UNSURE_FALSE = 0.08  # the unsure band reaches down to the cut this share of them is above


def swapped(text: str) -> str:
    """``text`` about the other subject: the dev rows' ordinary facts are mostly about "Maja"
    and their attacks mostly name "the user", and a model must not learn that the subject of a
    fact is what makes it an attack. Each row is trained on as written and swapped."""
    if "Maja" in text:
        return re.sub(r"(^|[.!?]\s+)the user", r"\1The user", text.replace("Maja", "the user"))
    return re.sub(r"\b[Tt]he user\b", "Maja", text)


def embedded(texts: list[str]) -> np.ndarray:
    """The texts' vectors from the default embedding model, kept in a cache file beside the
    system's temporary files between runs (embedding every text costs minutes)."""
    cache_path = (
        Path(tempfile.gettempdir()) / f"slotmem-train-safety-{DEFAULT_MODEL.replace('/', '_')}.npz"
    )
    return cached_vectors(cache_path, texts, lambda missing: MiniLM().embed_multi(missing))


def cached_vectors(path: Path, texts: list[str], embed) -> np.ndarray:
    """The texts' vectors, those not in the cache file ``path`` made by ``embed`` (a list of
    texts in, a vector per text out) and added to it."""
    cache: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path, allow_pickle=False) as saved:
            cache = dict(zip(saved["texts"].tolist(), saved["vectors"]))
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        cache.update(zip(missing, np.array(list(embed(missing)), dtype=float)))
        names = list(cache)
        np.savez(path, texts=np.array(names), vectors=np.array([cache[n] for n in names]))
    return np.array([cache[t] for t in texts], dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="Compare with the shipped files")
    parser.add_argument(
        "--only", choices=["base", "semantic"], help="Train one of the models (both by default)"
    )
    args = parser.parse_args()
    from safety_cv import Labelled, trained_model  # beside this file; it imports this one

    labelled = Labelled.load()
    same = True
    for name, out, (settings, share) in (
        ("base", OUT, (GRID[0], BASE_MAX_FALSE)),
        ("semantic", SEMANTIC_OUT, (SEMANTIC_GRID[0], MAX_FALSE)),
    ):
        if args.only not in (None, name):
            continue
        model = trained_model(labelled, name, settings, share, UNSURE_FALSE)
        print(
            f"{name}: C={settings[0]}, idea weight {settings[1]}, spelling weight "
            f"{settings[2]}, embedding weight {settings[3]}, threshold {model['threshold']:.3f},"
            f" unsure from {model['unsure']:.3f}, {len(model['weights'])} weights"
        )
        blob = json.dumps(model, indent=0, ensure_ascii=False, sort_keys=True).encode()
        if args.check:
            shipped = json.loads(gzip.decompress(out.read_bytes()))
            same = same and shipped == json.loads(blob)
        else:
            out.write_bytes(gzip.compress(blob, mtime=0))
            print(f"wrote {out.relative_to(ROOT)} ({out.stat().st_size} bytes)")
    if args.check:
        print("the shipped models match" if same else "the shipped models differ")
        sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
