"""When a hybrid search can do without its search by words alone: a bound, proven per search.

A hybrid search holds its hits to the search by words alone (``search.monotone``): without a
floor, a hybrid hit that the words alone also return gets the larger of its two relevances;
nothing else changes. A lexical hit's relevance does not read its bm25 score, only which of
the plan's terms the fact holds (their idf mass, how many, the most specific) and its key
(``relevance.Calibration.relevance``, ``lexical.to_hits``). So when, for every hybrid hit, the
highest relevance the words alone could give it (every term of the question that it holds
counted, against the smallest mass the query could be measured by) is at most the relevance the
hybrid search gave it, ``monotone`` returns the hybrid hits as they are, whichever facts the
words alone return and in whatever order: the search by words alone (bm25 over up to 8,000
postings, or over every posting in ``common.py``; most of a common-word or sentence question's
time) need not run.

Which terms a hit holds is read from the words' postings when they are in memory already
(``common.Postings``, which the common-word search fills); a word whose postings are not is taken
as held by every hit (still a bound), so the bound reads no postings: reading them cost a
sentence question 0.6 ms more when the bound then failed (most do), 0.2 ms this way.

Anything the bound cannot be sure of runs the search by words alone as before: a floor (lexical
hits above it join the hits, and all come most relevant first), an explanation (it names the
kept relevance), a CJK term, a transaction (postings in memory may not see its writes), postings
that do not fit, numpy missing, a calibration whose lexical constants are not all non-negative
(the relevance would not grow with what a fact holds).
"""

from __future__ import annotations

from ..records import Hit
from . import common, relevance
from .lexical import Ranking
from .plan import WORDS, Plan
from .query import Query

ENABLED = True  # False: every hybrid search runs its search by words alone (tests compare)
SLACK = 1e-9  # the bound's margin over float rounding (SQL and Python sum the mass apart)


def tries(conn, query: Query, alone: Plan, ranking: Ranking, postings: common.Postings) -> bool:
    """Whether ``unchanged`` can prove anything of a search whose words alone have the plan
    ``alone`` (some term): False when it would say False whatever the hits (``search._needed``
    then runs the search by words alone while the question is embedded)."""
    if not ENABLED or query.min_relevance is not None or query.explain:
        return False
    if not ranking.calibration.lexical_monotone() or conn.in_transaction or not common.available():
        return False
    arms = alone.every or alone.arms
    return all(arm.table == WORDS for arm in arms) and common.fits(arms, postings.max_bytes)


def unchanged(
    conn,
    query: Query,
    alone: Plan | None,
    hits: list[Hit],
    ranking: Ranking,
    keys,
    postings: common.Postings,
) -> bool:
    """Whether ``search.monotone(hits, the search by words alone with plan ``alone``, query)``
    is ``hits`` itself, proven without running that search (False: not proven). ``keys``: the
    key match of each key (``relevance.key_matches``'s), called with the hits' keys;
    ``postings``: the words' postings in memory (only those already there are read)."""
    if not ENABLED or query.min_relevance is not None or query.explain:
        return False
    if not hits or not alone:
        return True  # no hits to raise, or the words alone find nothing (no term, or none held)
    if not tries(conn, query, alone, ranking, postings):
        return False
    calibration = ranking.calibration
    arms = alone.every or alone.arms
    np = common.numpy()
    ids = [hit.fact.id for hit in hits]
    marks = ", ".join("?" * len(ids))
    seq_of = dict(conn.execute(f"SELECT id, seq FROM memory_facts WHERE id IN ({marks})", ids))
    if len(seq_of) != len(set(ids)):
        return False  # a hit's fact went meanwhile (another process): not proven
    seqs = np.array([seq_of[i] for i in ids], dtype=np.int64)
    state = common.structure(conn)
    held = np.zeros(len(hits), dtype=np.int64)
    mass = np.zeros(len(hits))
    specific = np.zeros(len(hits))
    for arm in arms:
        postings_of = postings.cached(arm.match, state)
        if postings_of is None:  # not in memory: taken as held by every hit (a bound still)
            found = np.ones(len(hits), dtype=bool)
        else:
            where = np.searchsorted(postings_of, seqs)
            found = where < len(postings_of)
            found[found] = postings_of[where[found]] == seqs[found]
        held += found
        mass += found * relevance.weight(ranking, alone.facts, arm.df)
        specific = np.maximum(specific, found * relevance.specificity(arm.term))
    total = relevance.query_mass(alone, query.terms, ranking)  # the smaller of the two masses
    matches = keys([hit.fact.key for hit in hits])
    likely = calibration.lexical_relevance()
    for i, hit in enumerate(hits):
        if not held[i]:
            continue  # holds none of the terms: the words alone do not return it
        coverage = min(1.0, float(mass[i]) * (1 + SLACK) / total) if total > 0 else 0.0
        most = likely(coverage, int(held[i]), matches[hit.fact.key], float(specific[i]))
        if most + SLACK > hit.relevance:
            return False
    return True
