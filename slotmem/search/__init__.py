"""Search: user text -> ``Query`` -> hits, through one entry point, ``run``.

``terms`` turns text into terms, ``plan`` chooses which terms to run (document frequencies and
a postings budget), ``lexical`` scores them in one SQL statement, and ``hybrid`` fuses that leg
with the vector leg (``fusion`` holds the formula) when the caller hands one in.
"""

from __future__ import annotations

from ..records import Hit
from . import hybrid, lexical, plan, relevance
from .lexical import Ranking
from .plan import DocFreqs
from .query import Query

__all__ = ["DocFreqs", "Query", "Ranking", "run"]


def run(
    conn,
    query: Query,
    *,
    ranking: Ranking,
    now: int,
    freqs: DocFreqs | None = None,
    vectors: hybrid.VectorLeg | None = None,
) -> list[Hit]:
    """The query's hits, best first. Lexical only unless ``vectors`` (the file's vector leg, when
    it is on) is given and the query allows it; ``freqs`` remembers document frequencies between
    searches. Reads only: access tracking is the caller's."""
    if query.slots == ():
        return []
    slots = list(query.slots) if query.slots else None
    blob = None
    if vectors is not None and query.semantic and query.text.strip():
        blob = vectors.query_vector(query.text)  # None: the model failed here; lexical only
    budget = plan.HYBRID_BUDGET if blob is not None else None
    chosen = plan.plan(conn, query.terms, budget, freqs) if query.terms else None
    if blob is not None and vectors is not None:
        return hybrid.search(conn, query, chosen, blob, ranking=ranking, now=now, vectors=vectors)
    if not chosen:
        return []
    total = relevance.query_mass(chosen, query.terms, ranking)
    floor = query.min_relevance
    rows = lexical.search(
        conn,
        chosen,
        ranking,
        slots=slots,
        limit=query.limit,
        now=now,
        min_score=query.min_score,
        min_relevance=floor,
        total=total,
        explain=query.explain,
        since=query.since,
        until=query.until,
    )
    hits = [lexical.to_hit(row, chosen, ranking, total, query.explain) for row in rows]
    return hits if floor is None else [hit for hit in hits if hit.relevance >= floor]
