"""Vector recall@10 of the two-stage signature scan on sentence questions its settings were not
chosen on, against counting every bit (``scan.SCREEN`` raised past any partition).

    python benchmarks/scan_heldout.py --db KEPT [--facts 100000] [--questions 100]

KEPT: a file bench_semantic.py built (copied first: the file is not changed). The questions are
drawn like bench_semantic.py's sentences, after skipping the 100 of each kind that benchmark asks
and 500 more (the sweep that chose 384 bits and 48 rows per candidate used the benchmark's own).
Synthetic text (a Zipf draw of English words): what real facts give is not measured here.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_semantic import english_words, vector_recall
from synthetic import Corpus

from slotmem import Store
from slotmem.vectors import scan


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--facts", type=int, default=100_000, help="the file's --facts")
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args(argv)
    corpus = Corpus(words=english_words())
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        shutil.copy(args.db, copy)
        with Store(copy) as store:
            corpus.facts(args.facts)  # the same draws as the file's
            if store.semantic.leg() is None:
                raise SystemExit(f"no semantic search here: {store.semantic.off_reason()}")
            for _ in range(100):  # the benchmark's own questions
                corpus.common_query(), corpus.rare_query(), corpus.sentence(5, 12)
            for _ in range(500):
                corpus.sentence(5, 12)
            fresh = [corpus.sentence(5, 12) for _ in range(args.questions)]
            print("| scan | recall@10 one slot | all slots |\n|---|---|---|")
            kept = scan.SCREEN
            for name, screen in (("two stages", kept), ("every bit", 10**9)):
                scan.SCREEN = screen
                one = vector_recall(store, fresh, ["user"])
                every = vector_recall(store, fresh, None)
                print(f"| {name} | {one:.3f} | {every:.3f} |")
            scan.SCREEN = kept


if __name__ == "__main__":
    main()
