"""Hybrid search: the lexical leg's candidates and the semantic leg's neighbours, fused by
slotmem/fusion.py (the formula, and why).

The lexical leg scores matched terms as present (tf = 1), without bm25: the fusion reads a
candidate's coverage, not its bm25 score, and bm25 on a ``detail=none`` index re-reads each
matched fact's text (about 4 µs a posting). LoCoMo measured no loss (R@10 .701 against .699 with
bm25). Embedding the question on a worker thread while the lexical leg ran gained nothing
measurable on two CPUs (onnxruntime uses both), so it is embedded first, in line.
"""

from __future__ import annotations

from . import fusion
from .models import Fact, Hit
from .ranking import explain as explain_lexical


def search(store, text: str, terms, plan, slots, limit: int, min_score: float | None,
           explain: bool) -> list[Hit]:  # fmt: skip
    """Both legs' best ``fusion.DEPTH`` candidates for ``text`` (parsed into ``terms``, planned
    into ``plan``, None when no term can match), fused, best first."""
    semantic = store.semantic
    rows = store._search(plan, slots, fusion.DEPTH, None, True, tf=False) if plan else []
    coverage = coverages(store, plan, terms, rows) if rows else {}
    blob = semantic.query_vector(text)
    neighbours = semantic.knn(blob, slots, fusion.DEPTH) if blob is not None else []
    facts = {row["seq"]: row for row in rows}
    distance = dict(neighbours)
    if blob is not None:
        distance.update(semantic.distances(blob, [seq for seq in facts if seq not in distance]))
    facts.update(_fetch(store, [seq for seq, _ in neighbours if seq not in facts]))
    cosine = {seq: 1.0 - dist for seq, dist in distance.items() if seq in facts}
    weight = {seq: _weight(row) for seq, row in facts.items()}
    ranks = {seq: rank for rank, (seq, _) in enumerate(neighbours, 1) if seq in facts}
    hits = []
    for fused in fusion.fuse(coverage, cosine, weight, semantic_ranks=ranks):
        if fused.score <= 0 or (min_score is not None and fused.score < min_score):
            break  # neither leg says anything for the rest
        row = facts[fused.seq]
        parts = None
        if explain:
            if fused.seq in coverage:
                parts = explain_lexical(row, plan, store.ranking)
            else:
                parts = {name: row[name] for name in ("confidence", "feedback", "recency")}
            parts["lexical_score"] = parts.pop("score", None)
            parts.update(
                fused=fused.score, lexical_part=fused.lexical_part,
                semantic_part=fused.semantic_part, coverage=fused.coverage,
                similarity=fused.similarity, semantic_weight=fused.semantic_weight,
                lexical_rank=fused.lexical_rank, semantic_rank=fused.semantic_rank,
                distance=distance.get(fused.seq),
            )  # fmt: skip
        hits.append(Hit(Fact.from_row(row), fused.score, parts))
        if len(hits) == limit:
            break
    return hits


def coverages(store, plan, terms, rows) -> dict[int, float]:
    """seq -> the share of the query's idf mass the row matched, in the rows' order. The mass:
    the plan's terms, and each term no fact holds at df = 0 (the plan's too-common ones: 0)."""
    idf = [store.ranking.idf(plan.facts, arm.df) for arm in plan.arms]
    absent = len(terms.words) + len(terms.grams) - len(plan.arms) - len(plan.dropped)
    mass = sum(idf) + max(0, absent) * store.ranking.idf(plan.facts, 0)
    found = {}
    for row in rows:
        arms = [int(part.split(":", 1)[0]) for part in (row["parts"] or "").split()]
        found[row["seq"]] = sum(idf[arm] for arm in arms) / mass if mass > 0 else 0.0
    return found


def _weight(row) -> float:
    return row["confidence"] * row["feedback"] * row["recency"]


def _fetch(store, seqs: list[int]) -> dict:
    if not seqs:
        return {}
    feedback, recency = store.ranking.factors()
    marks = ", ".join(f":s{i}" for i in range(len(seqs)))
    params = {f"s{i}": seq for i, seq in enumerate(seqs)} | {"now": store.clock()}
    sql = (f"SELECT f.*, {feedback} AS feedback, {recency} AS recency FROM memory_facts f "
           f"WHERE f.seq IN ({marks})")  # fmt: skip
    return {row["seq"]: row for row in store.conn.execute(sql, params)}
