"""Lexical scoring: bm25 against presence, and what the plan keeps of the exhaustive ranking.

    python benchmarks/lexical_scoring.py [--facts 100000] [--queries 100] [--budgets 8000,32000]
        [--scorings bm25,presence,bm25+numpy,presence+numpy] [--file PATH] [--writes]

On synthetic facts (benchmarks/synthetic.py: Zipf words), common-word questions (5 of the 50
most frequent words) and rare ones (3 words of rank 5,000 or more), over all slots:

- **CPU ms** of ``query_facts`` (access tracking off) per question, p50, for each scoring (bm25:
  FTS5 re-reads each matched row to find its term frequency; presence: a matched term counts
  tf = 1) and each postings budget (``plan.POSTINGS_BUDGET``), the settings interleaved in
  rounds on the same file so that a busy machine slows them alike; the ratio against today's
  (bm25 at the shipped budget) is what to read;
- **recall of the exhaustive ranking**: the share of the top 10 of the same scoring over every
  posting of every question word (nothing dropped as too common, nothing capped) that the
  plan's top 10 holds (query_facts' top 10, whichever path it took).

``+numpy`` settings score a common-word question over every posting of every word
(slotmem/search/common.py: numpy, the postings kept in memory); ``+numpy500`` with 500
candidates scored exactly instead of ``common.CANDIDATES``; the other settings run with it off.
The first round reads the postings into memory. ``--file`` keeps the built file (built there when
it does not exist yet); ``--writes`` also times common-word questions each asked just after
another connection's write, when the postings are read again. ``raw``: the statement of the plan
alone (bm25) run raw, SQLite's own cost: query_facts' ratio to it for rare words is issue 24's
"rare-word <= 1.2x raw"; ``raw-best``: the cheaper form of the same statement that query_facts
runs (``lexical.best``), run raw; ``raw+``: ``raw`` with ``LIMIT +:limit`` for its ``LIMIT
:limit`` (SQLite 3.50 reads a bare bound LIMIT while planning, so each run binding it prepares
the statement again: a third of the statement's cost for rare words; docs/benchmarks.md).

LoCoMo's figures: ``python benchmarks/locomo.py`` (bm25, the default) beside
``python benchmarks/locomo.py --retriever presence``.
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

from slotmem import Ranking, Store
from slotmem.search import common, lexical, plan
from slotmem.search.stemmer import stem
from slotmem.search.terms import parse, quote

ROUNDS = 3


def exhaustive(conn, text: str) -> plan.Plan:
    """Every word of the question that some fact holds, each scored over all its postings."""
    words = parse(text).words
    dfs = plan.DocFreqs().lookup(conn, {stem(word) for word in words})
    arms = [
        plan.Arm(word, plan.WORDS, quote(word), dfs[stem(word)])
        for word in words
        if dfs[stem(word)]
    ]
    return plan.Plan(tuple(arms), plan.indexed_rows(conn, plan.WORDS))


def top(conn, chosen: plan.Plan, ranking: Ranking, now: int) -> list[str]:
    rows = lexical.search(conn, chosen, ranking, slots=None, limit=10, now=now)
    return [row["id"] for row in rows]


def found(store: Store, text: str) -> list[str]:
    """The ids of query_facts' top 10 (the plan's, or common.py's when it applies)."""
    return [hit.fact.id for hit in store.query_facts(text, limit=10, track_access=False)]


def raw(conn, text: str, now: int) -> tuple[str, dict] | None:
    """The statement query_facts runs for ``text`` with the plan alone (terms looked up
    beforehand), to run raw: SQLite's own cost, none of slotmem's Python around it."""
    chosen = plan.plan(conn, parse(text))
    if not chosen:
        return None
    sql, params = Ranking().sql(chosen, None)
    params.update(now=now, limit=10, total=0.0)
    order = "score DESC, length(key) + length(value), seq DESC"
    test = "(expires_at IS NULL OR expires_at > :now)"
    return f"SELECT * FROM ({sql}) WHERE {test} ORDER BY {order} LIMIT :limit", params


def raw_best(conn, text: str, now: int) -> tuple[str, dict] | None:
    """The cheaper form of the same statement that query_facts runs (``lexical.best``: the
    candidates ranked by seq and score, then the best joined to their facts and tags), run raw.
    ``raw`` stays the baseline: the plan's statement as it is written plainly."""
    chosen = plan.plan(conn, parse(text))
    if not chosen:
        return None
    return lexical.best_sql(chosen, Ranking(), slots=None, limit=10, now=now)


def apply(name: str, budget: int, candidates: int) -> Ranking:
    """Set up one setting ("bm25", "presence+numpy", "bm25+numpy500", ...): its ranking."""
    plan.POSTINGS_BUDGET = budget
    common.ENABLED = "+numpy" in name
    common.CANDIDATES = int(name.partition("+numpy")[2] or candidates)
    return Ranking(presence=name.startswith("presence"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--budgets", default=f"{plan.POSTINGS_BUDGET},32000")
    parser.add_argument(
        "--scorings",
        default="bm25,presence,bm25+numpy,presence+numpy",
        help="+numpy: common-word questions over every posting (slotmem/search/common.py); "
        "+numpy500: with 500 candidates scored exactly (common.CANDIDATES); raw: the plan's "
        "statement run raw (bm25); raw+: the same with LIMIT +:limit (SQLite 3.50 prepares a "
        "bare bound LIMIT again at each run); raw-best: the form of it query_facts runs, run raw",
    )
    parser.add_argument("--file", help="an existing file of --facts synthetic facts (kept)")
    parser.add_argument(
        "--writes",
        action="store_true",
        help="also time common-word questions each just after another connection's write",
    )
    args = parser.parse_args(argv)
    budgets = [int(b) for b in args.budgets.split(",")]
    scorings = args.scorings.split(",")
    corpus = Corpus()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        facts = corpus.facts(args.facts)  # drawn either way: the questions come after them
        path = Path(args.file or Path(tmp) / "bench.db")
        if path.exists():
            store = Store(path)
        else:
            store = Store(path, create=True)
            for batch in range(0, args.facts, 50_000):
                store.upsert_many(facts[batch : batch + 50_000])
            print(f"{args.facts:,} facts loaded in {time.perf_counter() - start:.0f} s\n")
        conn, now = store.conn, store.clock()
        settings = [(name, budget) for name in scorings for budget in budgets]
        settings = [
            (n, b)
            for n, b in settings
            if "numpy" not in n and not n.startswith("raw") or b == budgets[0]
        ]
        candidates = common.CANDIDATES
        print("| questions | scoring | budget | CPU ms p50 | ratio | recall of exhaustive top 10 |")
        print("|---|---|---|---|---|---|")
        for kind in ("common", "rare"):
            texts = [getattr(corpus, f"{kind}_query")() for _ in range(args.queries)]
            cpu: dict[tuple, list[float]] = {setting: [] for setting in settings}
            apply("raw", budgets[0], candidates)
            raws = [raw(conn, text, now) for text in texts]
            raws = [statement for statement in raws if statement]
            pluses = [(sql.replace("LIMIT :limit", "LIMIT +:limit"), p) for sql, p in raws]
            bests = [raw_best(conn, text, now) for text in texts]
            bests = [statement for statement in bests if statement]
            for _ in range(ROUNDS):
                for setting in settings:
                    store.ranking = apply(*setting, candidates)
                    if setting[0] in ("raw", "raw+", "raw-best"):
                        statements = {"raw": raws, "raw+": pluses, "raw-best": bests}
                        for sql, params in statements[setting[0]]:
                            began = time.process_time()
                            conn.execute(sql, params).fetchall()
                            cpu[setting].append((time.process_time() - began) * 1000)
                        continue
                    for text in texts[:2]:  # the postings in memory read (the first search's)
                        store.query_facts(text, track_access=False)
                    for text in texts:
                        began = time.process_time()
                        store.query_facts(text, track_access=False)
                        cpu[setting].append((time.process_time() - began) * 1000)
            base = statistics.median(cpu[settings[0]])
            for name, budget in settings:
                ranking = store.ranking = apply(name, budget, candidates)
                kept = []
                for text in texts:
                    truth = top(conn, exhaustive(conn, text), ranking, now)
                    if name in ("raw", "raw+", "raw-best"):  # the plan alone
                        chosen = top(conn, plan.plan(conn, parse(text)), ranking, now)
                    else:
                        chosen = found(store, text)
                    if truth:
                        kept.append(len(set(truth) & set(chosen)) / len(truth))
                p50 = statistics.median(cpu[(name, budget)])
                print(
                    f"| {kind} | {name} | {budget:,} | {p50:.1f} | {p50 / base:.2f} | "
                    f"{statistics.mean(kept):.3f} |"
                )
        postings = common.postings_of(store._doc_freqs)
        print(f"\npostings in memory: {postings.nbytes:,} bytes, {len(postings)} words")
        if args.writes:
            after_writes(store, Store(path), corpus, settings, candidates, args.queries)
        store.close()


def after_writes(store: Store, writer: Store, corpus: Corpus, settings, candidates, n) -> None:
    """CPU ms p50 of common-word questions, each asked just after another connection rewrote one
    fact (the index changed: the document frequencies and the postings in memory are read
    again), beside the same questions asked again without a write."""
    texts = [corpus.common_query() for _ in range(n)]
    cpu: dict[tuple, list[float]] = {}
    for _ in range(ROUNDS):
        for setting in settings:
            store.ranking = apply(*setting, candidates)
            for text in texts:
                writer.upsert("agent", "bench.write", corpus.sentence())
                for label in ("after a write", "again"):
                    began = time.process_time()
                    store.query_facts(text, track_access=False)
                    elapsed = (time.process_time() - began) * 1000
                    cpu.setdefault((*setting, label), []).append(elapsed)
    writer.delete("agent", "bench.write")
    writer.close()
    print("\n| questions | scoring | budget | CPU ms p50 after a write | again |")
    print("|---|---|---|---|---|")
    for name, budget in settings:
        after, again = (
            statistics.median(cpu[(name, budget, x)]) for x in ("after a write", "again")
        )
        print(f"| common | {name} | {budget:,} | {after:.1f} | {again:.1f} |")


if __name__ == "__main__":
    main()
