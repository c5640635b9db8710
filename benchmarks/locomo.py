"""Retrieval on LoCoMo: does query_facts put the turn that answers a question in its top 10?

    python benchmarks/locomo.py [PATH] [--retriever lexical] [--limit 10]

PATH defaults to ../shared/data/locomo/locomo-dev.json next to the repository. Each
conversation goes into its own fresh Store, through the public API: one fact per dialog turn,
key = the turn's ``dia_id``, value = ``"speaker: text"`` plus ``" [image: caption]"`` when the
turn shared an image. Every question of categories 1-4 (multi-hop, temporal, open-domain,
single-hop) is asked with ``query_facts(..., track_access=False)``; the answer's evidence turns
are the gold keys. Printed per category and overall:

- R@k: the share of a question's gold turns in the top k, averaged over questions;
- MRR: 1 / the rank of the first gold turn in the top ``--limit`` (0 when none is), averaged.

Data quirks handled (see the data folder's README.md): questions with empty evidence are
skipped; evidence strings holding several ids are split on ';' and whitespace; ``D:11:26``
means ``D11:26`` and ``D30:05`` means ``D30:5``; ids that name no turn are dropped.

A retriever is ``(store, question, k) -> [key, ...]``, best first: ``lexical`` is query_facts,
``plain-or`` the baseline (FTS5's bm25 over an OR-query of the same words). Another leg
(semantic, hybrid) plugs in by adding a function to ``RETRIEVERS``; ``--retriever`` picks it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from baseline import or_query

from slotmem import Store

DEFAULT_PATH = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SLOT = "episodic"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_ID = re.compile(r"D:?(\d+):0*(\d+)")

Retriever = Callable[[Store, str, int], list[str]]


@dataclass
class Question:
    text: str
    gold: set[str]
    category: int


@dataclass
class Conversation:
    sample_id: str
    turns: list[tuple[str, str]]  # (dia_id, value)
    questions: list[Question] = field(default_factory=list)


def lexical(store: Store, question: str, k: int) -> list[str]:
    hits = store.query_facts(question, limit=k, track_access=False, semantic=False)
    return [hit.fact.key for hit in hits]


def presence(store: Store, question: str, k: int) -> list[str]:
    """The lexical leg counting a matched word as present, without bm25 (``Ranking(presence=True)``)."""
    ranking, store.ranking = store.ranking, dataclasses.replace(store.ranking, presence=True)
    try:
        return lexical(store, question, k)
    finally:
        store.ranking = ranking


def hybrid(store: Store, question: str, k: int) -> list[str]:
    """query_facts as an agent calls it, once `slotmem reindex` has turned the semantic leg on."""
    return [hit.fact.key for hit in store.query_facts(question, limit=k, track_access=False)]


def semantic(store: Store, question: str, k: int) -> list[str]:
    """The vector leg alone: kNN over the vec0 index."""
    blob = store.semantic.query_vector(question)
    seqs = [seq for seq, _ in store.semantic.knn(blob, None, k)] if blob else []
    keys = dict(
        store.conn.execute(
            f"SELECT seq, key FROM memory_facts WHERE seq IN ({', '.join('?' * len(seqs))})", seqs
        )
    )
    return [keys[seq] for seq in seqs]


def plain_or(store: Store, question: str, k: int) -> list[str]:
    """The baseline: FTS5's bm25 over an OR-query of the same words, times confidence."""
    match = or_query(question)
    if match is None:
        return []
    rows = store.conn.execute(
        "SELECT f.key FROM memory_facts_fts JOIN memory_facts f ON f.seq = memory_facts_fts.rowid "
        "WHERE memory_facts_fts MATCH ? ORDER BY bm25(memory_facts_fts, 2.0, 1.0, 0.0) * f.confidence "
        "LIMIT ?",
        (match, k),
    )
    return [key for (key,) in rows]


RETRIEVERS: dict[str, Retriever] = {"lexical": lexical, "presence": presence, "plain-or": plain_or}


# -- the data -------------------------------------------------------------------------------
def load(path: Path) -> list[Conversation]:
    return [conversation(sample) for sample in json.loads(Path(path).read_text())]


def conversation(sample: dict) -> Conversation:
    talk, turns, n = sample["conversation"], [], 1
    while f"session_{n}" in talk:
        turns += [(turn["dia_id"], turn_value(turn)) for turn in talk[f"session_{n}"]]
        n += 1
    known = {dia_id for dia_id, _ in turns}
    conversation = Conversation(sample["sample_id"], turns)
    for qa in sample["qa"]:
        gold = evidence(qa.get("evidence") or [], known)
        if qa.get("category") in CATEGORIES and gold:
            conversation.questions.append(Question(str(qa["question"]), gold, qa["category"]))
    return conversation


def turn_value(turn: dict) -> str:
    value = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        value += f" [image: {turn['blip_caption']}]"
    return _CONTROL.sub(" ", value)[:4000]


def evidence(items: list, known: set[str]) -> set[str]:
    """Gold turn ids: split, repaired, and only those naming a turn of the conversation."""
    ids = set()
    for item in items:
        for raw in re.split(r"[;\s]+", str(item)):
            match = _ID.fullmatch(raw.strip())
            dia_id = match and f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id in known:
                ids.add(dia_id)
    return ids


# -- the measurement ------------------------------------------------------------------------
def scores(ranked: list[str], gold: set[str], limit: int) -> tuple[float, float, float, float]:
    """(R@1, R@5, R@10, reciprocal rank within the top ``limit``)."""
    recall = [len(gold & set(ranked[:k])) / len(gold) for k in (1, 5, 10)]
    rank = next((i for i, key in enumerate(ranked[:limit], 1) if key in gold), None)
    return (*recall, 1 / rank if rank else 0.0)


def evaluate(
    conversations: list[Conversation], retriever: Retriever, limit: int = 10, embed: bool = False
) -> dict:
    """{category: [sums of R@1, R@5, R@10, RR], question count} over all conversations."""
    return evaluate_many(conversations, {"one": retriever}, limit, embed)["one"]


def evaluate_many(
    conversations: list[Conversation],
    retrievers: dict[str, Retriever],
    limit: int = 10,
    embed: bool = False,
) -> dict[str, dict]:
    """The same stores, loaded once (and embedded when ``embed``), for every retriever."""
    totals: dict[str, dict[int, list[float]]] = {name: {} for name in retrievers}
    with tempfile.TemporaryDirectory() as tmp:
        for conversation in conversations:
            with Store(Path(tmp) / f"{conversation.sample_id}.db", create=True) as store:
                store.upsert_many(
                    {"slot": SLOT, "key": dia_id, "value": value, "source": "locomo"}
                    for dia_id, value in conversation.turns
                )
                if embed:
                    store.semantic.reindex()
                for name, retriever in retrievers.items():
                    for q in conversation.questions:
                        parts = scores(retriever(store, q.text, limit), q.gold, limit)
                        row = totals[name].setdefault(q.category, [0.0] * 5)
                        row[:4] = [a + b for a, b in zip(row, parts)]
                        row[4] += 1
    return totals


def report(totals: dict[int, list[float]], seconds: float) -> str:
    lines = ["| category | questions | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|"]
    overall = [sum(row[i] for row in totals.values()) for i in range(5)]
    named = [(f"{c} {CATEGORIES[c]}", totals[c]) for c in sorted(totals)]
    for name, row in [*named, ("**1-4 overall**", overall)]:
        n = row[4] or 1
        cells = " | ".join(f"{value / n:.3f}" for value in row[:4])
        lines.append(f"| {name} | {int(row[4])} | {cells} |")
    lines.append(f"\n{int(overall[4])} questions in {seconds:.1f} s")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--retriever", choices=sorted(RETRIEVERS), default="lexical")
    parser.add_argument("--limit", type=int, default=10, help="hits asked for (MRR counts these)")
    parser.add_argument(
        "--semantic",
        action="store_true",
        help="embed the turns (slotmem reindex) and compare lexical, semantic, hybrid",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if not args.semantic:
        totals = evaluate(load(args.path), RETRIEVERS[args.retriever], args.limit)
        print(report(totals, time.perf_counter() - start))
        return
    legs = {"lexical": lexical, "semantic": semantic, "hybrid": hybrid}
    results = evaluate_many(load(args.path), legs, args.limit, embed=True)
    seconds = time.perf_counter() - start
    for name, totals in results.items():
        print(f"\n### {name}\n")
        print(report(totals, seconds))


if __name__ == "__main__":
    main()
