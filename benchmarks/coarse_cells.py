"""Coarse cells for the signature scan, measured, not built: what share of the signatures a
search would have to read, and what vector recall it would keep, if the facts' vectors were
grouped into cells (spherical k-means) and a search scanned only the cells nearest its question.

    python benchmarks/coarse_cells.py --db KEPT [--facts 1000000] [--questions 100]
        [--cells 1024] [--probes 16,32,64,128]

KEPT: a file bench_semantic.py built (only read). The questions are sentences drawn as
scan_heldout.py draws them (after the benchmark's own and 500 more). For each question: the
exact 10 nearest (brute force over the stored vectors of the slots searched), today's scan
(``scan.Signatures.candidates`` over every signature, re-ranked by the stored vectors), and the
same scan over the rows of the ``P`` cells whose centroids are nearest the question (the same
candidates per shard, the same re-rank). The cells are fitted on a sample of 50,000 stored
vectors (10 rounds) and every fact put in its nearest. Prints recall@10 and the share of rows
read, one slot and all slots, and the scan's CPU over the rows kept, gathered contiguously as a
layout sorted by cell would hold them (the gather itself not counted), each scan run twice and
the second timed (the brute force before it evicts the signatures from the caches).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_semantic import english_words
from synthetic import Corpus

from slotmem import Store
from slotmem.vectors import scan, simhash

K = 10
SAMPLE = 50_000
ROUNDS = 10


def fit(np, vectors, cells: int, seed: int = 3):
    """Centroids of spherical k-means (unit vectors, nearest by dot product) on a sample."""
    rng = np.random.default_rng(seed)
    sample = vectors[rng.choice(len(vectors), min(SAMPLE, len(vectors)), replace=False)]
    centroids = sample[rng.choice(len(sample), cells, replace=False)].copy()
    for _ in range(ROUNDS):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        empty = np.linalg.norm(sums, axis=1) == 0
        sums[empty] = sample[rng.choice(len(sample), int(empty.sum()), replace=False)]
        centroids = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return centroids


def assign(np, vectors, centroids, batch: int = 65_536):
    return np.concatenate(
        [
            np.argmax(vectors[i : i + batch] @ centroids.T, axis=1)
            for i in range(0, len(vectors), batch)
        ]
    )


def recall(np, seqs, scores, exact: set, chosen: list[int]) -> float:
    """Share of ``exact`` among the ``K`` best of ``chosen`` by ``scores`` (the re-rank)."""
    kept = np.isin(seqs, chosen)
    ranked = np.flatnonzero(kept)[np.argsort(-scores[kept])[:K]]
    return len(exact & set(seqs[ranked].tolist())) / K


def timed(signatures, signature: bytes, slots, per_shard: int, shards: int):
    """The scan's candidates and its CPU on this thread (not BLAS's threads, which spin after
    the brute-force product), run twice and the second timed: the first brings the rows into
    the caches the product evicted."""
    signatures.candidates(signature, slots, per_shard, shards)
    started = time.thread_time()
    chosen = signatures.candidates(signature, slots, per_shard, shards)
    return chosen, time.thread_time() - started


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--facts", type=int, default=100_000, help="the file's --facts")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--cells", type=int, default=1024)
    parser.add_argument("--probes", default="16,32,64,128")
    args = parser.parse_args(argv)
    import numpy as np

    probes = [int(p) for p in args.probes.split(",")]
    corpus = Corpus(words=english_words())
    corpus.facts(args.facts)  # the same draws as the file's
    for _ in range(100):
        corpus.common_query(), corpus.rare_query(), corpus.sentence(5, 12)
    for _ in range(500):
        corpus.sentence(5, 12)
    texts = [corpus.sentence(5, 12) for _ in range(args.questions)]
    with Store(args.db, readonly=True) as store:
        semantic = store.semantic
        index = semantic.index
        seqs, slots, shards, words = scan._from_shadow(store.conn, "memory_vec", simhash.BITS // 8)
        started = time.perf_counter()
        found, matrix = semantic._matrix(seqs.tolist())
        where = {seq: i for i, seq in enumerate(seqs.tolist())}
        rows = np.array([where[seq] for seq in found])  # the indexed facts with a stored vector
        seqs, slots, shards, words = seqs[rows], slots[rows], shards[rows], words[rows]
        vectors = np.asarray(matrix, dtype=np.float32)
        print(f"{len(seqs)} rows, vectors read in {time.perf_counter() - started:.1f} s")
        started = time.process_time()
        centroids = fit(np, vectors, args.cells)
        cell = assign(np, vectors, centroids)
        sizes = np.bincount(cell, minlength=args.cells)
        print(
            f"{args.cells} cells fitted and assigned in {time.process_time() - started:.1f} s CPU; "
            f"rows a cell p50 {int(np.median(sizes))}, largest {sizes.max()}\n"
        )
        every = scan.arrange(seqs, slots, shards, words)
        per_shard, count = index._per_shard(K), index.shards
        blobs = [semantic.query_vector(text) for text in texts]
        print("| slots | scan | rows read | recall@10 | scan CPU ms p50 |\n|---|---|---|---|---|")
        for searched in (["user"], None):
            in_slots = np.isin(slots, searched) if searched else np.ones(len(seqs), dtype=bool)
            results: dict[str, list] = {"every row": [], **{f"{p} cells": [] for p in probes}}
            shares: dict[str, list] = {name: [] for name in results}
            cpu: dict[str, list] = {name: [] for name in results}
            for blob in blobs:
                query = np.frombuffer(blob, dtype="<f4")
                signature = simhash.signatures([blob], len(query))[0]
                scores = vectors @ query
                allowed = np.flatnonzero(in_slots)
                exact = set(seqs[allowed[np.argsort(-scores[allowed])[:K]]].tolist())
                order = np.argsort(-(centroids @ query))

                scans = [("every row", every, in_slots)]
                for p in probes:
                    rows = np.isin(cell, order[:p]) & in_slots
                    part = scan.arrange(seqs[rows], slots[rows], shards[rows], words[rows])
                    scans.append((f"{p} cells", part, rows))
                for name, signatures, rows in scans:
                    chosen, seconds = timed(signatures, signature, searched, per_shard, count)
                    cpu[name].append(seconds)
                    results[name].append(recall(np, seqs, scores, exact, chosen))
                    shares[name].append(rows.sum() / in_slots.sum())
            for name, found in results.items():
                print(
                    f"| {'one' if searched else 'all'} | {name} | "
                    f"{statistics.mean(shares[name]):.3f} | {statistics.mean(found):.3f} | "
                    f"{statistics.median(cpu[name]) * 1000:.2f} |"
                )


if __name__ == "__main__":
    main()
