"""Hybrid search at scale: index build rate, vector recall, query_facts latency.

    python benchmarks/bench_semantic.py [--facts 100000] [--queries 100] [--db PATH]
    python benchmarks/bench_semantic.py --layouts [--facts 10000]  # do shards and the helper pay?
    # needs pip install 'slotmem[semantic]'; building 100k facts takes a while
    # (docs/benchmarks.md): --db keeps the built file and reuses it on the next run

Facts: 10-30 English words (the default model's vocabulary, most frequent first) drawn from a
Zipf distribution, in three slots. Queries (model load excluded, access tracking off):
- common: 5 of the 50 most frequent words; rare: 3 words of rank 5,000 or more;
- sentence: 5-12 words drawn like a fact's (a question's mix of common and rarer words);
each within one slot (a third of the facts) and across all slots.
Vector recall: the share of the exact 10 nearest neighbours (brute force over every stored
float vector, numpy) that Semantic.knn returns, for sentence queries, within a slot and across.
--layouts rebuilds the vector index three ways on the same vectors and times the kNN alone
(question vectors computed beforehand) with its recall: 16 shards per slot with the helper
thread (the default), 16 shards on one thread, and one partition per slot (one scan for all
the candidates), in interleaved rounds. The default index is rebuilt at the end.
Read ratios, not absolute figures: the machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Corpus

from slotmem import Store
from slotmem.vectors import embedders
from slotmem.vectors.index import SHARDS, VectorIndex


def english_words() -> list[str]:
    """Whole English words of the default model's WordPiece vocabulary, most frequent first."""
    _, _, tokenizer = embedders.MiniLM.load()
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    return [word for word, _ in vocab if word.isascii() and word.isalpha() and len(word) >= 3]


def build(store: Store, corpus: Corpus, facts: int) -> str:
    if store.stats()["facts"] >= facts and store.semantic.off_reason() is None:
        return f"reused {store.path} ({store.stats()['facts']:,} facts)"
    store.upsert_many(corpus.facts(facts))
    store.semantic.model().embed("warm up")  # model load is not part of the figures
    start = time.perf_counter()
    done = [0]

    def progress(n: int) -> None:
        done[0] += n
        print(f"\r  embedded {done[0]:,} / {facts:,}", end="", file=sys.stderr, flush=True)

    report = store.semantic.reindex(progress=progress)
    seconds = time.perf_counter() - start
    print(file=sys.stderr)
    return (
        f"{facts:,} facts embedded and indexed in {seconds:.0f} s "
        f"({facts / seconds:,.0f} facts/s, model {report['model']})"
    )


def timed(store: Store, texts: list[str], **options) -> tuple[float, float]:
    store.semantic.forget_query_vectors()  # every question embedded afresh, as a new one would be
    samples = []
    for text in texts:
        start = time.perf_counter()
        store.query_facts(text, track_access=False, **options)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


def vector_recall(store: Store, texts: list[str], slots: list[str] | None, k: int = 10) -> float:
    """Share of the exact k nearest (brute force over memory_embeddings) that knn returns."""
    import numpy as np

    sql = "SELECT e.fact_seq, e.embedding FROM memory_embeddings e JOIN memory_facts f ON f.seq = e.fact_seq"
    params: list = []
    if slots:
        sql += f" WHERE f.slot IN ({', '.join('?' * len(slots))})"
        params = list(slots)
    rows = store.conn.execute(sql, params).fetchall()
    seqs = np.array([seq for seq, _ in rows])
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), -1)
    found = 0
    for text in texts:
        blob = store.semantic.query_vector(text)
        exact = set(seqs[np.argsort(-(matrix @ np.frombuffer(blob, dtype="<f4")))[:k]].tolist())
        found += len(exact & {seq for seq, _ in store.semantic.knn(blob, slots, k)})
    return found / (k * len(texts))


LAYOUTS = {
    f"{SHARDS} shards, helper thread": (SHARDS, True),
    f"{SHARDS} shards, one thread": (SHARDS, False),
    "one partition per slot": (1, False),
}


def use_layout(store: Store, shards: int, helper: bool) -> None:
    """Rebuild the file's vector index with this layout and search through it."""
    semantic = store.semantic
    semantic.index.close()
    semantic.index = VectorIndex(semantic.index.connection, shards=shards, helper=helper)
    with store.transaction():
        semantic.rebuild_index()


def knn_times(store: Store, blobs: list[bytes], slots) -> list[float]:
    samples = []
    for blob in blobs:
        start = time.perf_counter()
        store.semantic.knn(blob, slots, 10)
        samples.append(time.perf_counter() - start)
    return samples


def compare_layouts(store: Store, texts: list[str], rounds: int = 2) -> None:
    blobs = [store.semantic.query_vector(text) for text in texts]
    times: dict[tuple[str, str], list[float]] = {}
    recall: dict[tuple[str, str], float] = {}
    for _ in range(rounds):
        for name, (shards, helper) in LAYOUTS.items():
            use_layout(store, shards, helper)
            for slots in (["user"], None):
                where = "one slot" if slots else "all slots"
                times.setdefault((name, where), []).extend(knn_times(store, blobs, slots))
                recall[(name, where)] = vector_recall(store, texts, slots)
    use_layout(store, SHARDS, True)
    print("| layout | slots | kNN p50 / p95 ms | ratio of p50 to the default | recall@10 |")
    print("|---|---|---|---|---|")
    default = next(iter(LAYOUTS))
    for (name, where), samples in times.items():
        p50, p95 = percentiles(samples)
        base = percentiles(times[(default, where)])[0]
        print(
            f"| {name} | {where} | {p50:.1f} / {p95:.1f} | {p50 / base:.2f} | "
            f"{recall[(name, where)]:.3f} |"
        )


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--db", type=Path, help="keep the built file here and reuse it")
    parser.add_argument("--layouts", action="store_true", help="compare vector index layouts")
    args = parser.parse_args(argv)
    corpus = Corpus(words=english_words())
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store(args.db or Path(tmp) / "bench.db", create=True) as store,
    ):
        print(build(store, corpus, args.facts) + "\n")
        store.semantic.query_vector("warm up")
        queries = {
            "common": [corpus.common_query() for _ in range(args.queries)],
            "rare": [corpus.rare_query() for _ in range(args.queries)],
            "sentence": [corpus.sentence(5, 12) for _ in range(args.queries)],
        }
        if args.layouts:
            compare_layouts(store, queries["sentence"])
            return
        print("| vector recall@10 vs exact | one slot | all slots |\n|---|---|---|")
        print(
            f"| sentence queries | {vector_recall(store, queries['sentence'], ['user']):.3f} | "
            f"{vector_recall(store, queries['sentence'], None):.3f} |\n"
        )
        print("| query | slots | lexical p50 / p95 ms | hybrid p50 / p95 ms |\n|---|---|---|---|")
        for kind, texts in queries.items():
            for slots in (["user"], None):
                lex = timed(store, texts, slots=slots, semantic=False)
                hyb = timed(store, texts, slots=slots)
                print(
                    f"| {kind} | {slots[0] if slots else 'all'} | {lex[0]:.1f} / {lex[1]:.1f} | "
                    f"{hyb[0]:.1f} / {hyb[1]:.1f} |"
                )


if __name__ == "__main__":
    main()
