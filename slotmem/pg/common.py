"""Common-word questions over every posting, on PostgreSQL: the file's path
(slotmem/search/common.py) in the scoring statement.

When the file would take that path for a plan (``common.applies``: the plan dropped or capped
a word, every term is a word, numpy imports on the client and ``common.ENABLED``; the
postings would fit in the file's ``common.MAX_BYTES``; not inside a transaction), so does the
server, in the same one statement:

1. **Candidates** (the CTEs ``best`` and ``cand``): every fact holding any of the question's
   words (a GIN bitmap scan per word of its whole posting list, no cap; the slot test on the
   rows it reads), its words as bits (bit i: it holds word i), ordered by its presence score,
   then the newest first, the best ``common.CANDIDATES`` kept. The score is looked up by those
   bits in the file's own table (``common.presence``: float32, computed on the client, sent as
   an array of 2^words values), so the candidates are the file's, ties included.
2. **Exact scores**: the statement's arms (every word, uncapped) scan only the candidates' rows
   (``cand``), their bm25 from the stored term frequencies and row lengths, as for any search;
   confidence, feedback, recency, filters and order are the statement's, as the file's are
   lexical.py's.

The server needs no numpy; it follows the file's rule anyway (numpy absent on the client or
``ENABLED`` off: the plan's budget applies, as the file's does), so that the two agree on every
question (tests/test_postgres_contract.py).
"""

from __future__ import annotations

from ..search import common
from ..search import plan as file_plan


def applies(conn, chosen: file_plan.Plan) -> bool:
    """Whether the file would score this plan over every posting (see the module's docstring)."""
    import psycopg

    return (
        common.applies(chosen)
        and common.fits(chosen.every)
        and conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    )


def widened(chosen: file_plan.Plan) -> file_plan.Plan:
    """The plan as the exact scoring runs it: every word, uncapped, none dropped (the file's)."""
    return file_plan.Plan(chosen.every, chosen.facts, (), chosen.every)


def candidates(chosen: file_plan.Plan, ranking, slots: list[str] | None, params: dict) -> str:
    """The CTE ``cand``: the best ``common.CANDIDATES`` facts by presence over every posting of
    ``chosen.every``, with what the arms read of them (seq, slot, terms, freqs, length), so that
    the arms scan only those rows (its parameters added to ``params``)."""
    arms = chosen.every
    params["cand_scores"] = [float(score) for score in common.presence(ranking, chosen.facts, arms)]
    params["cand_limit"] = common.CANDIDATES
    slot_test = " AND f.slot = ANY(%(slots)s)" if slots else ""
    words = []
    for i, arm in enumerate(arms):
        params[f"cand{i}"] = arm.match
        # the word out of the planner's sight (an InitPlan): a bitmap scan of its GIN postings
        # (with its literal, a common word was priced into a parallel scan of every row, 3x)
        words.append(
            f"SELECT f.seq, {1 << i} AS bit FROM memory_facts f"
            f" WHERE f.terms @> (SELECT ARRAY[%(cand{i})s]::text[]){slot_test}"
        )
    return f"""best AS (
            SELECT seq FROM (
                SELECT seq, sum(bit)::int AS bits FROM ({" UNION ALL ".join(words)}) w
                GROUP BY seq) held
            ORDER BY (%(cand_scores)s::float8[])[1 + bits] DESC, seq DESC
            LIMIT %(cand_limit)s),
        cand AS (
            SELECT f.seq, f.slot, f.terms, f.freqs, f.length
            FROM best JOIN memory_facts f ON f.seq = best.seq)"""
