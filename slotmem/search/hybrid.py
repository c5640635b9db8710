"""Hybrid search: the lexical leg's candidates and the vector leg's neighbours, fused by
``fusion.py`` (the formula, and why).

The lexical leg scores matched terms as present (tf = 1), without bm25: the fusion reads a
candidate's coverage, not its bm25 score, and bm25 on a ``detail=none`` index re-reads each
matched fact's text.

The legs run at once (``search._hybrid``): the question is embedded (on a one-thread onnxruntime
session, unless the process embedded facts first: embedders.load),
and the signatures scanned for its candidates on a worker thread (``VectorLeg.ask``; onnxruntime
and numpy let go of the GIL), while the calling thread plans, runs the lexical leg (SQLite lets
go of it inside each step), reads the stored vectors of the lexical candidates and stems their
keys; then this module reads the vector leg's other candidates and fuses the two. Each part
computes what it computed in line (a fact's distance does not depend on the facts read with
it), so the hits are the same (tests/test_hybrid_ask.py). The search by words alone, which
``search.monotone`` holds the hits to, needs them (``bound.py``), so it runs after.
"""

from __future__ import annotations

from typing import Protocol

from ..records import Fact, Hit
from . import fusion, lexical, relevance
from .lexical import Ranking
from .plan import WORDS, DocFreqs, Plan, indexed_rows
from .query import Query


class Question(Protocol):
    """A search's question under way (``VectorLeg.ask``)."""

    running: bool  # on another thread now
    stored: object  # what ``prefetch`` or ``result`` read of ``others`` (``VectorLeg.nearest``)

    def prefetch(self, others: list[int] | None) -> None: ...

    def result(self, others: list[int] | None = None) -> tuple[bytes | None, list[int] | None]: ...


class VectorLeg(Protocol):
    """What hybrid search needs of the vector index (slotmem.vectors.Semantic has it)."""

    def query_vector(self, text: str) -> bytes | None: ...

    def ask(self, text: str, slots: list[str] | None, k: int) -> Question: ...

    def knn(self, blob: bytes, slots: list[str] | None, k: int) -> list[tuple[int, float]]: ...

    def distances(self, blob: bytes, seqs: list[int]) -> dict[int, float]: ...

    def nearest(
        self,
        blob: bytes,
        slots: list[str] | None,
        k: int,
        others: list[int],
        candidates: list[int] | None = None,
        stored=None,
    ) -> tuple[list[tuple[int, float]], dict[int, float]]: ...


def search(
    conn,
    query: Query,
    plan: Plan | None,
    blob: bytes,
    *,
    ranking: Ranking,
    now: int,
    vectors: VectorLeg,
    freqs: DocFreqs | None = None,
    rows: list | None = None,
    candidates: list[int] | None = None,
    stored=None,
) -> list[Hit]:
    """Both legs' best ``fusion.DEPTH`` candidates for the query (``plan``: its lexical terms,
    None when none can match; ``blob``: its vector), fused, best first. ``rows``: the lexical
    leg's candidates found already (``by_words``, or ``lexical.search_both``); ``candidates``:
    the vector index's (``VectorLeg.ask``), None: found here; ``stored``: stored vectors read
    already (``Question.stored``)."""
    slots = list(query.slots) if query.slots else None
    if rows is None:
        rows = by_words(conn, query, plan, ranking, now)
    facts = {row["seq"]: row for row in rows}
    # the vector leg's neighbours and the lexical candidates' distances, one read of the vectors
    neighbours, measured = vectors.nearest(
        blob, slots, fusion.DEPTH, list(facts), candidates, stored
    )
    distance = dict(neighbours)
    distance.update((seq, measured[seq]) for seq in facts if seq in measured)
    others = [seq for seq, _ in neighbours if seq not in facts]
    facts.update(_fetch(conn, ranking, now, others, query))
    keys = relevance.key_matches(
        relevance.stems(query.terms),
        [row["key"] for row in facts.values()],
        lambda words: (freqs or DocFreqs()).lookup(conn, words),
        ranking,
        plan.facts if plan is not None else indexed_rows(conn, WORDS),
    )
    return fused_hits(query, plan, rows, neighbours, distance, facts, keys, ranking)


def by_words(conn, query: Query, plan: Plan | None, ranking: Ranking, now: int) -> list:
    """The lexical leg's best ``fusion.DEPTH`` candidates, its terms scored as present."""
    if not plan:
        return []
    return lexical.search(
        conn,
        plan,
        ranking,
        slots=list(query.slots) if query.slots else None,
        limit=fusion.DEPTH,
        now=now,
        explain=query.explain,
        tf=False,
        since=query.since,
        until=query.until,
        tags=query.tags,
    )


def fused_hits(
    query: Query,
    plan: Plan | None,
    rows: list,
    neighbours: list[tuple[int, float]],
    distance: dict[int, float],
    facts: dict,
    keys: dict[str, float],
    ranking: Ranking,
) -> list[Hit]:
    """The hybrid hits from what both legs found, whatever index found it (a file's, or
    PostgreSQL's: slotmem.pg.hybrid): ``rows``, the lexical leg's candidates in its order
    (scored as present, tf = 1); ``neighbours``, the vector leg's (seq, cosine distance), best
    first; ``distance``, the distance of every candidate that has a vector; ``facts``, seq ->
    fact row (with feedback and recency) of every candidate the query allows; ``keys``, each
    key's match (relevance.key_matches)."""
    total = relevance.query_mass(plan, query.terms, ranking)
    coverage = {row["seq"]: relevance.coverage(row["mass"], total) for row in rows}
    cosine = {seq: 1.0 - dist for seq, dist in distance.items() if seq in facts}
    weight = {seq: _weight(row) for seq, row in facts.items()}
    ranks = {seq: rank for rank, (seq, _) in enumerate(neighbours, 1) if seq in facts}
    reference = relevance.reference([1.0 - dist for _, dist in neighbours])
    hits = []
    calibration, floor = ranking.calibration, query.min_relevance
    margin = 0.0  # the excess every hit needs: when the words alone find nothing above the floor
    if floor is not None:  # found by meaning: a higher floor (search.monotone keeps the words')
        floor = calibration.hybrid_floor(floor)
        if query.min_relevance and not any(
            _by_words(calibration, row, coverage[row["seq"]], keys[row["key"]])
            >= query.min_relevance
            for row in rows
        ):
            margin = calibration.semantic_margin
    for fused in fusion.fuse(coverage, cosine, weight, semantic_ranks=ranks):
        if fused.score <= 0 or (query.min_score is not None and fused.score < query.min_score):
            break  # neither leg says anything for the rest
        row = facts[fused.seq]
        matched = row["matched"] if fused.seq in coverage else 0
        key = keys[row["key"]]
        above = relevance.excess(fused.similarity, reference)
        specific = row["specific"] if fused.seq in coverage else 0.0
        likely = calibration.relevance(
            fused.coverage, matched, fused.similarity, key, above, specific
        )
        if floor is not None and likely < floor:
            continue
        if above < margin:
            continue  # by meaning alone, and not standing out: near many facts, about none
        parts = None
        if query.explain:
            parts = _explain(row, fused, plan if fused.seq in coverage else None, ranking)
            parts.update(
                distance=distance.get(fused.seq),
                relevance=likely,
                key_match=key,
                excess=above,
                specific=specific,
                relevance_from=(
                    f"hybrid: coverage {fused.coverage:.2f}, matched {matched}, "
                    f"similarity {fused.similarity:.2f}, key {key:.2f}, excess {above:.2f}, "
                    f"specific {specific:.2f}"
                ),
            )
        hits.append(Hit(Fact.from_row(row), fused.score, parts, likely))
        if len(hits) == query.limit:
            break
    return hits


def _by_words(calibration, row, coverage: float, key: float) -> float:
    """A lexical candidate's relevance by its words alone (the lexical constants)."""
    return calibration.relevance(coverage, row["matched"], None, key, 0.0, row["specific"])


def _explain(row, fused: fusion.Fused, plan: Plan | None, ranking: Ranking) -> dict:
    if plan is not None:
        parts = lexical.explain(row, plan, ranking)
    else:
        parts = {name: row[name] for name in ("confidence", "feedback", "recency")}
    parts["lexical_score"] = parts.pop("score", None)
    parts.update(
        fused=fused.score,
        lexical_part=fused.lexical_part,
        semantic_part=fused.semantic_part,
        coverage=fused.coverage,
        similarity=fused.similarity,
        semantic_weight=fused.semantic_weight,
        lexical_rank=fused.lexical_rank,
        semantic_rank=fused.semantic_rank,
    )
    return parts


def _weight(row) -> float:
    return row["confidence"] * row["feedback"] * row["recency"]


def _fetch(conn, ranking: Ranking, now: int, seqs: list[int], query: Query) -> dict:
    """The vector leg's facts that the query allows (not expired, in its window)."""
    if not seqs:
        return {}
    feedback, recency = ranking.factors()
    marks = ", ".join(f":s{i}" for i in range(len(seqs)))
    params = {f"s{i}": seq for i, seq in enumerate(seqs)} | {"now": now}
    tests = lexical.fact_tests(params, query.since, query.until, query.tags)  # no alias
    sql = (
        f"SELECT f.*, {feedback} AS feedback, {recency} AS recency FROM memory_facts f "
        f"WHERE f.seq IN ({marks}) AND {' AND '.join(tests)}"
    )
    return {row["seq"]: row for row in conn.execute(sql, params)}
