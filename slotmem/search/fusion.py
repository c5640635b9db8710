"""Hybrid ranking: the lexical and semantic legs fused into one order, each weighed by what it
knows about this query.

For a query and each candidate fact f (the best ``DEPTH`` of either leg):

    fused(f) = w(f) × ((1 - β) × coverage(f) + β × similarity(f))

- coverage(f)   = the share of the query's idf mass that f matches: Σ idf(t) over the query
                  terms f matches / Σ idf(t) over all the query's terms, with the lexical leg's
                  own idf (lexical.py). A query word no fact holds counts at df = 0, the highest
                  idf: the question asks for something no fact says in its words, so a fact that
                  matches the question's other, common words covers little of it. Terms left out
                  as too common count 0. A fact the lexical leg did not return has coverage 0.
- similarity(f) = max(0, cosine(query, f)), absolute: not rescaled per query.
- β             = g / (g + G0), the semantic leg's weight for this query, where g is the cosine
                  of its best candidate minus that of its 10th: how far its best stands out.
                  β = 1 when the lexical leg has nothing, 0 when the semantic leg has nothing.
- w(f)          = confidence × feedback × recency, as in both legs' own scores.

The bracket is in [0, 1], so fused is in [0, w(f)]: at most 1 for a fact of confidence 1
without feedback. Each hit's explanation carries ``lexical_part`` and ``semantic_part`` (which
sum to ``fused``), ``coverage``, ``similarity`` and ``semantic_weight`` (β).

One tuned constant, G0 (the spread at which the legs weigh the same), chosen on LoCoMo leaving
one conversation out at a time. Why these parts: coverage is absolute (1 = every term
matched), so a fact matching one common word of a long question gets little whatever the other
facts score, where min-max scaling gave the best lexical hit 1 however weak it was; counting
the words no fact holds keeps common-word matches from burying paraphrases; cosine is absolute
as well, and what varies between queries is how much the semantic leg knows, which its spread
g measures. A fixed β trades one kind of question for the other, and equal-weight reciprocal
rank fusion throws away how far ahead a leg's best candidate is. docs/semantic.md has the
alternatives and docs/benchmarks.md their figures.
"""

from __future__ import annotations

from typing import NamedTuple

G0 = 0.11  # the semantic spread g at which the two legs weigh the same (chosen leave-one-out)
SPREAD_RANK = 10  # g = best cosine minus the cosine at this rank
# What `slotmem search --explain` shows of a hybrid hit (JSON output has the whole explanation).
EXPLAIN_COLUMNS = [
    "relevance_from",
    "similarity",
    "semantic_weight",
    "lexical_rank",
    "semantic_rank",
    "confidence",
    "feedback",
    "recency",
    "parts",
]
DEPTH = 64  # candidates taken from each leg (more found nothing more on LoCoMo, fewer lost)


class Fused(NamedTuple):  # a tuple: a search makes one per candidate (a frozen dataclass, 3x)
    seq: int
    score: float
    coverage: float  # the lexical part before weights, in [0, 1]
    similarity: float  # the semantic part before weights, max(0, cosine), in [0, 1]
    semantic_weight: float  # β of this query
    lexical_part: float  # w × (1 - β) × coverage
    semantic_part: float  # w × β × similarity
    lexical_rank: int | None
    semantic_rank: int | None


def semantic_weight(cosines) -> float:
    """β = g / (g + G0), g = the best cosine minus the ``SPREAD_RANK``-th best (or the last)."""
    ranked = sorted(cosines, reverse=True)
    if not ranked:
        return 0.0
    spread = ranked[0] - ranked[min(SPREAD_RANK, len(ranked)) - 1]
    return spread / (spread + G0) if spread > 0 else 0.0


def fuse(
    coverage: dict[int, float],
    cosine: dict[int, float],
    weight: dict[int, float] | None = None,
    *,
    semantic_ranks: dict[int, int] | None = None,
) -> list[Fused]:
    """The candidates, best first.

    ``coverage``: fact seq -> coverage, for the lexical leg's candidates, in its order.
    ``cosine``: seq -> cosine similarity, for every candidate that has a vector.
    ``weight``: seq -> confidence × feedback × recency (1 when absent).
    ``semantic_ranks``: seq -> rank in the semantic leg (default: ``cosine`` in its order).
    """
    lexical_rank = {seq: rank for rank, seq in enumerate(coverage, 1)}
    semantic_rank = (
        semantic_ranks
        if semantic_ranks is not None
        else {seq: rank for rank, seq in enumerate(cosine, 1)}
    )
    if not coverage:
        beta = 1.0
    elif not semantic_rank:
        beta = 0.0
    else:
        beta = semantic_weight(cosine.values())
    weight = weight or {}
    fused = []
    for seq in dict.fromkeys([*coverage, *semantic_rank, *cosine]):
        w = weight.get(seq, 1.0)
        cov = min(1.0, max(0.0, coverage.get(seq, 0.0)))
        sim = min(1.0, max(0.0, cosine.get(seq, 0.0)))
        lexical_part, semantic_part = w * (1 - beta) * cov, w * beta * sim
        fused.append(
            Fused(
                seq,
                lexical_part + semantic_part,
                cov,
                sim,
                beta,
                lexical_part,
                semantic_part,
                lexical_rank.get(seq),
                semantic_rank.get(seq),
            )
        )
    never = float("inf")
    fused.sort(key=lambda f: (-f.score, f.lexical_rank or never, f.semantic_rank or never))
    return fused
