"""Hybrid search at scale: index build rate, vector recall, query_facts latency.

    python benchmarks/bench_semantic.py [--facts 100000] [--queries 100] [--db PATH]
    python benchmarks/bench_semantic.py --layouts [--facts 10000]  # do shards and the helper pay?
    python benchmarks/bench_semantic.py --codecs [--facts 10000]  # int8, float16, float32 re-rank
    python benchmarks/bench_semantic.py --scan [--facts 10000]  # vec0 scans or a numpy popcount?
    python benchmarks/bench_semantic.py --db F --scan-only [--before CHECKOUT]  # the scan alone
    python benchmarks/bench_semantic.py --facts 1000000 --db F --build-only --threads 1  # build F
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
--codecs embeds every fact again (float32, in memory) and re-ranks the index's candidates of
each sentence query with the vectors as float32, float16 and int8 (``slotmem.vectors.codec``,
what the file stores) would give them back: recall@10 against the exact float32 top 10.
--scan times hybrid search and the kNN alone in CPU time with the candidates from the vec0 scans
(16 shards, helper thread: the scan before issue 24) and from the signatures held in memory
(``slotmem.vectors.scan``, what a search uses now), question by question in interleaved rounds,
with each one's recall@10, whether they give the same top 10, and the memory the signatures take
and the CPU time reading them took.
--scan-only times the signature scan alone (``Signatures.candidates``, sentence questions'
signatures computed beforehand) in CPU time, on one thread and shared by two (as a hybrid
search's worker and calling thread share it), for one slot and all slots, with each one's
candidate recall@10 (the share of the exact 10 nearest, brute force over the stored vectors, among
the candidates) and the bytes per fact the copy in memory takes; with ``--before``, against the
scan of another checkout (its slotmem/vectors/scan.py, reading the same file), question by
question in alternated order.
Every run prints the file's bytes per fact, and those of memory_embeddings and the vec0 index.
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
from slotmem.vectors import codec, embedders, texts
from slotmem.vectors.index import SHARDS, VectorIndex


def english_words() -> list[str]:
    """Whole English words of the default model's WordPiece vocabulary, most frequent first."""
    _, _, tokenizer = embedders.MiniLM.load()
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    return [word for word, _ in vocab if word.isascii() and word.isalpha() and len(word) >= 3]


def build(store: Store, corpus: Corpus, facts: int) -> str:
    """The facts and their vectors; a file built before is reused, and one whose build was
    stopped goes on embedding where it stopped (reindex embeds what lacks a vector)."""
    have = store.stats()["facts"]
    ready = have >= facts and store.semantic.off_reason() is None
    if ready and store.semantic.status()["stale"] == 0:
        return f"reused {store.path} ({have:,} facts)"
    if have < facts:
        store.upsert_many(corpus.facts(facts))
    else:
        corpus.facts(facts)  # the same draws: the queries that follow are the same
    store.semantic.model().embed("warm up")  # model load is not part of the figures
    start = time.perf_counter()
    done = [0]

    def progress(n: int) -> None:
        before, done[0] = done[0], done[0] + n
        if sys.stderr.isatty():
            print(f"\r  embedded {done[0]:,}", end="", file=sys.stderr, flush=True)
        elif before // 10_000 != done[0] // 10_000:  # a log: a line every 10,000
            seconds = time.perf_counter() - start
            print(
                f"  {time.strftime('%H:%M:%S')} embedded {done[0]:,} in {seconds:.0f} s"
                f" ({done[0] / seconds:,.0f} facts/s)",
                file=sys.stderr,
                flush=True,
            )

    report = store.semantic.reindex(progress=progress)
    seconds = time.perf_counter() - start
    print(file=sys.stderr)
    return (
        f"{done[0]:,} facts embedded and indexed in {seconds:.0f} s "
        f"({done[0] / seconds:,.0f} facts/s, model {report['model']})"
    )


def timed(store: Store, texts: list[str], **options) -> tuple[float, ...]:
    """p50 and p95 of the wall time, of the process's CPU time (every thread's) and of the
    calling thread's CPU time, in ms."""
    store.semantic.forget_query_vectors()  # every question embedded afresh, as a new one would be
    walls, cpus, threads = [], [], []
    for text in texts:
        start, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        store.query_facts(text, track_access=False, **options)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        threads.append(time.thread_time() - thread)
    return (*percentiles(walls), *percentiles(cpus), *percentiles(threads))


def vector_recall(store: Store, texts: list[str], slots: list[str] | None, k: int = 10) -> float:
    """Share of the exact k nearest (brute force over the stored vectors) that knn returns."""
    import numpy as np

    sql = "SELECT f.seq FROM memory_facts f"
    params: list = []
    if slots:
        sql += f" WHERE f.slot IN ({', '.join('?' * len(slots))})"
        params = list(slots)
    stored = store.semantic.stored([seq for (seq,) in store.conn.execute(sql, params)])
    seqs = np.array(list(stored))
    matrix = np.frombuffer(b"".join(stored.values()), dtype="<f4").reshape(len(stored), -1)
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


def use_layout(store: Store, shards: int, helper: bool, in_memory: bool = False) -> None:
    """Rebuild the file's vector index with this layout and search through it (with vec0's
    scans: these layouts are theirs)."""
    semantic = store.semantic
    semantic.index.close()
    semantic.index = VectorIndex(
        semantic.index.connection, shards=shards, helper=helper, in_memory=in_memory
    )
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
    use_layout(store, SHARDS, True, in_memory=True)
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


def sizes(store: Store) -> str:
    """Bytes per fact: the whole file, memory_embeddings (with its models) and the vec0 index."""
    conn, facts = store.conn, store.stats()["facts"]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages, size, free = (
        conn.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("page_count", "page_size", "freelist_count")
    )
    by_table = dict(
        conn.execute(
            "SELECT CASE WHEN name LIKE 'memory_embedding%' THEN 'embeddings' "
            "WHEN name LIKE 'memory_vec%' THEN 'index' ELSE 'other' END, sum(pgsize) "
            "FROM dbstat GROUP BY 1"
        ).fetchall()
    )
    per = lambda n: f"{(n or 0) / max(facts, 1):,.0f}"
    return (
        "| bytes per fact | file | free pages | memory_embeddings | vec0 index | the rest |\n"
        "|---|---|---|---|---|---|\n"
        f"| {facts:,} facts | {per(pages * size)} | {per(free * size)} | "
        f"{per(by_table.get('embeddings'))} | {per(by_table.get('index'))} | "
        f"{per(by_table.get('other'))} |\n"
    )


def compare_codecs(store: Store, queries: list[str], k: int = 10) -> None:
    """Recall@10 of the index's candidates re-ranked by float32, float16 and int8 vectors."""
    import numpy as np

    semantic = store.semantic
    model, model_id = semantic.model(), semantic.model_id()
    rows = store.conn.execute("SELECT seq, slot, key, value FROM memory_facts ORDER BY seq")
    rows = rows.fetchall()
    blobs: list = []
    for start in range(0, len(rows), 1024):
        part = rows[start : start + 1024]
        blobs += embedders.embed(model, [texts.document(model_id, k_, v) for _, _, k_, v in part])
    keep = [i for i, blob in enumerate(blobs) if blob]
    seqs = np.array([rows[i][0] for i in keep])
    slot_of = np.array([rows[i][1] for i in keep])
    exact = np.frombuffer(b"".join(blobs[i] for i in keep), dtype="<f4").reshape(len(keep), -1)
    half = exact.astype(np.float16).astype(np.float32)
    matrices = {
        "float32 (before)": exact,
        "float16": half / np.linalg.norm(half, axis=1, keepdims=True),
        "int8 (stored)": codec.decode_many(
            codec.encode_many([blobs[i] for i in keep]), exact.shape[1]
        ),
    }
    row_of = {int(seq): i for i, seq in enumerate(seqs)}
    found = {(name, where): 0 for name in [*matrices, "Semantic.knn"] for where in ("one", "all")}
    for text in queries:
        q = np.frombuffer(semantic.query_vector(text), dtype="<f4")
        for slots, where in ((["user"], "one"), (None, "all")):
            mask = slot_of == "user" if slots else np.ones(len(seqs), dtype=bool)
            cosines = exact @ q
            truth = set(seqs[mask][np.argsort(-cosines[mask])[:k]].tolist())
            candidates = [row_of[c] for c in semantic.index.candidates(q.tobytes(), slots, k)]
            for name, matrix in matrices.items():
                ranked = sorted(candidates, key=lambda i: -float(matrix[i] @ q))[:k]
                found[name, where] += len(truth & {int(seqs[i]) for i in ranked})
            knn = {seq for seq, _ in semantic.knn(q.tobytes(), slots, k)}
            found["Semantic.knn", where] += len(truth & knn)
    dims = exact.shape[1]
    length = {"float32 (before)": 4 * dims, "float16": 2 * dims, "int8 (stored)": dims + 4}
    print("| re-rank by | bytes per vector | recall@10 one slot | all slots |\n|---|---|---|---|")
    for name in [*matrices, "Semantic.knn"]:
        total = k * len(queries)
        print(
            f"| {name} | {length.get(name, length['int8 (stored)'])} | "
            f"{found[name, 'one'] / total:.3f} | {found[name, 'all'] / total:.3f} |"
        )


def compare_scans(store: Store, queries: dict[str, list[str]], rounds: int = 2, k: int = 10):
    """Hybrid search (every query kind) and the kNN alone (sentence questions) with the
    candidates from vec0's scans (16 shards, helper thread: the scan before) and from the
    signatures in memory (now), question by question in interleaved rounds, in CPU time (every
    thread's: the helper's too)."""
    semantic = store.semantic
    index = semantic.index
    index._signatures = None
    start = time.process_time()
    signatures = index.signatures(store.conn)
    load = time.process_time() - start
    ways = {"vec0 scans + helper (before)": False, "numpy, in memory (now)": True}
    places = {"one slot": ["user"], "all slots": None}
    times: dict[tuple, list[float]] = {}
    same = dict.fromkeys(places, 0)
    sentences = queries["sentence"]
    blobs = [semantic.query_vector(text) for text in sentences]
    for round_ in range(rounds):
        for i, blob in enumerate(blobs):
            for where, slots in places.items():
                found = {}
                for name, in_memory in ways.items():
                    index.in_memory = in_memory
                    begin = time.process_time()
                    found[name] = semantic.knn(blob, slots, k)
                    times.setdefault((name, where, "kNN"), []).append(time.process_time() - begin)
                    for kind, asked in queries.items():
                        semantic.forget_query_vectors()  # embedded afresh, as a new question is
                        begin = time.process_time()
                        store.query_facts(asked[i], slots=slots, track_access=False)
                        times.setdefault((name, where, kind), []).append(
                            time.process_time() - begin
                        )
                if round_ == 0:
                    same[where] += len({tuple(found[name]) for name in ways}) == 1
    recall = {}
    for name, in_memory in ways.items():
        index.in_memory = in_memory
        recall[name] = {
            where: vector_recall(store, sentences, slots) for where, slots in places.items()
        }
    index.in_memory = True
    print(
        f"signatures in memory: {len(signatures):,} rows, {signatures.nbytes / 2**20:.1f} MiB, "
        f"read in {load * 1000:.0f} ms CPU\n"
    )
    before, now = ways
    print(
        "| search | slots | before p50 / p95 ms CPU | now p50 / p95 ms CPU | now ÷ before (p50) |"
    )
    print("|---|---|---|---|---|")
    for what in ["kNN", *queries]:
        for where in places:
            old, new = (percentiles(times[name, where, what]) for name in ways)
            label = "kNN alone (sentence)" if what == "kNN" else f"hybrid, {what}"
            print(
                f"| {label} | {where} | {old[0]:.1f} / {old[1]:.1f} | {new[0]:.1f} / {new[1]:.1f} "
                f"| {new[0] / old[0]:.2f} |"
            )
    print("\n| slots | recall@10 before | now | same top 10 |\n|---|---|---|---|")
    for where in places:
        print(
            f"| {where} | {recall[before][where]:.3f} | {recall[now][where]:.3f} | "
            f"{same[where] / len(blobs):.2f} |"
        )


def scan_module(checkout: Path):
    """The scan module (slotmem/vectors/scan.py) of another checkout, to time against."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "before_scan", checkout / "slotmem" / "vectors" / "scan.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["before_scan"] = module  # a dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def exact_nearest(store: Store, blobs: list[bytes], places: dict, k: int = 10) -> dict:
    """Each question's exact k nearest seqs in each place (brute force over the stored
    vectors, read 50,000 at a time)."""
    import numpy as np

    questions = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    best: dict = {(where, i): [] for where in places for i in range(len(blobs))}
    rows = store.conn.execute("SELECT seq, slot FROM memory_facts ORDER BY seq").fetchall()
    for start in range(0, len(rows), 50_000):
        slot_of = dict(rows[start : start + 50_000])
        stored = store.semantic.stored(list(slot_of))
        seqs = np.array(list(stored), dtype=np.int64)
        matrix = np.frombuffer(b"".join(stored.values()), dtype="<f4").reshape(len(seqs), -1)
        cosines = matrix @ questions.T
        for where, slots in places.items():
            mask = np.array([not slots or slot_of[seq] in slots for seq in seqs.tolist()])
            if not mask.any():
                continue
            part, ids = cosines[mask], seqs[mask]
            top = np.argsort(-part, axis=0)[:k]
            for i in range(len(blobs)):
                found = best[where, i] + list(
                    zip(part[top[:, i], i].tolist(), ids[top[:, i]].tolist())
                )
                best[where, i] = sorted(found, reverse=True)[:k]
    return {key: {seq for _, seq in found} for key, found in best.items()}


def compare_scan_alone(store: Store, texts: list[str], before: Path | None, rounds: int = 2):
    """The signature scan alone, this checkout's (and ``before``'s), in CPU ms per question:
    on one thread, and shared by two threads as a hybrid search shares a scan of at least
    ``semantic.SHARE_ROWS`` signatures. (A checkout before b637822 takes the shard count in
    ``load`` too.)"""
    import inspect

    from slotmem.storage.workers import Worker
    from slotmem.vectors import scan, simhash
    from slotmem.vectors.index import VEC_TABLE

    reading = {"now": scan}
    if before is not None:
        reading = {"before": scan_module(before), **reading}
    copies, loads = {}, {}
    for name, module in reading.items():
        start = time.process_time()
        extra = (SHARDS,) if "shards" in inspect.signature(module.load).parameters else ()
        copies[name] = module.load(store.conn, VEC_TABLE, simhash.VERSION, simhash.BITS, *extra)
        loads[name] = time.process_time() - start
    blobs = [store.semantic.query_vector(text) for text in texts]
    signatures = simhash.signatures(blobs, len(blobs[0]) // 4)
    places = {"one slot": ["user"], "all slots": None}
    exact = exact_nearest(store, blobs, places)
    per_shard = -(-simhash.CANDIDATES // SHARDS)
    helper = Worker("bench-scan")
    alone: dict[tuple, list[float]] = {}
    shared: dict[tuple, list[float]] = {}
    found = dict.fromkeys(((name, where) for name in copies for where in places), 0)
    same = dict.fromkeys(places, 0)
    for round_ in range(rounds):
        for i, signature in enumerate(signatures):
            for where, slots in places.items():
                names = list(copies)[i % len(copies) :] + list(copies)[: i % len(copies)]
                seen = {}
                for name in names:
                    copy = copies[name]
                    start = time.thread_time()
                    candidates = copy.candidates(signature, slots, per_shard, SHARDS)
                    alone.setdefault((name, where), []).append(time.thread_time() - start)
                    start = time.process_time()
                    scanning = copy.scan(signature, slots, per_shard, SHARDS)
                    job = helper.submit(scanning.help)
                    assert job is not None and scanning.run() == candidates
                    job.result()
                    shared.setdefault((name, where), []).append(time.process_time() - start)
                    seen[name] = set(candidates)
                    if round_ == 0:
                        found[name, where] += len(exact[where, i] & seen[name])
                same[where] += round_ == 0 and len({frozenset(c) for c in seen.values()}) == 1
    helper.shutdown()
    print(f"{len(signatures)} sentence questions, {rounds} rounds alternated; CPU ms p50 (p95)\n")
    print(
        "| slots | scan | one thread | two threads sharing | ÷ before, one thread / two "
        "| candidate recall@10 | bytes per fact in memory | read in ms CPU |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for where in places:
        for name, copy in copies.items():
            one, two = percentiles(alone[name, where]), percentiles(shared[name, where])
            ratio = "-"
            if "before" in copies and name != "before":
                base_one = percentiles(alone["before", where])[0]
                base_two = percentiles(shared["before", where])[0]
                ratio = f"{one[0] / base_one:.2f} / {two[0] / base_two:.2f}"
            print(
                f"| {where} | {name} | {one[0]:.2f} ({one[1]:.2f}) | {two[0]:.2f} ({two[1]:.2f}) "
                f"| {ratio} | {found[name, where] / (10 * len(signatures)):.3f} "
                f"| {copy.nbytes / max(len(copy), 1):.0f} | {loads[name] * 1000:.0f} |"
            )
    if "before" in copies:
        print(
            "\nthe same candidates as before: "
            + ", ".join(f"{where} {same[where]} of {len(signatures)}" for where in places)
        )


ASKS = {  # --ask: how a hybrid search embeds its question (concurrent, question threads, share)
    "in line (before)": (False, 0, True),
    "worker, 1 thread": (True, 1, True),
    "worker, 1 thread, scan unshared": (True, 1, False),
    "worker, session of 2 threads": (True, 0, True),
}


def compare_asks(store: Store, queries: dict[str, list[str]], rounds: int = 2) -> None:
    """Hybrid search with the question embedded in line before the lexical leg (as before) and
    on a worker thread while the lexical leg runs (``Semantic.ask``), on onnxruntime's one
    thread (a session of its own; the calling thread joining in the worker's signature scan
    once its part is done, or not) or on a session of one thread a core, alternated question
    by question, each embedded afresh; wall and CPU time (every thread's), and whether every
    search gave the same hits (ids, scores, relevance, in order)."""
    from slotmem.vectors import semantic

    semantic_leg, model = store.semantic, embedders.MiniLM
    places = {"one slot": ["user"], "all slots": None}
    walls: dict[tuple, list[float]] = {}
    cpus: dict[tuple, list[float]] = {}
    same = total = 0

    def use(name: str) -> None:
        semantic.CONCURRENT, model.question_threads, semantic.SHARE_SCAN = ASKS[name]

    # each way's session made, and warm, before timing: the questions' own first (a process
    # that has a session asks its questions of it: embedders.MiniLM.load)
    for name in sorted(ASKS, key=lambda name: ASKS[name][1] != 1):
        use(name)
        for text in queries["sentence"][:5]:
            semantic_leg.forget_query_vectors()
            store.query_facts(text, track_access=False)
    for round_ in range(rounds):
        for kind, asked in queries.items():
            for where, slots in places.items():
                for i, text in enumerate(asked):
                    found = set()
                    order = list(ASKS)[i % len(ASKS) :] + list(ASKS)[: i % len(ASKS)]
                    for name in order:
                        use(name)
                        semantic_leg.forget_query_vectors()
                        start, cpu = time.perf_counter(), time.process_time()
                        hits = store.query_facts(text, slots=slots, track_access=False)
                        walls.setdefault((name, kind, where), []).append(
                            time.perf_counter() - start
                        )
                        cpus.setdefault((name, kind, where), []).append(time.process_time() - cpu)
                        found.add(tuple((h.fact.id, h.score, h.relevance) for h in hits))
                    same += len(found) == 1
                    total += 1
    use("in line (before)")
    names = list(ASKS)
    print(f"{rounds} rounds alternated question by question; ms, p50 (p95)\n")
    print(
        "| query | slots | "
        + " | ".join(f"{name} wall / CPU" for name in names)
        + " | "
        + " | ".join(f"{name} ÷ in line, wall" for name in names[1:])
        + " |"
    )
    print("|---|---|" + "---|" * (2 * len(names) - 1))
    for kind in queries:
        for where in places:
            wall = {name: percentiles(walls[name, kind, where]) for name in names}
            cpu = {name: percentiles(cpus[name, kind, where]) for name in names}
            cells = [
                f"{wall[name][0]:.1f} ({wall[name][1]:.1f}) / {cpu[name][0]:.1f}" for name in names
            ]
            ratios = [f"{wall[name][0] / wall[names[0]][0]:.2f}" for name in names[1:]]
            print(f"| {kind} | {where} | " + " | ".join(cells + ratios) + " |")
    print(f"\nthe same hits (ids, scores, relevance, order) every way: {same} of {total} searches")


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered) * 1000, ordered[int(len(ordered) * 0.95) - 1] * 1000


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--db", type=Path, help="keep the built file here and reuse it")
    parser.add_argument("--layouts", action="store_true", help="compare vector index layouts")
    parser.add_argument("--codecs", action="store_true", help="compare stored vector precisions")
    parser.add_argument("--scan", action="store_true", help="vec0 scans against the numpy scan")
    parser.add_argument(
        "--scan-only", action="store_true", help="the signature scan alone, CPU and recall"
    )
    parser.add_argument(
        "--before", type=Path, help="with --scan-only: another checkout whose scan to time too"
    )
    parser.add_argument(
        "--build-only", action="store_true", help="build (or reuse) --db, then stop"
    )
    parser.add_argument(
        "--threads", type=int, default=0, help="onnxruntime threads (0: one a core)"
    )
    parser.add_argument(
        "--question-threads",
        type=int,
        default=None,
        help="onnxruntime threads of the questions' own session (0: the session above)",
    )
    parser.add_argument(
        "--ask",
        action="store_true",
        help="the question embedded in line against on a worker thread (alternated)",
    )
    parser.add_argument(
        "--in-line",
        action="store_true",
        help="embed each question on the calling thread, before the lexical leg (as before)",
    )
    args = parser.parse_args(argv)
    embedders.MiniLM.threads = args.threads
    if args.question_threads is not None:
        embedders.MiniLM.question_threads = args.question_threads
    if args.in_line:
        from slotmem.vectors import semantic

        semantic.CONCURRENT = False
    corpus = Corpus(words=english_words())
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store(args.db or Path(tmp) / "bench.db", create=True) as store,
    ):
        print(build(store, corpus, args.facts) + "\n")
        print(sizes(store))
        if args.build_only:
            return
        store.semantic.query_vector("warm up")
        queries = {
            "common": [corpus.common_query() for _ in range(args.queries)],
            "rare": [corpus.rare_query() for _ in range(args.queries)],
            "sentence": [corpus.sentence(5, 12) for _ in range(args.queries)],
        }
        if args.layouts:
            compare_layouts(store, queries["sentence"])
            return
        if args.codecs:
            compare_codecs(store, queries["sentence"])
            return
        if args.scan:
            compare_scans(store, queries)
            return
        if args.scan_only:
            compare_scan_alone(store, queries["sentence"], args.before)
            return
        if args.ask:
            compare_asks(store, queries)
            return
        print("| vector recall@10 vs exact | one slot | all slots |\n|---|---|---|")
        print(
            f"| sentence queries | {vector_recall(store, queries['sentence'], ['user']):.3f} | "
            f"{vector_recall(store, queries['sentence'], None):.3f} |\n"
        )
        print(
            "| query | slots | lexical p50 / p95 ms | hybrid p50 / p95 ms "
            "| hybrid CPU p50 / p95 ms | its calling thread's CPU p50 / p95 ms |"
            "\n|---|---|---|---|---|---|"
        )
        for kind, texts in queries.items():
            for slots in (["user"], None):
                lex = timed(store, texts, slots=slots, semantic=False)
                hyb = timed(store, texts, slots=slots)
                print(
                    f"| {kind} | {slots[0] if slots else 'all'} | {lex[0]:.1f} / {lex[1]:.1f} | "
                    f"{hyb[0]:.1f} / {hyb[1]:.1f} | {hyb[2]:.1f} / {hyb[3]:.1f} | "
                    f"{hyb[4]:.1f} / {hyb[5]:.1f} |"
                )


if __name__ == "__main__":
    main()
