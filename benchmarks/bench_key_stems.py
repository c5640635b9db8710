"""Key matching before and after its memos: hybrid search CPU time per question, side by side.

    python benchmarks/bench_key_stems.py [--facts 5000] [--queries 60] [--rounds 3] [--db PATH]
    # needs pip install 'slotmem[semantic]'

Every search stems each candidate's key (relevance.key_matches: 128 candidates in a hybrid
search). Now the stems of a key and of a word are remembered (``relevance.key_stems``,
``stemmer.stem``, bounded LRU memos), ASCII text is cleaned and case-folded without a Unicode
lookup per character (``terms.clean``, ``terms.fold``), and only the keys that share a word with
the question have their words' document frequencies looked up. "before" puts the old code paths
back in the same process (per-character folding, no memos, every key word looked up);
"now" keeps the memos, as a process answering questions does (here they hold what the previous
search put in: the cold way below empties them); "now, cold" empties them before its search
(no key or word seen before). Facts are bench_semantic.py's (10-30 English words under keys
``fact.N``, each key once: the worst case for a memo of keys); questions are rare (3 words of
rank 5,000 or more) and sentences (5-12 words), in one slot, each already embedded (the
question's embedding is the same work in every way and only adds noise). Each question runs once
untimed, then every way in turn (before and now in alternating order), in interleaved rounds; the
hits must be the same (ids and relevance).
Read ratios, not absolute figures: the machines are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_semantic import build, english_words
from synthetic import Corpus

from slotmem import Store
from slotmem.search import relevance, stemmer, terms

NOW = {
    "relevance.key_stems": relevance.key_stems,
    "relevance.key_matches": relevance.key_matches,
    "relevance.stem": relevance.stem,
    "terms.stem": terms.stem,
    "terms.fold": terms.fold,
    "terms.clean": terms.clean,
}
MODULES = {"relevance": relevance, "terms": terms}


def old_fold(word: str) -> str:
    return "".join(terms._fold_char(ch) for ch in word)


def old_clean(text) -> str:
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "ignore")
    elif not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[: terms.MAX_INPUT_CHARS].encode("utf-8", "ignore").decode("utf-8")
    return "".join(" " if unicodedata.category(ch)[0] == "C" else ch for ch in text)


def old_key_matches(query_stems, keys, lookup, ranking, facts):
    words = {key: relevance.key_stems(key) for key in set(keys)}
    every: set[str] = set().union(*words.values()) if words else set()
    asked = every & query_stems
    if not asked:
        return dict.fromkeys(words, 0.0)
    dfs = lookup(every)
    weights = {word: relevance.weight(ranking, facts, dfs.get(word, 0)) for word in every}
    found = {}
    for key, held in words.items():
        total = sum(weights[word] for word in held)
        found[key] = sum(weights[word] for word in held & asked) / total if total > 0 else 0.0
    return found


BEFORE = {
    "relevance.key_stems": relevance.key_stems.__wrapped__,
    "relevance.key_matches": old_key_matches,
    "relevance.stem": stemmer.stem.__wrapped__,
    "terms.stem": stemmer.stem.__wrapped__,
    "terms.fold": old_fold,
    "terms.clean": old_clean,
}


def use(functions: dict) -> None:
    for name, function in functions.items():
        module, attribute = name.split(".")
        setattr(MODULES[module], attribute, function)


def forget() -> None:
    relevance.key_stems.cache_clear()
    stemmer.stem.cache_clear()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", type=Path, help="keep the built file here and reuse it")
    args = parser.parse_args(argv)
    corpus = Corpus(words=english_words())
    ways = ("before", "now", "now, cold")
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store(args.db or Path(tmp) / "bench.db", create=True) as store,
    ):
        print(build(store, corpus, args.facts) + "\n")
        queries = {
            "rare": [corpus.rare_query() for _ in range(args.queries)],
            "sentence": [corpus.sentence(5, 12) for _ in range(args.queries)],
        }
        for asked in queries.values():
            for text in asked:  # embedded once: the same work whichever way
                store.query_facts(text, slots=["user"], track_access=False)
        times: dict[tuple[str, str], list[float]] = {}
        differ = 0
        for _ in range(args.rounds):
            for kind, asked in queries.items():
                for i, text in enumerate(asked):
                    use(BEFORE)  # an untimed search first: the first one pays cold caches
                    store.query_facts(text, slots=["user"], track_access=False)
                    found = {}
                    for way in ways if i % 2 else ("now", "before", "now, cold"):
                        use(BEFORE if way == "before" else NOW)
                        if way == "now, cold":
                            forget()
                        begin = time.process_time()
                        hits = store.query_facts(text, slots=["user"], track_access=False)
                        times.setdefault((kind, way), []).append(time.process_time() - begin)
                        found[way] = [(hit.fact.id, hit.relevance) for hit in hits]
                    differ += len({tuple(hits) for hits in found.values()}) != 1
        use(NOW)
        info = relevance.key_stems.cache_info()
        print(f"questions whose hits differ between the ways: {differ}")
        print(
            f"key memo after the last search: {info.currsize:,} keys (at most {info.maxsize:,})\n"
        )
        print("| hybrid search, one slot | before p50 ms CPU | now | now, cold | now ÷ before |")
        print("|---|---|---|---|---|")
        for kind in queries:
            p50 = [statistics.median(times[kind, way]) * 1000 for way in ways]
            print(
                f"| {kind} | {p50[0]:.2f} | {p50[1]:.2f} | {p50[2]:.2f} | {p50[1] / p50[0]:.2f} |"
            )


if __name__ == "__main__":
    main()
