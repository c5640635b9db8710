"""Relevance: one scale for every hit, whichever leg found it.

A hit's score orders the hits of one search; it does not say whether the best of them is any
good (a lexical score is around 10, a fused one between 0 and 1, and the semantic leg always has
nearest neighbours). ``Hit.relevance`` does: the estimated probability that the fact is relevant
to the query, from measures of the match that, but for one, do not depend on the other facts
(so a floor on it holds in a slot of three facts as in one of 100,000); the one, ``excess``, is
0 for an off-topic message, whose nearest neighbours are all alike, however many facts there are:

- coverage   = the share of the query's idf mass the fact matches (lexical.py's idf^1.5; a word
               no fact holds counts at df = 0, one dropped as too common counts 0). In a file
               of fewer than ``MIN_FACTS`` facts, idf is taken as if it held that many: document
               frequencies over a handful of facts say little about how specific a word is, and
               in a file of one fact a matched word would weigh a fifth of a missing one;
- matched    = how many of the query's terms the fact holds, counted up to 3 (one word in
               common is weak evidence however rare the word is: "continue", "cheers");
- key        = the share of the idf mass of the fact's key words (stemmed) that the query
               holds: agents put a fact's topic in its key (``language`` = ``Elixir``), and
               "What language do I prefer?" names it; a key word many facts share (``city`` in
               every ``friend.X.city``) weighs little beside a name;
- specific   = how specific the most specific query word the fact holds is in English at
               large (0 for the few hundred commonest words, 1 for a word outside the 10,000
               commonest, by the order of all-MiniLM-L6-v2's WordPiece vocabulary, which ships
               as ``data/common-words.txt.gz``): a message that shares only "morning" or
               "thanks" with a fact is small talk, one that shares only "FastAPI" or "LazyVim"
               mentions it, and within one memory both words can be equally rare;
- similarity = max(0, cosine) of the query's and the fact's embeddings (hybrid search only);
- excess     = similarity minus the cosine of the query's ``SPREAD_RANK``-th nearest fact
               (in a slot of fewer facts, ``TYPICAL_COSINE``), 0 when below: how far the fact stands out from what the memory typically gives
               this query, which lets a strong semantic match count on its own (hybrid only).

    relevance = σ(a + b × coverage + c × matched + d × similarity + k × key + e × excess
                  + s × specific)

with one set of constants for lexical search (d = e = 0) and one for hybrid search, fitted by
logistic regression (``benchmarks/fit_relevance.py``) on two data sets that weigh the same:
LoCoMo's development conversations (each person's observations a slot, the questions of
categories 1-4, the best 30 candidates of each slot; a fact is relevant when the turns it cites
hold the question's evidence) and agent memories (``benchmarks/agent_memory.py``: standing
facts under telling keys, keyed and paraphrased questions, 5 to 5,000 facts; only the dev half
of its families). The script reports them leaving one conversation, and one family, out; the
test half of the families is never fitted on (docs/benchmarks.md). The hybrid constants are
those of the default embedding model (all-MiniLM-L6-v2): another model's cosines are on another
scale; refit with the script and pass ``Ranking(calibration=...)``. Confidence, feedback and age
stay out: they order the hits, they do not make a fact more or less about the query.

Relevant facts are rare among a search's candidates (2 to 3 in 100 on LoCoMo), so a useful
floor is low: ``DEFAULT_FLOOR`` keeps what is at least that likely to be relevant.
"""

from __future__ import annotations

import functools
import gzip
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from . import terms as text_terms
from .stemmer import stem

if TYPE_CHECKING:
    from .lexical import Ranking
    from .plan import Plan
    from .terms import Terms

# (a, b, c, d, k, e, s): intercept, coverage, matched, similarity, key match, excess similarity,
# specificity; fitted by benchmarks/fit_relevance.py.
LEXICAL = (-8.64, 1.641, 1.561, 0.0, 5.607, 0.0, 1.764)
HYBRID = (-9.005, 2.105, 0.339, 6.448, 0.81, 9.561, 0.0)
MATCHED_CAP = 3
MIN_FACTS = 100  # below this many facts, coverage reads idf as if there were this many
SPREAD_RANK = 10  # excess: similarity above the cosine of the query's 10th nearest fact
TYPICAL_COSINE = 0.15  # of the default model between unrelated texts: the yardstick of small slots
# The floor a context and the agent tools apply unless a slot's policy or the call says
# otherwise (chosen by the same script: the highest that meets its targets on what it fitted).
DEFAULT_FLOOR = 0.003
# What the hybrid estimate alone lets in must clear the floor times this; what the words alone
# find above the floor stays in whatever it is (search.monotone). Above 1 it keeps more of the
# nearest facts of small talk and general questions out ("Who painted the Mona Lisa?" and every
# painting a person made) and costs answers found by meaning; the same script chooses it, as the
# highest that costs nothing on what it fits: 1 (docs/benchmarks.md has the trade-off).
SEMANTIC_FLOOR = 1.0
# When the words alone find nothing above the floor (small talk, a general question, a
# paraphrase), a hit there by meaning alone must also stand out from what the memory typically
# gives the message: its excess (similarity above the 10th nearest fact's) at least this. A
# message near many facts at once ("Who painted the Mona Lisa?" and every painting a person
# made) is about none of them in particular; a paraphrase finds its fact well above the rest.
# The same script chooses it, as the highest that costs nothing on what it fits.
SEMANTIC_MARGIN = 0.15


@dataclass(frozen=True)
class Calibration:
    """The constants of the formula, per leg (``Ranking(calibration=...)`` swaps them)."""

    lexical: tuple[float, ...] = LEXICAL
    hybrid: tuple[float, ...] = HYBRID
    semantic_floor: float = SEMANTIC_FLOOR  # a hybrid estimate must clear floor x this
    # the excess a hit by meaning alone needs when the words find nothing above the floor
    semantic_margin: float = SEMANTIC_MARGIN

    def __post_init__(self):
        for name in ("semantic_floor", "semantic_margin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise InvalidInput(f"{name} must be a number >= 0, not {value!r}")

    def hybrid_floor(self, floor: float) -> float:
        """The floor a hybrid estimate must clear when a search asks for ``floor`` (a lexical
        hit clears ``floor`` itself: search.monotone adds it back)."""
        return min(1.0, floor * self.semantic_floor)

    def relevance(
        self,
        coverage: float,
        matched: int,
        similarity: float | None = None,
        key: float = 0.0,
        excess: float = 0.0,
        specific: float = 0.0,
    ) -> float:
        """The relevance of a lexical hit (``similarity`` None) or a hybrid one (``key``: the
        share of the fact's key words the query holds; ``excess``: how far its similarity
        stands above the slot's typical one for this query; ``specific``: the specificity of
        the most specific query word it holds)."""
        a, b, c, d, k, e, s = _seven(self.lexical if similarity is None else self.hybrid)
        x = a + b * coverage + c * min(matched, MATCHED_CAP) + d * (similarity or 0.0)
        return sigmoid(x + k * key + e * excess + s * specific)

    def lexical_relevance(self) -> Callable[[float, int, float, float], float]:
        """``relevance(coverage, matched, key=key, specific=specific)`` of a lexical hit, the
        constants read once (a search makes one per row): the same value to the last bit."""
        a, b, c, d, k, e, s = _seven(self.lexical)

        def lexical(coverage: float, matched: int, key: float, specific: float) -> float:
            x = a + b * coverage + c * min(matched, MATCHED_CAP) + d * 0.0
            return sigmoid(x + k * key + e * 0.0 + s * specific)

        return lexical

    def lexical_monotone(self) -> bool:
        """Whether a lexical hit's relevance never falls as its coverage, matched terms, key
        match or specificity grow (their constants all >= 0): what search.bound's proof needs."""
        _, b, c, _, k, _, s = _seven(self.lexical)
        return min(b, c, k, s) >= 0

    def lexical_sql(self, relevance: float, params: dict) -> str:
        """A SQL test, over a lexical row's ``mass`` and ``matched`` and the query's mass
        ``:total``, that holds when the row's relevance is at least ``relevance`` (a hair
        below: the caller's exact test decides the edge)."""
        a, b, c, _, k, _, s = _seven(self.lexical)
        a += max(0.0, k)  # a bound: the key match (at most 1) is read after, in Python
        if relevance <= 0:
            return "1"
        if relevance >= 1:
            return "0"
        params.update(ra=a, rb=b, rc=c, rs=s, rlogit=math.log(relevance / (1 - relevance)) - 1e-9)
        return (
            f":ra + :rb * min(1.0, mass / :total) + :rc * min(matched, {MATCHED_CAP})"
            " + :rs * specific >= :rlogit"
        )


def _seven(constants: tuple[float, ...]) -> tuple[float, ...]:
    """(a, b, c, d, k, e, s), zeros for what an older, shorter calibration leaves out."""
    return (*constants, 0.0, 0.0, 0.0)[:7]


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


_KEY_SPLIT = re.compile(r"[._/:#\-\s]+")
# Keys a process remembers the stems of: a search stems every candidate's key (128 of them in a
# hybrid search), and the same keys come back search after search; each entry is a key and a
# few words (a few hundred bytes), so this bounds the memo to a few MB.
KEY_STEMS_CACHED = 8192


@functools.lru_cache(maxsize=KEY_STEMS_CACHED)
def key_stems(key: str) -> frozenset[str]:
    """The stems of a key's words (``friend.marta.city`` -> marta, citi), remembered for the
    last ``KEY_STEMS_CACHED`` keys (``key_stems.__wrapped__`` computes them afresh)."""
    return text_terms.stems(_KEY_SPLIT.sub(" ", key))


def key_matches(
    query_stems: frozenset[str],
    keys: Iterable[str],
    lookup: Callable[[set[str]], dict[str, int]],
    ranking: Ranking,
    facts: int,
) -> dict[str, float]:
    """key -> the share of its words' idf mass that the query holds (``lookup``: document
    frequencies of stems). A word many facts hold (``status`` in every ``project.X.status``)
    weighs little beside a name: "Which city does Marta live in?" matches most of
    ``friend.marta.city`` and little of ``friend.jonas.city``."""
    words = {key: key_stems(key) for key in set(keys)}
    every: set[str] = set().union(*words.values()) if words else set()
    asked = every & query_stems
    if not asked:
        return dict.fromkeys(words, 0.0)
    found = dict.fromkeys(words, 0.0)  # a key with no word of the query's matches nothing
    matching = {key: held for key, held in words.items() if not held.isdisjoint(asked)}
    every = set().union(*matching.values())
    dfs = lookup(every)
    weights = {word: weight(ranking, facts, dfs.get(word, 0)) for word in every}
    for key, held in matching.items():
        total = sum(weights[word] for word in held)
        found[key] = sum(weights[word] for word in held & asked) / total if total > 0 else 0.0
    return found


def stems(terms: Terms) -> frozenset[str]:
    return frozenset(stem(word) for word in terms.words)


def reference(cosines: list[float]) -> float | None:
    """What the memory typically gives the query: the cosine of its ``SPREAD_RANK``-th nearest
    fact; in a slot of fewer facts, ``TYPICAL_COSINE`` (a few facts are no yardstick: one is
    its own, and two unrelated ones would let any cosine above theirs stand out)."""
    if not cosines:
        return None
    if len(cosines) >= SPREAD_RANK:
        return cosines[SPREAD_RANK - 1]
    return TYPICAL_COSINE


def excess(similarity: float, reference: float | None) -> float:
    """How far a fact's similarity stands above the reference (the cosine of the semantic
    leg's ``fusion.SPREAD_RANK``-th neighbour: what the slot typically gives this query)."""
    return max(0.0, similarity - reference) if reference is not None else 0.0


PACKAGE = Path(__file__).parent.parent  # slotmem/
COMMON_WORDS = "data/common-words.txt.gz"
GENERAL = 300  # a word among the commonest this many is not specific at all
SPECIFIC = 10_000  # the list's length: a word beyond it is as specific as a name


@functools.cache
def _ranks() -> dict[str, int]:
    # the package's own file (not importlib.resources, whose import costs a cold start more)
    words = gzip.decompress((PACKAGE / COMMON_WORDS).read_bytes()).decode()
    return {word: rank for rank, word in enumerate(words.split(), 1)}


@functools.lru_cache(maxsize=4096)
def specificity(word: str) -> float:
    """0 for one of English's ``GENERAL`` commonest words, rising with the log of its rank to
    1 at ``SPECIFIC`` and beyond (a word not listed: a name, a product, a word of another
    language or script). The word, its stem and its singular are looked up; the commoner
    counts."""
    ranks = _ranks()
    forms = (word, stem(word), word.removesuffix("s"))
    rank = min(ranks.get(form, SPECIFIC) for form in forms)
    return min(1.0, max(0.0, math.log(rank / GENERAL) / math.log(SPECIFIC / GENERAL)))


def coverage(mass: float | None, total: float) -> float:
    return min(1.0, (mass or 0.0) / total) if total > 0 else 0.0
