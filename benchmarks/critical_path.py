"""Where a hybrid search's wall time goes: the worker's part, the calling thread's, and what
follows them, per kind of question; and the least any search by words could leave.

    python benchmarks/critical_path.py --db KEPT [--seed 8] [--queries 60]

KEPT: a file ``bench_semantic.py --build-only`` built (only read: searches track no access).
Questions are drawn as ``early_rule.py`` draws them (bench_semantic's corpus, ``--seed``), each
embedded afresh. Every search is timed from its start, with marks (p50 over the searches that
reach each mark, ms):

- *embedded*, *scanned*: when the worker had the question's vector, then its candidates;
- *leg*: when the calling thread had the hybrid leg's rows (``hybrid.by_words`` or the shared
  statement); *early*: when it had the search by words alone, where that ran before *result*
  (``search._needed``); *late*: where it ran after the fusion (the bound did not prove it
  unneeded);
- *result*: when it had the worker's answer (it waits there when the worker is the longer);
- *fused*: when the fusion was done; *end*: the search's wall time.

*plain*: the p50 of the same searches with the marks off (each question searched once each
way, alternated), what the marks themselves cost.

*floor* is the p50 over the searches of scanned + (end - result): the search as it would be if
the calling thread's own part (planning, both searches by words) cost nothing. A goal below it
cannot be met by making the search by words cheaper; only the embedding, the scan or the fusion
can lower it.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
from pathlib import Path

from bench_semantic import Corpus, english_words
from early_rule import KINDS

from slotmem import Store
from slotmem import search as searching
from slotmem.search import hybrid, lexical
from slotmem.vectors import scan as scanning
from slotmem.vectors import semantic

MARKS = ("embedded", "scanned", "leg", "early", "result", "fused", "late", "end")


class Marks:
    """The first time each mark is reached in the current search, from its start."""

    def __init__(self):
        self.start = 0.0
        self.at: dict[str, float] = {}
        self.on = True
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self.at = {}
            self.start = time.perf_counter()

    def mark(self, name: str) -> None:
        if not self.on:
            return
        now = time.perf_counter()
        with self._lock:
            if name == "alone":  # the search by words alone: before the worker's answer or after
                name = "late" if "result" in self.at else "early"
            self.at.setdefault(name, (now - self.start) * 1000)


def instrument(marks: Marks) -> list[tuple[object, str, object]]:
    """Wrap the functions whose ends are marks; returns what to put back."""
    patched = []

    def after(owner, name: str, mark: str) -> None:
        real = getattr(owner, name)

        def wrapped(*args, **kwargs):
            found = real(*args, **kwargs)
            marks.mark(mark)
            return found

        patched.append((owner, name, real))
        setattr(owner, name, wrapped)

    after(semantic, "_embedded", "embedded")
    after(scanning.Scan, "run", "scanned")
    after(hybrid, "by_words", "leg")
    after(lexical, "search_both", "leg")
    after(searching, "_lexical", "alone")
    after(semantic.Question, "result", "result")
    after(hybrid, "search", "fused")
    return patched


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a file bench_semantic built")
    parser.add_argument("--seed", type=int, default=8)
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args(argv)
    corpus = Corpus(words=english_words(), seed=args.seed)
    marks = Marks()
    with Store(args.db) as store:
        store.semantic.query_vector("warm up")
        patched = instrument(marks)
        try:
            print(
                f"seed {args.seed}, {args.queries} questions of each kind, p50 ms from the start\n"
            )
            print("| kind | slots | " + " | ".join(MARKS) + " | plain | floor |")
            print("|---|---|" + "---|" * (len(MARKS) + 2))
            for kind, draw in KINDS.items():
                texts = [draw(corpus) for _ in range(args.queries)]
                for slots in (["user"], None):
                    seen: dict[str, list[float]] = {name: [] for name in MARKS}
                    floors, plain = [], []
                    for i, text in enumerate(texts):
                        for on in (i % 2 == 0, i % 2 != 0):
                            store.semantic.forget_query_vectors()
                            marks.on = on
                            marks.reset()
                            store.query_facts(text, track_access=False, slots=slots)
                            if not on:
                                plain.append((time.perf_counter() - marks.start) * 1000)
                                continue
                            marks.mark("end")
                            at = dict(marks.at)
                            for name, value in at.items():
                                if name in seen:
                                    seen[name].append(value)
                            if "scanned" in at and "result" in at:
                                floors.append(at["scanned"] + at["end"] - at["result"])
                    marks.on = True
                    cells = [
                        f"{statistics.median(seen[name]):.2f}" if seen[name] else "-"
                        for name in MARKS
                    ]
                    cells.append(f"{statistics.median(plain):.2f}")
                    floor = f"{statistics.median(floors):.2f}" if floors else "-"
                    print(
                        f"| {kind} | {'one' if slots else 'all'} | {' | '.join(cells)} | {floor} |"
                    )
        finally:
            for owner, name, real in patched:
                setattr(owner, name, real)


if __name__ == "__main__":
    main()
