"""Search: user text -> ``Query`` -> hits, through one entry point, ``run``.

``terms`` turns text into terms, ``plan`` chooses which terms to run (document frequencies and
a postings budget), ``lexical`` scores them in one SQL statement, and ``hybrid`` fuses that leg
with the vector leg (``fusion`` holds the formula) when the caller hands one in.

Hybrid search is monotone: a hit of the lexical search alone keeps at least its lexical
relevance in the hybrid search of the same query, and with a floor (``min_relevance``, what a
context and the agent tools pass) every fact the lexical search alone would return above it is
among the hits, which then come most relevant first. Turning semantic search on adds facts
found by meaning; it never takes away one found by words (a fact without a vector, written by a
process that could not embed, is judged by its words alone).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..records import FACT_COLUMNS, Fact, Hit, fact_reader
from . import bound, common, lexical, plan, pruned, relevance
from .lexical import Ranking
from .plan import DocFreqs
from .query import Query

if TYPE_CHECKING:
    from .hybrid import VectorLeg

__all__ = ["DocFreqs", "Query", "Ranking", "run"]

_KEY = FACT_COLUMNS.index("key")  # in a ``lexical.best`` row
SHARED = True  # False: a hybrid search runs its two lexical searches apart (tests compare)


def run(
    conn,
    query: Query,
    *,
    ranking: Ranking,
    now: int,
    freqs: DocFreqs | None = None,
    vectors: VectorLeg | None = None,
    tagged: Callable[[list[Hit]], list[Hit]] | None = None,
) -> list[Hit]:
    """The query's hits, best first. Lexical only unless ``vectors`` (the file's vector leg, when
    it is on) is given and the query allows it; ``freqs`` remembers document frequencies between
    searches. ``tagged``: what gives hits' facts their tags (the Store's), for the hits that
    are not read with them (a lexical search without an explanation reads them in its
    statement); without it, facts carry no tags. Reads only: access tracking is the caller's."""
    if query.slots == ():
        return []
    if vectors is not None and query.semantic and query.text.strip():
        hits = _hybrid(conn, query, ranking, now, vectors, freqs)
        if hits is not None:
            return tagged(hits) if tagged else hits
    chosen = plan.plan(conn, query.terms, None, freqs) if query.terms else None
    hits = _lexical(conn, query, chosen, ranking, now, freqs, tags=tagged is not None)
    return tagged(hits) if tagged and query.explain else hits


def _hybrid(
    conn, query: Query, ranking: Ranking, now: int, vectors: VectorLeg, freqs
) -> list[Hit] | None:
    """The hybrid hits; None when the question has no vector here (the model failed: the
    search stays lexical). The question is embedded, and its candidates found, on a worker
    thread (``vectors.ask``) while this one runs the lexical leg; then the two are fused here.
    Both run what they ran in line, so the hits are the same (tests/test_hybrid_ask.py)."""
    from . import fusion, hybrid  # a lexical search needs none of it

    slots = list(query.slots) if query.slots else None
    question = vectors.ask(query.text, slots, fusion.DEPTH)
    if not question.running and question.result()[0] is None:
        return None
    chosen = plan.plan(conn, query.terms, plan.HYBRID_BUDGET, freqs) if query.terms else None
    # the search by words alone plans the same terms (the same snapshot) without a budget
    alone = plan.choose(list(chosen.every), chosen.facts) if chosen is not None else None
    if alone and alone != chosen and plan.shareable(alone):
        chosen = alone  # the leg runs the plan of the words alone: one statement for both
    shared = SHARED and chosen and chosen == alone and not query.explain
    scored: list = []
    total = 0.0
    if shared and chosen:
        # its two lexical searches (the hybrid leg's and the one by words alone that
        # ``monotone`` holds it to) run the same plan (no term dropped or capped, as for rare
        # words): their arms run once (``lexical.search_both``), with the hits two would give
        total = relevance.query_mass(chosen, query.terms, ranking)
        rows, scored = lexical.search_both(
            conn,
            chosen,
            ranking,
            slots=slots,
            depth=fusion.DEPTH,
            limit=query.limit,
            now=now,
            min_score=query.min_score,
            min_relevance=query.min_relevance,
            total=total,
            since=query.since,
            until=query.until,
            tags=query.tags,
        )
    else:
        rows = hybrid.by_words(conn, query, chosen, ranking, now)
    early, seqs = None, [row["seq"] for row in rows]
    if question.running:  # while the worker embeds: the lexical leg's keys' stems (remembered)
        for row in rows:
            relevance.key_stems(row["key"])
        if not shared and _needed(conn, query, alone, ranking, freqs):  # now, while it embeds
            question.prefetch(seqs)  # (result() would read them after)
            early = _lexical(conn, query, alone, ranking, now, freqs)
    blob, candidates = question.result(seqs)
    if blob is None:
        return None
    hits = hybrid.search(
        conn,
        query,
        chosen,
        blob,
        ranking=ranking,
        now=now,
        vectors=vectors,
        freqs=freqs,
        rows=rows,
        candidates=candidates,
        stored=question.stored,
    )
    if shared:
        return monotone(hits, _hits(conn, query, chosen, ranking, scored, total, freqs), query)
    if early is not None:  # (what the bound proves unchanged, monotone leaves unchanged)
        return monotone(hits, early, query)
    if not _unchanged(conn, query, alone, hits, ranking, freqs):
        hits = monotone(hits, _lexical(conn, query, alone, ranking, now, freqs), query)
    return hits


# A word in fewer than this share of the facts: the bound seldom proves a hybrid search's hits
# unchanged (a fact holding a specific word is relevant by its words alone), so the search by
# words alone runs while the worker embeds (docs/benchmarks.md, "Hybrid at 100k: the scan
# unshared, the words alone sooner"). 0: never early, not even when the bound cannot hold.
EARLY_RATE = 0.01


def _needed(conn, query: Query, alone, ranking: Ranking, freqs) -> bool:
    """Whether the search by words alone (plan ``alone``) is likely needed after the fusion,
    before the fusion has run: always when the bound cannot prove anything (``bound.tries``: a
    floor, an explanation, a CJK term, a transaction...), and when a word of the question is
    rare (``EARLY_RATE``); not for a question of common words alone, whose bound holds about
    half the time. A guess: the hits are the same either way, only when the search runs
    changes."""
    if not alone or not EARLY_RATE:
        return False
    if not bound.tries(conn, query, alone, ranking, common.postings_of(freqs)):
        return True
    return min(arm.df for arm in alone.arms) < EARLY_RATE * alone.facts


def _unchanged(conn, query: Query, alone, hits: list[Hit], ranking: Ranking, freqs) -> bool:
    """Whether the search by words alone provably leaves ``hits`` as they are (bound.py; with a
    floor never: ``monotone`` then orders the hits most relevant first, even with no lexical
    hit to add)."""
    return bound.unchanged(
        conn,
        query,
        alone,
        hits,
        ranking,
        lambda keys: _key_matches(conn, query, alone, ranking, freqs, keys),
        common.postings_of(freqs),
    )


def _lexical(
    conn,
    query: Query,
    chosen,
    ranking: Ranking,
    now: int,
    freqs: DocFreqs | None,
    tags: bool = False,
) -> list[Hit]:
    """The lexical hits; with ``tags`` (and no explanation), each fact with its tags."""
    if not chosen:
        return []
    slots = list(query.slots) if query.slots else None
    found = None
    # A common-word question: every posting of every word (outside a transaction: one that
    # wrote and rolls back could leave the index's structure record as it was before)
    if common.applies(chosen) and not conn.in_transaction:
        with plan.snapshot(conn):
            postings = common.postings_of(freqs)
            found = common.hits(conn, chosen, ranking, postings, slots, explain=query.explain)
        if found is not None:
            chosen = plan.Plan(chosen.every, chosen.facts, (), chosen.every)
    total = relevance.query_mass(chosen, query.terms, ranking)
    floor = query.min_relevance
    options: dict[str, Any] = {
        "slots": slots,
        "limit": query.limit,
        "now": now,
        "min_score": query.min_score,
        "min_relevance": floor,
        "total": total,
        "since": query.since,
        "until": query.until,
        "tags": query.tags,
        "rows": found,
    }
    if query.explain or not tags:
        if found is None and not query.explain and pruned.applies(conn, chosen, ranking):
            del options["rows"]  # bm25 for the facts that can make the top (pruned.py)
            postings, held = _pruning(freqs)
            rows = pruned.search(conn, chosen, ranking, postings, held_weights=held, **options)
        else:
            rows = lexical.search(conn, chosen, ranking, explain=query.explain, **options)
        return _hits(conn, query, chosen, ranking, rows, total, freqs)
    if found is None and pruned.applies(conn, chosen, ranking):
        del options["rows"]  # bm25 for the facts that can make the top, in ``best``'s form
        postings, held = _pruning(freqs)
        found_rows = pruned.search(
            conn, chosen, ranking, postings, best=True, held_weights=held, **options
        )
    else:
        found_rows = lexical.best(conn, chosen, ranking, **options)  # tags read in it, cheaper
    keys = _key_matches(conn, query, chosen, ranking, freqs, [row[_KEY] for row in found_rows])
    return _above(lexical.best_hits(found_rows, ranking, total, keys), floor)


def _pruning(freqs: DocFreqs | None):
    """What the pruned search keeps between searches (on ``freqs``): the words' postings and
    the facts' weights (weights.py: imported only by a search that prunes)."""
    from . import weights

    return common.postings_of(freqs), weights.of(freqs)


def _hits(
    conn, query: Query, chosen, ranking: Ranking, rows: list, total: float, freqs
) -> list[Hit]:
    """The lexical search's rows as hits, above the query's floor."""
    keys = _key_matches(conn, query, chosen, ranking, freqs, [row["key"] for row in rows])
    if query.explain:
        fact = fact_reader(rows[0].keys()) if rows else Fact.from_row
        hits = [
            lexical.to_hit(row, chosen, ranking, total, True, keys[row["key"]], fact(row))
            for row in rows
        ]
    else:
        hits = lexical.to_hits(rows, chosen, ranking, total, keys)
    return _above(hits, query.min_relevance)


def _key_matches(conn, query: Query, chosen, ranking: Ranking, freqs, keys: list[str]):
    """How well each of the hits' ``keys`` matches the query's words (relevance.key_matches)."""
    return relevance.key_matches(
        relevance.stems(query.terms),
        keys,
        lambda words: (freqs or plan.DocFreqs()).lookup(conn, words),
        ranking,
        chosen.facts,
    )


def _above(hits: list[Hit], floor: float | None) -> list[Hit]:
    return hits if floor is None else [hit for hit in hits if hit.relevance >= floor]


def monotone(hybrid_hits: list[Hit], lexical_hits: list[Hit], query: Query) -> list[Hit]:
    """The hybrid hits, each at least as relevant as the lexical search alone found it; with a
    floor, also every lexical hit the hybrid search left out, all most relevant first."""
    by_words = {hit.fact.id: hit for hit in lexical_hits}
    hits = []
    for hit in hybrid_hits:
        alone = by_words.pop(hit.fact.id, None)
        if alone is not None and alone.relevance > hit.relevance:
            parts = hit.explanation
            if parts is not None:
                parts = {
                    **parts,
                    "relevance": alone.relevance,
                    "relevance_from": (
                        f"{parts.get('relevance_from')}; lexical alone {alone.relevance:.4f} (kept)"
                    ),
                }
            hit = dataclasses.replace(hit, relevance=alone.relevance, explanation=parts)
        hits.append(hit)
    if query.min_relevance is None:
        return hits
    hits += by_words.values()  # above the floor by their words alone
    hits.sort(key=lambda hit: -hit.relevance)  # stable: fused order among equals
    return hits[: query.limit]
