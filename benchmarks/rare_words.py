"""Rare-word lexical search against raw SQLite, two trees alternated in one process.

    python benchmarks/rare_words.py --file FILE [--before DIR] [--queries 60] [--rounds 10]
        [--fresh]

On a file built by ``benchmarks/lexical_scoring.py --file FILE`` (synthetic facts, 100k by
default), the rare-word questions of that benchmark (3 words of rank 5,000 or more): the CPU
time of ``query_facts`` (access tracking off) per question, and of the plan's statement run raw
(``lexical_scoring.raw``: SQLite's own cost; ``raw+``: the same with ``LIMIT +:limit``, which
SQLite 3.50 does not prepare again at each run), each over all the questions in turn, the order of
the settings reversed each round so that a loaded machine slows them alike. ``--before DIR``:
a directory holding another tree's package renamed ``slotmem_before`` (and its ``migrations``),
timed beside this tree's on the same file, its hits checked equal. ``--fresh``: new questions
each round (a question is never asked twice, so nothing remembered per question helps).
Prints the median CPU µs of each setting and its ratio to raw (issue 24: <= 1.2x).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from lexical_scoring import raw
from synthetic import Corpus

from slotmem import Store


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--file", required=True, help="a file lexical_scoring.py --file built")
    parser.add_argument("--facts", type=int, default=100_000, help="how many facts it holds")
    parser.add_argument("--before", help="a directory holding the package slotmem_before")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--fresh", action="store_true", help="new questions each round")
    args = parser.parse_args(argv)
    corpus = Corpus()
    corpus.facts(args.facts)  # the questions come after the facts, as in lexical_scoring.py
    stores = {"now": Store(args.file)}
    if args.before:
        sys.path.insert(0, args.before)
        import slotmem_before

        stores["before"] = slotmem_before.Store(args.file)
    conn, now = stores["now"].conn, stores["now"].clock()
    batches = [
        [corpus.rare_query() for _ in range(args.queries)]
        for _ in range(args.rounds if args.fresh else 1)
    ]
    for texts in batches:  # the same hits, field for field
        for text in texts:
            found = [s.query_facts(text, track_access=False) for s in stores.values()]
            assert all(repr(hits) == repr(found[0]) for hits in found), text
    names = ["raw", "raw+", *stores]
    cpu: dict[str, list[float]] = {name: [] for name in names}
    for i in range(args.rounds):
        texts = batches[i % len(batches)]
        statements = [s for s in (raw(conn, text, now) for text in texts) if s]
        plus = [
            (sql.replace("LIMIT :limit", "LIMIT +:limit"), params) for sql, params in statements
        ]
        for name in names if i % 2 else names[::-1]:
            if name.startswith("raw"):
                for sql, params in statements if name == "raw" else plus:
                    began = time.process_time()
                    conn.execute(sql, params).fetchall()
                    cpu[name].append(time.process_time() - began)
                continue
            store = stores[name]
            for text in texts:
                began = time.process_time()
                store.query_facts(text, track_access=False)
                cpu[name].append(time.process_time() - began)
    base = statistics.median(cpu["raw"])
    print("| setting | CPU µs p50 | against raw |")
    print("|---|---|---|")
    for name in names:
        p50 = statistics.median(cpu[name])
        print(f"| {name} | {p50 * 1e6:.0f} | {p50 / base:.2f} |")


if __name__ == "__main__":
    main()
