"""Hybrid search on PostgreSQL: the file's (slotmem.search.hybrid), its candidates found here.

The lexical leg is pg/search.py's statement scoring each matched term as present (tf = 1, as
the file's hybrid lexical leg does), within the file's ``HYBRID_BUDGET``; the vector leg is the
memory's HNSW index re-ranked by the stored vectors (pg/vectors.py). Fusion, relevance, the
floors and the monotone merge with the lexical search alone are slotmem.search's own,
imported: ``hybrid.fused_hits`` and ``search.monotone``.
"""

from __future__ import annotations

import dataclasses

from ..records import Hit
from ..search import Query, Ranking, fusion, monotone, relevance
from ..search import hybrid as file_hybrid
from ..search import plan as file_plan
from . import search as pg_search
from . import tags as fact_tags


def search(conn, query: Query, ranking: Ranking, freqs: pg_search.DocFreqs, now: int, vectors):
    """The query's hits, best first, with their tags: hybrid when ``vectors`` (the memory's
    leg, when it is on) embeds the question, else lexical."""
    if query.slots == ():
        return []
    blob = None
    if vectors is not None and query.semantic and query.text.strip():
        blob = vectors.query_vector(query.text)  # None: the model failed here; lexical only
    if blob is None:
        return pg_search.search(conn, query, ranking, freqs, now)
    hits = fused(conn, query, ranking, freqs, now, vectors, blob)
    hits = monotone(hits, pg_search.search(conn, query, ranking, freqs, now), query)
    if not hits:
        return hits
    facts = fact_tags.attach(conn, [hit.fact for hit in hits])
    return [dataclasses.replace(hit, fact=fact) for hit, fact in zip(hits, facts)]


def fused(conn, query: Query, ranking: Ranking, freqs, now: int, vectors, blob: bytes) -> list[Hit]:
    """Both legs' best ``fusion.DEPTH`` candidates, fused by the file's code."""
    slots = list(query.slots) if query.slots else None
    chosen, current = None, None
    if query.terms:
        chosen, current = pg_search.plan(conn, query, freqs, now, file_plan.HYBRID_BUDGET)
    rows: list = []
    if chosen:
        assert current is not None
        leg = dataclasses.replace(query, limit=fusion.DEPTH, min_score=None, min_relevance=None)
        total = relevance.query_mass(chosen, query.terms, ranking)
        present = dataclasses.replace(ranking, presence=True)  # tf = 1, as the file's leg
        sql, params = pg_search.statement(chosen, current, present, leg, now, total)
        rows = conn.execute(sql, params).fetchall()
    neighbours = vectors.knn(blob, slots, fusion.DEPTH)
    facts = {row["seq"]: row for row in rows}
    distance = dict(neighbours)
    distance.update(vectors.distances(blob, [seq for seq in facts if seq not in distance]))
    others = [seq for seq, _ in neighbours if seq not in facts]
    facts.update(fetch(conn, ranking, now, others, query))
    if current is None:
        current = pg_search.stats(conn)
    refreshed = None if current is None else current.refreshed_at
    keys = relevance.key_matches(
        relevance.stems(query.terms),
        [row["key"] for row in facts.values()],
        lambda words: freqs.lookup(conn, words, refreshed),
        ranking,
        chosen.facts if chosen is not None else (0 if current is None else current.facts),
    )
    return file_hybrid.fused_hits(query, chosen, rows, neighbours, distance, facts, keys, ranking)


def fetch(conn, ranking: Ranking, now: int, seqs: list[int], query: Query) -> dict:
    """The vector leg's facts that the query allows (not expired, in its window, tagged)."""
    if not seqs:
        return {}
    params: dict = {"now": now, "seqs": seqs}
    feedback, recency = pg_search.factors(ranking, params)
    tests = pg_search.fact_tests(query, params)
    sql = (
        f"SELECT f.*, {feedback} AS feedback, {recency} AS recency FROM memory_facts f "
        f"WHERE f.seq = ANY(%(seqs)s) AND {' AND '.join(tests)}"
    )
    return {row["seq"]: row for row in conn.execute(sql, params)}
