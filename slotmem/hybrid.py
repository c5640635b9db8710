"""Hybrid search: the lexical leg's candidates and the semantic leg's neighbours, fused."""

from __future__ import annotations

from . import fusion
from .models import Fact, Hit


def search(store, text: str, lexical_rows, explain_row, slots, limit: int,
           min_score: float | None, explain: bool) -> list[Hit]:  # fmt: skip
    """``lexical_rows`` are the lexical leg's best ``fusion.DEPTH`` rows (fact columns plus
    score, feedback and recency); ``explain_row(row)`` explains one of them."""
    semantic = store.semantic
    blob = semantic.query_vector(text)
    if blob is None:  # nothing to embed: the lexical order stands
        neighbours = []
    else:
        neighbours = semantic.knn(blob, slots, fusion.DEPTH)
    rows = {row["seq"]: row for row in lexical_rows}
    distance = dict(neighbours)
    if blob is not None:
        distance.update(semantic.distances(blob, [seq for seq in rows if seq not in distance]))
    rows.update(_fetch(store, [seq for seq, _ in neighbours if seq not in rows]))
    lexical = {row["seq"]: row["score"] for row in lexical_rows}
    similarity = {seq: (1.0 - dist) * _weight(rows[seq]) for seq, dist in distance.items() if seq in rows}
    ranks = {seq: rank for rank, (seq, _) in enumerate(neighbours, 1)}
    hits = []
    for fused in fusion.fuse(lexical, similarity, semantic_ranks=ranks):
        if fused.score <= 0 or (min_score is not None and fused.score < min_score):
            break  # the worst candidate of both legs says nothing
        row = rows[fused.seq]
        parts = None
        if explain:
            parts = explain_row(row) if fused.seq in lexical else {
                "confidence": row["confidence"], "feedback": row["feedback"], "recency": row["recency"]}  # fmt: skip
            parts["lexical_score"] = parts.pop("score", None)
            parts.update(
                fused=fused.score, alpha=fusion.ALPHA, lexical_norm=fused.lexical_norm,
                semantic_norm=fused.semantic_norm, lexical_rank=fused.lexical_rank,
                semantic_rank=fused.semantic_rank, distance=distance.get(fused.seq),
            )  # fmt: skip
        hits.append(Hit(Fact.from_row(row), fused.score, parts))
        if len(hits) == limit:
            break
    return hits


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
