"""Relevance: one scale for every hit, whichever leg found it.

A hit's score orders the hits of one search; it does not say whether the best of them is any
good (a lexical score is around 10, a fused one between 0 and 1, and the semantic leg always has
nearest neighbours). ``Hit.relevance`` does: the estimated probability that the fact is relevant
to the query, from measures of the match that do not depend on the other facts (so a floor on
it holds in a slot of three facts as in one of 100,000):

- coverage   = the share of the query's idf mass the fact matches (lexical.py's idf^1.5; a word
               no fact holds counts at df = 0, one dropped as too common counts 0). In a file
               of fewer than ``MIN_FACTS`` facts, idf is taken as if it held that many: document
               frequencies over a handful of facts say little about how specific a word is, and
               in a file of one fact a matched word would weigh a fifth of a missing one;
- matched    = how many of the query's terms the fact holds, counted up to 3 (one word in
               common is weak evidence however rare the word is: "continue", "cheers");
- similarity = max(0, cosine) of the query's and the fact's embeddings (hybrid search only).

    relevance = σ(a + b × coverage + c × matched + d × similarity)        σ(x) = 1 / (1 + e^-x)

with one set of constants for lexical search (d = 0) and one for hybrid search, fitted by
logistic regression on LoCoMo's development conversations (each person's observations a slot,
the questions of categories 1-4, the best 30 candidates of each slot; a fact is relevant when the
turns it cites hold the question's evidence) by ``benchmarks/fit_relevance.py``, which reports
them leaving one conversation out. The hybrid constants are those of the default embedding model
(all-MiniLM-L6-v2): another model's cosines are on another scale; refit with the script and
pass ``Ranking(calibration=...)``. Confidence, feedback and age stay out: they order the hits,
they do not make a fact more or less about the query.

Relevant facts are rare among a search's candidates (2 to 3 in 100 on LoCoMo), so a useful
floor is low: ``DEFAULT_FLOOR`` keeps what is at least that likely to be relevant.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .lexical import Ranking
    from .plan import Plan
    from .terms import Terms

# (a, b, c, d), fitted by benchmarks/fit_relevance.py on the five development conversations.
LEXICAL = (-7.627, 4.004, 1.372, 0.0)
HYBRID = (-9.746, 3.242, 0.121, 8.692)
MATCHED_CAP = 3
MIN_FACTS = 100  # below this many facts, coverage reads idf as if there were this many
# The floor a context and the agent tools apply unless a slot's policy or the call says
# otherwise (chosen by the same script, leaving one conversation out).
DEFAULT_FLOOR = 0.006


@dataclass(frozen=True)
class Calibration:
    """The constants of the formula, per leg (``Ranking(calibration=...)`` swaps them)."""

    lexical: tuple[float, float, float, float] = LEXICAL
    hybrid: tuple[float, float, float, float] = HYBRID

    def relevance(self, coverage: float, matched: int, similarity: float | None = None) -> float:
        """The relevance of a lexical hit (``similarity`` None) or a hybrid one."""
        a, b, c, d = self.lexical if similarity is None else self.hybrid
        return sigmoid(a + b * coverage + c * min(matched, MATCHED_CAP) + d * (similarity or 0.0))

    def lexical_sql(self, relevance: float, params: dict) -> str:
        """A SQL test, over a lexical row's ``mass`` and ``matched`` and the query's mass
        ``:total``, that holds when the row's relevance is at least ``relevance`` (a hair
        below: the caller's exact test decides the edge)."""
        a, b, c, _ = self.lexical
        if relevance <= 0:
            return "1"
        if relevance >= 1:
            return "0"
        params.update(ra=a, rb=b, rc=c, rlogit=math.log(relevance / (1 - relevance)) - 1e-9)
        return f":ra + :rb * min(1.0, mass / :total) + :rc * min(matched, {MATCHED_CAP}) >= :rlogit"


def sigmoid(x: float) -> float:
    """σ(x) = 1 / (1 + e^-x), taken as 0 below -60 (long before e^-x overflows)."""
    return 1.0 / (1.0 + math.exp(-x)) if x > -60 else 0.0


def query_mass(plan: Plan | None, terms: Terms, ranking: Ranking) -> float:
    """The idf mass a fact would match if it held every word of the query: the plan's terms,
    and each term no fact holds at df = 0 (the plan's too-common ones count 0)."""
    if plan is None:
        return 0.0
    absent = len(terms.words) + len(terms.grams) - len(plan.arms) - len(plan.dropped)
    found = sum(weight(ranking, plan.facts, arm.df) for arm in plan.arms)
    return found + max(0, absent) * weight(ranking, plan.facts, 0)


def weight(ranking: Ranking, facts: int, df: int) -> float:
    """A term's share of a query's idf mass (lexical.py's idf^1.5, over at least MIN_FACTS)."""
    return ranking.idf(max(facts, MIN_FACTS), df)


def coverage(mass: float | None, total: float) -> float:
    return min(1.0, (mass or 0.0) / total) if total > 0 else 0.0
