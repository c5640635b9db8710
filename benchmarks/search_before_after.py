"""Searches of a semantic file, two trees alternated in one process: CPU per search, before/after.

    python benchmarks/search_before_after.py --db FILE --before DIR [--queries 60] [--rounds 5]
        [--fresh]

On a file ``bench_semantic.py --db FILE`` built (100k facts by default), that benchmark's common,
rare and sentence questions (``--queries`` of each), hybrid and lexical, in one slot and across
slots: the calling thread's CPU time of ``query_facts`` (access tracking off) per search, for
this tree and for ``DIR``'s package renamed ``slotmem_before`` (as ``rare_words.py --before``),
each setting's questions run by one tree then the other, the order reversed each round. Every
hit of both trees is checked equal (repr, field for field) first, both searching with the same
vector. Each question's vector is embedded once and remembered (the embedding is the same code
in both trees and the noisiest part on a shared machine); ``--fresh`` embeds it again at every
search (this tree embeds it on a worker thread, whose CPU the calling thread's does not count:
``bench_semantic.py`` times whole searches). Prints the median ms of
each setting and the ratio after / before.
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

import slotmem
import slotmem.vectors.semantic


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="a file bench_semantic.py --db built")
    parser.add_argument("--facts", type=int, default=100_000, help="how many facts it holds")
    parser.add_argument("--before", required=True, help="a directory holding slotmem_before")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--fresh", action="store_true", help="embed each question every time")
    args = parser.parse_args(argv)
    sys.path.insert(0, args.before)
    import slotmem_before
    import slotmem_before.vectors.semantic

    # every question's vector remembered (not only the last 64), unless --fresh
    slotmem.vectors.semantic.RECENT_QUERIES = 10_000
    slotmem_before.vectors.semantic.RECENT_QUERIES = 10_000
    corpus = Corpus(words=english_words())
    corpus.facts(args.facts)  # the same draws as bench_semantic.py: the same questions
    stores = {"before": slotmem_before.Store(args.db), "after": slotmem.Store(args.db)}
    kinds = {
        "common": [corpus.common_query() for _ in range(args.queries)],
        "rare": [corpus.rare_query() for _ in range(args.queries)],
        "sentence": [corpus.sentence(5, 12) for _ in range(args.queries)],
    }
    settings = [(k, s, sem) for k in kinds for s in (("user",), None) for sem in (True, False)]
    # onnxruntime on several threads does not always give the same bits for the same question
    # twice: both trees search with the one vector (embedded by this tree), unless --fresh
    embed = stores["after"].semantic.query_vector
    vectors: dict[str, bytes | None] = {}

    def remembered(text: str) -> bytes | None:
        if args.fresh:
            return embed(text)
        if text not in vectors:
            vectors[text] = embed(text)
        return vectors[text]

    # both trees' searches ask Semantic.ask, which looks the question up in the vectors it
    # remembers: both remember the same ones (this tree's), else each embeds its own
    stores["before"].semantic._queries = stores["after"].semantic._queries

    def search(store, text: str, slots, semantic: bool):
        return store.query_facts(
            text, slots=list(slots) if slots else None, semantic=semantic, track_access=False
        )

    fresh, args.fresh = args.fresh, False
    for text in (text for asked in kinds.values() for text in asked):
        remembered(text)  # this tree's memory of questions holds each one
    for kind, slots, semantic in settings:
        for text in kinds[kind]:
            found = [repr(search(store, text, slots, semantic)) for store in stores.values()]
            assert found[0] == found[1], (kind, slots, semantic, text)
    args.fresh = fresh
    cpu: dict[tuple, list[float]] = {}
    for i in range(args.rounds):
        order = list(stores) if i % 2 else list(stores)[::-1]
        for kind, slots, semantic in settings:
            for name in order:
                store = stores[name]
                for text in kinds[kind]:
                    if args.fresh and semantic:
                        store.semantic.forget_query_vectors()  # embedded afresh in the search
                    began = time.thread_time()
                    search(store, text, slots, semantic)
                    cpu.setdefault((kind, slots, semantic, name), []).append(
                        time.thread_time() - began
                    )
    print(f"hits equal on {len(settings) * args.queries} searches")
    print("| query | slots | search | before ms CPU | after ms CPU | after / before |")
    print("|---|---|---|---|---|---|")
    for kind, slots, semantic in settings:
        before = statistics.median(cpu[(kind, slots, semantic, "before")]) * 1000
        after = statistics.median(cpu[(kind, slots, semantic, "after")]) * 1000
        print(
            f"| {kind} | {slots[0] if slots else 'all'} | {'hybrid' if semantic else 'lexical'} "
            f"| {before:.2f} | {after:.2f} | {after / before:.2f} |"
        )


if __name__ == "__main__":
    main()
