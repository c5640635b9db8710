"""The search by words alone with bm25 run for the facts that can still make the top, not all.

bm25 on the ``detail=none`` word index re-reads and re-tokenizes every fact it scores: a
sentence question's search by words alone (all its words' postings, a few thousand at 100k
facts) spent most of its time there (docs/benchmarks.md, "bm25 for the facts that can make the
top"). Its rows do not need bm25 for every fact, only the certainty that the facts left unscored
cannot rank among the ``limit`` best, MaxScore style:

1. **Bounds.** Which of the plan's words each fact holds comes from the words' postings in
   memory (``common.Postings``, ``held``). A matched word adds at most
   ``idf(t)^1.5 × (k1 + 1) + coordination`` to a fact's match (bm25's term-frequency part is
   below ``k1 + 1`` whatever the counts and the length), so each fact has an upper bound of its
   match; its score is that match times confidence (at most 1), feedback (at most
   ``WEIGHT_MAX``) and recency (at most 1).
2. **First scores.** The ``FIRST`` × limit facts of the highest bounds run through
   ``lexical.py``'s own statement with the arms kept to them (``Ranking.sql``'s ``only``): the
   statement is the same, so is each row it scores. Its last row's score is a floor the final
   top's last score cannot fall below.
3. **Threats.** The other facts whose bound, times their own weight read from their rows (and
   passing the same expiry, window and tag tests), reaches that floor: when there are none, the
   first rows are the answer; else the statement runs once more over the first facts and these,
   and its rows are the answer. Every fact left out scores below the floor, so below the
   ``limit`` rows returned.

When the first facts give fewer than ``limit`` rows (a floor on score or relevance, few facts
in the window), or when the bound looks too loose to leave out more than ``1 - MOST`` of the
facts (guessed before the first run from the facts' presence scores, after it from its floor and
the weight of its rows: a guess, the rows are the same either way), the statement runs over
every posting, as before. The postings, the weights and the rows are read in one snapshot (a
read transaction); the plan (N and the words' dfs, hence the idf the bounds use) is read just
before it, so a write landing between the two can raise bm25's idf above the bounds' and leave
out a fact the full statement would rank (not handled: a window of a few milliseconds, and the
rows are still a ranking of the file as it was or is).
It serves both searches by words: a hybrid search's search by words alone (``lexical.search``'s
rows) and a lexical search (``lexical.best``'s, its hits' tags read in the statement: the same
statement in a cheaper form, so the same rows), which spent most of a sentence question's time
over every posting (docs/benchmarks.md, "Sentences by words alone, cheaper").
Not used (the statement runs as before): a plan with a capped or dropped word or a CJK term
(``common.py``'s case), presence scoring, negative weights or coordination in the ranking, a
transaction, postings that do not fit, numpy missing, or fewer than ``MIN_POSTINGS`` postings.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from . import common, lexical
from . import plan as planning
from .lexical import FEEDBACK_FLOOR, FEEDBACK_STEP, Ranking

if TYPE_CHECKING:
    from .weights import Weights

ENABLED = True  # False: the statement scores every posting (tests compare)
FIRST = 3  # facts scored first, per row asked
MOST = 0.6  # more threats than this share of the facts: the plain statement costs less
MIN_POSTINGS = 1_000  # fewer: the whole statement costs little more than the bounds
GUESSED = 10  # words: more, and the guess from dfs alone (``_loose``) is not made (2^n sets)
MARGIN = 1e-6  # relative slack on each bound (SQL and numpy round apart, by 1e-15 or so)
SCALE = 1024  # a bound's fraction kept in _threats' integers (rounded up)
LARGEST = 2**31  # seqs and scaled bounds must be below it to share an integer (_threats)
WEIGHT_MAX = max(FEEDBACK_FLOOR, 1 + FEEDBACK_STEP * 3)  # feedback at quality 3 (its CHECK)


def applies(conn, chosen: planning.Plan | None, ranking: Ranking) -> bool:
    """Whether ``search`` can run this plan (see the module's docstring)."""
    if not ENABLED or not chosen or chosen.dropped or conn.in_transaction:
        return False
    if any(arm.cap is not None or arm.table != planning.WORDS for arm in chosen.arms):
        return False
    if ranking.presence or min(ranking.coordination, ranking.key_weight, ranking.value_weight) < 0:
        return False  # nothing to prune, or a part that could lower the match
    if ranking.half_life_days is not None and ranking.half_life_days < 0:
        return False  # recency above 1
    if sum(arm.df for arm in chosen.arms) < MIN_POSTINGS:
        return False
    return common.available() and common.fits(chosen.arms)


def bounds(ranking: Ranking, chosen: planning.Plan):
    """The upper bound of a fact's match by the arms it holds: entry ``bits`` (bit i set: it
    holds ``arms[i]``) is the sum over those arms of ``idf^1.5 × (k1 + 1) + coordination``, a
    little over (``MARGIN``)."""
    weights = [
        ranking.idf(chosen.facts, arm.df) * (common.K1 + 1) + ranking.coordination
        for arm in chosen.arms
    ]
    return common.by_bits(weights) * (1 + MARGIN)


def search(
    conn,
    chosen: planning.Plan,
    ranking: Ranking,
    postings: common.Postings,
    best: bool = False,
    held_weights: Weights | None = None,
    **options,
) -> list:
    """``lexical.search(conn, chosen, ranking, **options)``'s rows (the same rows, scores and
    order), with bm25 run for the facts that can make them (``applies`` first); with ``best``,
    ``lexical.best``'s rows (the tagged lexical search's cheaper statement) the same way.
    ``held_weights``: the facts' weights in memory (weights.py), which decide the threats when
    they can."""
    np = common.numpy()
    limit, slots = options["limit"], options["slots"]
    run = functools.partial(lexical.best if best else lexical.search, conn, chosen, ranking)
    now = options["now"]
    at: int | str = lexical.BEST_SCORE if best else "score"  # a row's score

    def score(row) -> float:
        return row[at]

    def weight(row) -> float:
        if best:
            return lexical.best_weight(row, ranking, now)
        return row["confidence"] * row["feedback"] * row["recency"]

    if _loose(ranking, chosen, limit):
        return run(**options)
    with planning.snapshot(conn):
        found = held(conn, chosen.arms, postings, slots)
        if found is None or not len(found[0]):
            return run(**options)
        seqs, bits = found
        bound = bounds(ranking, chosen)[bits]
        order = np.argsort(-bound, kind="stable")
        seqs, bound = seqs[order], bound[order]
        first = FIRST * limit
        if len(seqs) <= first or seqs.max() >= LARGEST or bound[0] * SCALE >= LARGEST:
            return run(**options)
        # a loose bound (bm25 for most facts anyway: the plain statement costs less), guessed
        # with each fact's score as if each word were in it once at the average length (the
        # presence score): a guess, either way the rows are the same
        likely = np.sort(common.presence(ranking, chosen.facts, chosen.arms)[bits])[-limit]
        if first + np.count_nonzero(bound >= likely) > MOST * len(seqs):
            return run(**options)
        rows = run(only=_array(seqs[:first]), **options)
        if len(rows) < limit:  # the first facts cannot say how low the top goes
            return run(**options)
        floor = score(rows[-1])
        # the facts after the first that some weight could lift to the floor: the bounds are in
        # descending order, so these come first
        bound = bound[first:]
        rest = seqs[first : first + int(np.count_nonzero(bound * WEIGHT_MAX >= floor))]
        if not len(rest):
            return rows
        # the same guess, now with the rows' floor and the weight of the lowest of them
        lowest = min(map(weight, rows))
        likely = np.count_nonzero(bound[: len(rest)] * lowest >= floor)
        if first + likely > MOST * len(seqs):
            return run(**options)
        scaled = _scaled(bound[: len(rest)])
        threats = None
        if held_weights is not None:  # the weights in memory decide when they can
            threats = held_weights.decide(conn, ranking, rest, scaled, floor * SCALE, options)
        if threats is None:
            threats = _threats(conn, ranking, rest, scaled, floor, options)
        if not threats:
            return rows
        kept = _array([*seqs[:first].tolist(), *threats])
        return run(only=kept, **options)


def _loose(ranking: Ranking, chosen: planning.Plan, limit: int) -> bool:
    """The guess below (``MOST``) made from the words' dfs alone, before their postings are read:
    each fact taken to hold each word at random, at the rate of its df (a fact holds a set of
    the words as often as the product of those rates says). A plan of rare words of like idf
    (facts holding one each, every bound above the 10th presence score) is loose: at 1M facts
    reading their postings first cost a rare-word question 1.4x (docs/benchmarks.md). A guess:
    the rows are the same either way; more than ``GUESSED`` words are not guessed."""
    np = common.numpy()
    arms = chosen.arms
    if len(arms) > GUESSED or not chosen.facts:
        return False
    rate = np.array([min(arm.df / chosen.facts, 1.0) for arm in arms])
    masks = np.arange(1 << len(arms))
    holds = ((masks[:, None] >> np.arange(len(arms))) & 1).astype(bool)
    expected = chosen.facts * np.prod(np.where(holds, rate, 1 - rate), axis=1)
    expected[0] = 0.0  # holds none: not a posting
    presence = common.presence(ranking, chosen.facts, arms)
    order = np.argsort(-presence, kind="stable")
    at = int(np.searchsorted(np.cumsum(expected[order]), limit))
    if at >= len(order):
        return False
    likely = presence[order[at]]
    return bool(expected[bounds(ranking, chosen) >= likely].sum() > MOST * expected.sum())


def held(conn, arms, postings: common.Postings, slots: list[str] | None):
    """(seqs, bits): the facts that hold any of the ``arms`` (of ``slots``, by their slot's
    tag, ``plan.slot_tag``), and for each which it holds (bit i: ``arms[i]``), from the words'
    postings (``common.Postings``, read in the caller's snapshot). Over the postings alone: an
    array over every seq (``common.py``'s) costs a millisecond at 1M facts. None when a slot's
    tag postings are not in memory: a slot holds a third of the facts, reading them (20 ms at
    1M, after any write to the index) would cost more than bm25 saves; common.py reads them."""
    state = common.structure(conn)
    lists = [postings.get(conn, arm.match, state) for arm in arms]
    tags = [postings.cached(planning.slot_tag(slot), state) for slot in slots or ()]
    if any(tagged is None for tagged in tags):
        return None
    return common.held(lists, tags if slots else None)


def _scaled(bound):
    """Bounds in 1/``SCALE``ths, rounded up, as integers (below LARGEST: search checks)."""
    np = common.numpy()
    return np.ceil(bound * SCALE).astype(np.int64)


def _threats(conn, ranking: Ranking, seqs, scaled, floor: float, options: dict) -> list[int]:
    """The ``seqs`` whose bound (``scaled``: ``_scaled``'s) times their confidence × feedback ×
    recency reaches ``floor``, among the facts the statement would keep (slots, expiry, window,
    tags). Each seq goes with its bound in one integer (the seq in the high 32 bits, the bound
    in the low ones): a JSON array of pairs cost several times as much to read."""
    np = common.numpy()
    feedback, recency = ranking.factors()
    params: dict = {"facts": _array((seqs.astype(np.int64) << 32) | scaled), "floor": floor}
    params["now"] = options["now"]
    tests = lexical.fact_tests(params, options.get("since"), options.get("until"), options["tags"])
    slots = options["slots"]
    if slots:
        names = [f"slot{i}" for i in range(len(slots))]
        params.update(zip(names, slots))
        tests.append(f"f.slot IN ({', '.join(':' + name for name in names)})")
    sql = f"""SELECT f.seq FROM json_each(:facts) j
        CROSS JOIN memory_facts f ON f.seq = j.value >> 32
        WHERE (j.value & 4294967295) * f.confidence * {feedback} * {recency} >= :floor * {SCALE}
        AND {" AND ".join(tests)}"""
    return [seq for (seq,) in conn.execute(sql, params)]


def _array(seqs) -> str:
    return "[" + ",".join(map(str, seqs.tolist() if hasattr(seqs, "tolist") else seqs)) + "]"
