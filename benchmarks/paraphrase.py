"""The paraphrase probe: questions that share (almost) no word with the fact that answers them.

    python benchmarks/paraphrase.py            # needs pip install 'slotmem[semantic]'

46 fact/question pairs (benchmarks/data/paraphrase.json, written for this probe), all facts in
one memory; each question should find its own fact. Prints recall@1/@5 and MRR of the lexical
leg, the semantic leg alone and the hybrid that query_facts uses.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import hybrid, lexical, semantic

from slotmem import Store

DATA = Path(__file__).resolve().parent / "data" / "paraphrase.json"


def main() -> None:
    pairs = json.loads(DATA.read_text())
    legs = {"lexical": lexical, "semantic": semantic, "hybrid": hybrid}
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "probe.db", create=True) as store:
        store.upsert_many({"slot": "memory", "key": key, "value": value} for key, value, _ in pairs)
        start = time.perf_counter()
        store.semantic.reindex()
        print(f"{len(pairs)} pairs, embedded in {time.perf_counter() - start:.2f} s\n")
        print("| retriever | R@1 | R@5 | MRR |\n|---|---|---|---|")
        for name, retriever in legs.items():
            ranks = []
            for key, _, question in pairs:
                found = retriever(store, question, 10)
                ranks.append(found.index(key) + 1 if key in found else None)
            r1 = sum(r == 1 for r in ranks) / len(ranks)
            r5 = sum(r is not None and r <= 5 for r in ranks) / len(ranks)
            mrr = sum(1 / r for r in ranks if r) / len(ranks)
            print(f"| {name} | {r1:.3f} | {r5:.3f} | {mrr:.3f} |")


if __name__ == "__main__":
    main()
