"""Common-word questions over every posting, on PostgreSQL: the file's path
(slotmem/search/common.py) in the scoring statement.

When the file would take that path for a plan (``common.applies``: the plan dropped or capped
a word, every term is a word, numpy imports on the client and ``common.ENABLED``; the
postings would fit in the file's ``common.MAX_BYTES``; not inside a transaction), so does the
server, in the same one statement:

1. **Candidates** (``CANDIDATES``, a CTE ``cand``): every fact holding any of the question's
   words (one GIN scan of ``terms &&`` the words: each word's whole posting list, no cap), of
   the asked slots, ordered by its presence score, then the newest first, the best
   ``common.CANDIDATES`` kept. The score is looked up by the words the fact holds (bit i: word
   i) in the file's own table (``common.presence``, float32, computed on the client and sent as
   an array), so the candidates are the file's, ties included.
2. **Exact scores**: the statement's arms (every word, uncapped) read only the candidates' rows,
   their bm25 from the stored term frequencies and row lengths, as for any search.

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
    """The CTE ``cand(seq)``: the best ``common.CANDIDATES`` facts by presence over every
    posting of ``chosen.every`` (its parameters added to ``params``)."""
    arms = chosen.every
    params["cand_terms"] = [arm.match for arm in arms]
    params["cand_scores"] = [float(score) for score in common.presence(ranking, chosen.facts, arms)]
    params["cand_limit"] = common.CANDIDATES
    bits = " + ".join(
        f"((%(cand_terms)s::text[])[{i + 1}] = ANY(f.terms))::int * {1 << i}"
        for i in range(len(arms))
    )
    slot_test = " AND f.slot = ANY(%(slots)s)" if slots else ""
    return f"""cand AS (
            SELECT f.seq FROM memory_facts f
            WHERE f.terms && %(cand_terms)s::text[]{slot_test}
            ORDER BY (%(cand_scores)s::float8[])[1 + {bits}] DESC, f.seq DESC
            LIMIT %(cand_limit)s)"""
