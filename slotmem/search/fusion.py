"""Hybrid ranking: the lexical and semantic legs fused into one order, each weighed by what it
knows about this query.

For a query and each candidate fact f (the best ``DEPTH`` of either leg):

    fused(f) = w(f) × ((1 - β) × coverage(f) + β × similarity(f))

- coverage(f)   = the share of the query's idf mass that f matches: Σ idf(t) over the query
                  terms f matches / Σ idf(t) over all the query's terms, with the lexical leg's
                  own idf (ranking.py). A query word no fact holds counts at df = 0, the highest
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

One tuned constant, G0 = 0.11 (the spread at which the legs weigh the same). Measured with
all-MiniLM-L6-v2 int8 (benchmarks/locomo.py --semantic, benchmarks/paraphrase.py):

    LoCoMo dev (760 q.)   R@1   R@5   R@10  MRR    paraphrase (46)   R@1   R@5   MRR
    lexical              .350  .561  .640  .487                      .109  .130  .120
    semantic alone       .172  .406  .491  .302                      .565  .957  .732
    min-max, 0.6/0.4     .354  .593  .683  .508                      .283  .935  .534
    this                 .365  .605  .699  .525                      .500  .935  .666

G0 was chosen on LoCoMo alone, leaving one conversation out at a time: every fold chose
0.11 or 0.12, and the held-out figures are R@10 .696, MRR .524. The paraphrase probe only
checked it.

Why these parts (alternatives measured the same way, held-out LoCoMo R@10 / MRR, paraphrase
MRR). The lexical part is coverage, not the bm25-like score: with the same β, the score scaled
min-max gave .673 / .503 / .623, scaled by the query's attainable maximum .679 / .501 / .624,
tf-weighted coverage .684 / .491 / .645, the share of terms matched (no idf) .664 / .502 / .589.
Coverage is absolute (1 = every term matched), so a fact matching one common word of a long
question gets little whatever the other facts score, where min-max gave the best lexical hit 1
however weak it was. Counting the words no fact holds costs LoCoMo little (without them:
.696 / .527) and keeps common-word matches from burying the paraphrases (without: .524).
Cosine is absolute as well; what varies between queries is how much the semantic leg knows,
and its spread g measures that: it averages .25 on the paraphrase probe, where that leg is
right, and .13 on LoCoMo, where it is weak. A fixed β trades one benchmark for the other
(β = 0.5: .689 / .522 / .600; β = 0.8: .635 / .467 / .701); a lexical weight set per query by
the best lexical hit's coverage helped the paraphrases but lost LoCoMo's partial matches
(.666 / .496 / .669). Equal-weight reciprocal rank fusion lost to the lexical leg alone on
LoCoMo: ranks throw away how far ahead a leg's best candidate is.
"""

from __future__ import annotations

from dataclasses import dataclass

G0 = 0.11  # the semantic spread g at which the two legs weigh the same (LoCoMo dev, see above)
SPREAD_RANK = 10  # g = best cosine minus the cosine at this rank
# What `slotmem search --explain` shows of a hybrid hit (JSON output has the whole explanation).
EXPLAIN_COLUMNS = [
    "coverage",
    "similarity",
    "semantic_weight",
    "lexical_rank",
    "semantic_rank",
    "confidence",
    "feedback",
    "recency",
    "parts",
]
DEPTH = 64  # candidates taken from each leg (100 measured the same on LoCoMo, 40 less)


@dataclass(frozen=True)
class Fused:
    seq: int
    score: float
    coverage: float  # the lexical part before weights, in [0, 1]
    similarity: float  # the semantic part before weights, max(0, cosine), in [0, 1]
    semantic_weight: float  # β of this query
    lexical_part: float  # w × (1 - β) × coverage
    semantic_part: float  # w × β × similarity
    lexical_rank: int | None
    semantic_rank: int | None


def semantic_weight(cosines, *, g0: float = G0) -> float:
    """β = g / (g + g0), g = the best cosine minus the ``SPREAD_RANK``-th best (or the last)."""
    ranked = sorted(cosines, reverse=True)
    if not ranked:
        return 0.0
    spread = ranked[0] - ranked[min(SPREAD_RANK, len(ranked)) - 1]
    return spread / (spread + g0) if spread > 0 else 0.0


def fuse(
    coverage: dict[int, float],
    cosine: dict[int, float],
    weight: dict[int, float] | None = None,
    *,
    semantic_ranks: dict[int, int] | None = None,
    g0: float = G0,
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
        beta = semantic_weight(cosine.values(), g0=g0)
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
