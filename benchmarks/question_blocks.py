"""Questions in int8 blocks against full precision: time, closeness, and the facts they find.

    python benchmarks/question_blocks.py [--queries 100] [--seed 11] [--db KEPT]

Both sessions of the default model on one onnxruntime thread, as a search's worker runs them:
the full-precision one (``embedders._session``, the graph that embeds facts) and the one of
the graph in int8 blocks (``question_graph.py``, ``embedders._blocks_session``). Questions
are drawn as bench_semantic.py draws them (``--seed``; common words, rare words, sentences),
and a few that users type. Each is embedded by both, the order swapped question by question,
several times; per kind: p50 wall and CPU (ms) and their ratio, and the cosine of the two
vectors (p50, min). Alternating the two sessions, each finds the processor's cache filled with
the other's weights; a process asks its questions of one session, so a second table times each
session over all the questions of a kind in a row. With ``--db`` (a file ``bench_semantic.py --build-only`` built): how many of
the 10 nearest facts by the full-precision vector the blocks' vector also puts in its 10
nearest, exactly (every stored vector read, in one slot and across slots).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
from bench_semantic import Corpus, english_words

from slotmem.vectors import embedders

TYPED = [
    "when do we ship?",
    "What language do I prefer?",
    "which text editor do I use?",
    "東京で何を食べた？",
    "café crème brûlée 🎉",
    "Who painted the Mona Lisa?",
]


def vector(parts, session, text: str):
    """The unit vector of ``text`` on ``session`` (MiniLM.embed_batch for one text)."""
    _, _, _, tokenizer = parts
    [encoded] = tokenizer.encode_batch([text])
    ids = np.array([encoded.ids], dtype=np.int64)
    mask = np.array([encoded.attention_mask], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    hidden = session.run(None, feed)[0]
    pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True))[0].astype(np.float64)


def timed(parts, session, text: str) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.thread_time()
    found = vector(parts, session, text)
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000, found


def nearest(db: Path):
    """(unit matrix of every stored vector, a mask of the facts in slot 'user')."""
    from slotmem import Store

    with Store(db) as store:
        seqs = [seq for (seq,) in store.conn.execute("SELECT seq FROM memory_facts ORDER BY seq")]
        slot = dict(store.conn.execute("SELECT seq, slot FROM memory_facts"))
        found, matrix = store.semantic._matrix(seqs)
    return matrix.astype(np.float64), np.array([slot[seq] == "user" for seq in found])


def overlap(matrix, user, a, b) -> tuple[float, float]:
    one, every = [], []
    for mask, out in ((user, one), (None, every)):
        da, db = matrix @ a, matrix @ b
        if mask is not None:
            da, db = np.where(mask, da, -9.0), np.where(mask, db, -9.0)
        top_a = set(np.argpartition(-da, 10)[:10].tolist())
        top_b = set(np.argpartition(-db, 10)[:10].tolist())
        out.append(len(top_a & top_b) / 10)
    return one[0], every[0]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=100, help="questions of each kind")
    parser.add_argument(
        "--seed", type=int, default=11, help="11: the blocks' size was chosen on it"
    )
    parser.add_argument("--repeat", type=int, default=3, help="timings of each question")
    parser.add_argument("--db", type=Path, help="a kept file: the 10 nearest facts, compared")
    args = parser.parse_args(argv)
    *parts, data = embedders.MiniLM._load()
    numpy, onnxruntime, path, tokenizer = parts
    full = embedders._session(onnxruntime, path, quick=False, threads=1)
    blocks = embedders._blocks_session(numpy, onnxruntime, path, data, tokenizer, 1)
    if blocks is None:
        raise SystemExit("the graph in int8 blocks cannot run here (see the log line)")
    corpus = Corpus(words=english_words(), seed=args.seed)
    kinds = {
        "common": [corpus.common_query() for _ in range(args.queries)],
        "rare": [corpus.rare_query() for _ in range(args.queries)],
        "sentence": [corpus.sentence(5, 12) for _ in range(args.queries)],
        "typed": TYPED,
    }
    stored = nearest(args.db) if args.db else None
    print(
        "| kind | questions | full wall / CPU ms | blocks wall / CPU ms | blocks ÷ full (CPU) "
        "| cosine p50 / min |" + (" top-10 kept, one slot / all |" if stored else "")
    )
    print("|---|---|---|---|---|---|" + ("---|" if stored else ""))
    for kind, texts in kinds.items():
        times: dict[str, list[tuple[float, float]]] = {"full": [], "blocks": []}
        cosines, kept = [], []
        for i, text in enumerate(texts):
            order = [("full", full), ("blocks", blocks)]
            vectors = {}
            for _ in range(args.repeat):
                for name, session in order if i % 2 else order[::-1]:
                    wall, cpu, vectors[name] = timed(parts, session, text)
                    times[name].append((wall, cpu))
            cosines.append(float(vectors["full"] @ vectors["blocks"]))
            if stored:
                kept.append(overlap(*stored, vectors["full"], vectors["blocks"]))

        def p50(name: str, at: int, times=times) -> float:
            return statistics.median(t[at] for t in times[name])

        row = (
            f"| {kind} | {len(texts)} | {p50('full', 0):.2f} / {p50('full', 1):.2f} "
            f"| {p50('blocks', 0):.2f} / {p50('blocks', 1):.2f} "
            f"| {p50('blocks', 1) / p50('full', 1):.2f} "
            f"| {statistics.median(cosines):.5f} / {min(cosines):.5f} |"
        )
        if stored:
            one = statistics.mean(k[0] for k in kept)
            every = statistics.mean(k[1] for k in kept)
            row += f" {one:.3f} / {every:.3f} |"
        print(row)
    print("\nIn a row (each session over a kind's questions, twice; CPU p50 ms):\n")
    print("| kind | full | blocks | blocks ÷ full |\n|---|---|---|---|")
    for kind, texts in kinds.items():
        cpu = {}
        for name, session in (("full", full), ("blocks", blocks)):
            cpu[name] = statistics.median(
                timed(parts, session, text)[1] for _ in range(2) for text in texts
            )
        print(
            f"| {kind} | {cpu['full']:.2f} | {cpu['blocks']:.2f} | {cpu['blocks'] / cpu['full']:.2f} |"
        )


if __name__ == "__main__":
    main()
