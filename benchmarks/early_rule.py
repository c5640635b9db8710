"""When a hybrid search runs its search by words alone early (``search._needed``): how often
the rule guesses right, and what it saves.

    python benchmarks/early_rule.py --db KEPT [--seed 8] [--queries 100]

KEPT: a file ``bench_semantic.py --build-only`` built (only read: searches track no access).
Questions are drawn as bench_semantic.py draws them (its corpus, with ``--seed``; bench_semantic
uses 7, the seed ``search.EARLY_RATE`` was chosen on). For each kind and slot setting, with the
rule off: how many searches the bound (``bound.py``) proved unchanged and how many it did not,
and how many of each the rule would have run early. Then wall p50 with the rule off and on,
alternated question by question in one process, the order swapped each question (the first
search of a question pays for reading its facts' pages), every question embedded afresh.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench_semantic import Corpus, english_words

from slotmem import Store
from slotmem import search as searching

KINDS = {
    "common": lambda corpus: corpus.common_query(),
    "rare": lambda corpus: corpus.rare_query(),
    "sentence": lambda corpus: corpus.sentence(5, 12),
}


def guesses(store: Store, texts: list[str], slots) -> dict[str, int]:
    """With the rule off: the searches the bound proved unchanged (``held``) or not, and how
    many of each ``_needed`` flags."""
    counts = dict.fromkeys(("held", "held, flagged", "failed", "failed, flagged"), 0)
    real = searching._unchanged

    def noted(conn, query, alone, hits, ranking, freqs):
        found = real(conn, query, alone, hits, ranking, freqs)
        if alone:
            searching.EARLY_RATE = rate  # what the rule says here (then off again)
            flagged = searching._needed(conn, query, alone, ranking, freqs)
            searching.EARLY_RATE = 0.0
            name = "held" if found else "failed"
            counts[name] += 1
            counts[f"{name}, flagged"] += flagged
        return found

    rate, searching.EARLY_RATE = searching.EARLY_RATE, 0.0
    searching._unchanged = noted
    try:
        for text in texts:
            store.query_facts(text, track_access=False, slots=slots)
    finally:
        searching._unchanged, searching.EARLY_RATE = real, rate
    return counts


def timed(store: Store, texts: list[str], slots) -> tuple[float, float]:
    """Wall p50 (ms) with the rule off, then on."""
    rate = searching.EARLY_RATE
    walls: dict[bool, list[float]] = {False: [], True: []}
    try:
        for i, text in enumerate(texts):
            for early in (i % 2 == 0, i % 2 != 0):
                searching.EARLY_RATE = rate if early else 0.0
                store.semantic.forget_query_vectors()
                start = time.perf_counter()
                store.query_facts(text, track_access=False, slots=slots)
                walls[early].append(time.perf_counter() - start)
    finally:
        searching.EARLY_RATE = rate
    return statistics.median(walls[False]) * 1000, statistics.median(walls[True]) * 1000


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a file bench_semantic built")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    corpus = Corpus(words=english_words(), seed=args.seed)
    with Store(args.db) as store:
        store.semantic.query_vector("warm up")
        print(
            f"seed {args.seed}, {args.queries} questions of each kind, EARLY_RATE "
            f"{searching.EARLY_RATE}\n"
        )
        print(
            "| kind | slots | bound held (flagged) | bound failed (flagged) "
            "| p50 ms rule off / on | on ÷ off |\n|---|---|---|---|---|---|"
        )
        for kind, draw in KINDS.items():
            texts = [draw(corpus) for _ in range(args.queries)]
            for slots in (["user"], None):
                counts = guesses(store, texts, slots)
                off, on = timed(store, texts, slots)
                print(
                    f"| {kind} | {'one' if slots else 'all'} | {counts['held']} "
                    f"({counts['held, flagged']}) | {counts['failed']} "
                    f"({counts['failed, flagged']}) | {off:.2f} / {on:.2f} | {on / off:.2f} |"
                )


if __name__ == "__main__":
    main()
