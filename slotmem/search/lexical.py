"""The lexical leg: a plan's terms scored in SQL in one statement, and each hit's explanation.

    score = match × confidence × feedback × recency

- match      = Σ over the query terms the fact matches of  idf(t)^1.5 × tf(t) + 4
    idf(t)   = ln(1 + (N - df + 0.5) / (df + 0.5))   N facts, df of them hold t (always > 0)
    tf(t)    = bm25's term-frequency and length part for t: (f × 2.2) / (f + 1.2 × (0.25 + 0.75 ×
               len / avg_len)), f = 2 × (occurrences in key) + 1 × (occurrences in value).
               It is FTS5's bm25 for the term divided by FTS5's own idf (which is clamped to
               ~0 for terms in more than half the facts: names, in a conversation's memory).
               With ``Ranking(presence=True)``, 1: FTS5 need not re-read each matched row.
               A CJK gram counts tf = 1.
    + 4      = coordination: each matched term adds a constant, so matching three of the
               question's words beats matching one rare word.
- confidence = the fact's confidence, in [0, 1]
- feedback   = max(0.2, 1 + 0.15 × quality), quality in [-3, 3] from `slotmem rate`
- recency    = 1 / (1 + age / half-life), age since the last update: 0.5 at one half-life,
               1/3 at two (plain arithmetic: no SQLite math functions needed); 1 when off

Each term is one arm of a UNION ALL (FTS5 scores it with ``rank MATCH 'bm25(2.0, 1.0)'``); the
arms' parts are summed per fact, the fact row is joined once, and ``ORDER BY score LIMIT n``
(equal scores: the shorter fact first) over rows carrying only the scores; the best are then
joined to their facts again for their columns.
Each row also carries ``mass``, the Σ idf(t)^1.5 of the terms it matched: its share of the
query's mass is the coverage that ``relevance.py`` reads (and ``fusion.py``).
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass, field

from ..records import FACT_COLUMNS, Fact, Hit, fact_of, fact_reader, hit_of
from . import relevance
from .plan import CJK, WORDS, Arm, Plan, slot_tag
from .relevance import Calibration

KEY_WEIGHT = 2.0
VALUE_WEIGHT = 1.0
IDF_POWER = 1.5
COORDINATION = 4.0
FEEDBACK_STEP = 0.15
FEEDBACK_FLOOR = 0.2
DAY_MS = 86_400_000
# What `slotmem search --explain` shows in its table (JSON output has the whole explanation).
EXPLAIN_COLUMNS = [
    "relevance_from",
    "match",
    "bm25",
    "confidence",
    "feedback",
    "recency",
    "parts",
]


@dataclass(frozen=True)
class Ranking:
    key_weight: float = KEY_WEIGHT
    value_weight: float = VALUE_WEIGHT
    half_life_days: float | None = None  # None: no recency factor
    idf_power: float = IDF_POWER
    coordination: float = COORDINATION
    calibration: Calibration = field(default_factory=Calibration)  # of Hit.relevance
    presence: bool = False  # True: a matched term counts tf = 1, without bm25 (docs/ranking.md)

    def idf(self, facts: int, df: int) -> float:
        return _idf(facts, df, self.idf_power)

    def factors(self) -> tuple[str, str]:
        """SQL for feedback and recency, over the fact row ``f`` (``weight``: in Python)."""
        feedback = f"max({FEEDBACK_FLOOR}, 1 + {FEEDBACK_STEP} * f.quality)"
        if not self.half_life_days:
            return feedback, "1.0"
        half_life_ms = float(self.half_life_days) * DAY_MS
        return feedback, f"(1.0 / (1.0 + max(0, :now - f.updated_at) / {half_life_ms!r}))"

    def weight(self, confidence: float, quality: int, updated_at: int, now: int) -> float:
        """confidence × feedback × recency of a fact, as ``factors``' SQL computes the last two
        (in floats of their own: good for a guess, not for a score)."""
        weight = confidence * max(FEEDBACK_FLOOR, 1 + FEEDBACK_STEP * quality)
        if self.half_life_days:
            weight /= 1.0 + max(0, now - updated_at) / (float(self.half_life_days) * DAY_MS)
        return weight

    def sql(
        self,
        plan: Plan,
        slots: list[str] | None,
        explain: bool = False,
        tf: bool = True,
        rows: list[tuple] | None = None,
        both: bool = False,
        only: str | None = None,
    ) -> tuple[str, dict]:
        """The one statement: arms -> parts summed per fact -> factors -> score (no LIMIT yet).
        ``tf=False`` (or ``presence``) scores each matched term as present (tf = 1), without
        bm25. ``rows``: each fact's parts summed already (common.py: seq, match, mass, matched,
        specific, parts), in place of the FTS5 arms. ``both``: each row also carries
        ``pmatch`` and ``pscore``, its match and score with tf = 1 (``search_both``). ``only``:
        a JSON array of fact seqs, the only ones the arms keep (``pruned.py``: bm25 runs for
        them alone; each kept row is the one the whole statement has)."""
        params: dict = {}
        tf = tf and not self.presence
        slot_test = _slot_test(slots, params)
        parts = ", group_concat(arm || ':' || coalesce(raw, ''), ' ') AS parts" if explain else ""
        present = ""
        if rows is None:
            arms = " UNION ALL ".join(
                self._arm(i, arm, plan.facts, slots, params, tf, both, only is not None)
                for i, arm in enumerate(plan.arms)
            )
            if only is not None:
                params["only"] = only
            extra = ", present" if both else ""
            sums = ", sum(present) AS pmatch" if both else ""
            matched = f"""hits(seq, arm, raw, part, mass, specific{extra}) AS ({arms}),
            matched AS (
                SELECT seq, sum(part) AS match, sum(mass) AS mass, count(*) AS matched,
                       max(specific) AS specific{parts}{sums}
                FROM hits GROUP BY seq)"""
        else:  # summed per fact already (common.py): one JSON array of rows
            import json  # only then: a cold lexical `context` does without

            params["rows"] = json.dumps(rows)
            columns = ("seq", "match", "mass", "matched", "specific", "parts")
            matched = "matched AS (SELECT {} FROM json_each(:rows))".format(
                ", ".join(f"json_extract(value, '$[{i}]') AS {c}" for i, c in enumerate(columns))
            )
        feedback, recency = self.factors()
        if both:
            present = f", m.pmatch, m.pmatch * f.confidence * {feedback} * {recency} AS pscore"
        sql = f"""
            WITH {matched}
            SELECT f.*, m.match, m.mass, m.matched, m.specific{", m.parts" if explain else ""},
                   {feedback} AS feedback, {recency} AS recency,
                   m.match * f.confidence * {feedback} * {recency} AS score{present}
            FROM matched m CROSS JOIN memory_facts f ON f.seq = m.seq
            {"WHERE " + slot_test if slot_test else ""}"""
        return sql, params

    def _arm(
        self,
        i: int,
        arm: Arm,
        facts: int,
        slots: list[str] | None,
        params: dict,
        tf: bool = True,
        both: bool = False,
        only: bool = False,
    ) -> str:
        """One term's rows: (seq, arm number, FTS5 bm25 or NULL, the term's part, its idf, its
        specificity[, its part with tf = 1 when ``both``]); with ``only``, of the facts in the
        JSON array ``:only`` alone (tested as each posting is read, before bm25 runs: ``+``
        keeps FTS5 from seeking each rowid)."""
        params[f"q{i}"], params[f"c{i}"] = arm.match, self.coordination
        params[f"v{i}"] = relevance.weight(self, facts, arm.df)
        params[f"s{i}"] = relevance.specificity(arm.term) if arm.table == WORDS else 1.0
        params[f"w{i}"] = self.idf(facts, arm.df)
        present = f", :w{i} + :c{i}" if both else ""
        if arm.table == CJK or not tf:  # binary: the term is there or not
            raw, score, rank = "NULL", f":w{i} + :c{i}", ""
        else:  # bm25 with FTS5's idf swapped for ours; the slot tag column weighs nothing
            params[f"m{i}"] = self.idf(facts, arm.df) / fts5_idf(facts, arm.df)
            weights = f"{float(self.key_weight)!r}, {float(self.value_weight)!r}, 0.0"
            raw, score, rank = (
                "t.rank",
                f"-t.rank * :m{i} + :c{i}",
                f" AND t.rank MATCH 'bm25({weights})'",
            )
        select = f"SELECT t.rowid, {i}, {raw}, {score}, :v{i}, :s{i}{present} FROM {arm.table} t"
        where = f" WHERE t.{arm.table} MATCH :q{i}{rank}"
        if only:
            where += " AND +t.rowid IN (SELECT value FROM json_each(:only))"
        if slots and arm.cap is not None and arm.table == WORDS:  # FTS5 skips to the slots' own
            params[f"q{i}"] = f"({arm.match}) AND ({' OR '.join(map(slot_tag, slots))})"
        elif slots:  # the slot test before bm25 runs: bm25 costs more than the join
            select += " CROSS JOIN memory_facts f ON f.seq = t.rowid AND " + _slot_test(slots, {})
        if arm.cap is None:
            return select + where
        params[f"cap{i}"] = arm.cap  # only the newest postings (of the asked slots)
        return f"SELECT * FROM ({select}{where} ORDER BY t.rowid DESC LIMIT +:cap{i})"


def search(
    conn,
    plan: Plan,
    ranking: Ranking,
    *,
    slots: list[str] | None,
    limit: int,
    now: int,
    min_score: float | None = None,
    min_relevance: float | None = None,
    total: float = 0.0,
    explain: bool = False,
    tf: bool = True,
    since: int | None = None,
    until: int | None = None,
    tags: tuple[str, ...] = (),
    rows: list[tuple] | None = None,
    only: str | None = None,
) -> list:
    """The plan's best ``limit`` rows, scored, weighted, filtered and ordered in one statement
    (``min_relevance`` needs ``total``, the query's idf mass: relevance.query_mass). Facts
    expired at ``now`` are left out, with ``since``/``until`` those updated outside, with
    ``tags`` those without every one of them. ``rows``: each fact's parts summed already, as
    common.py computes them for the plan's ``every`` arms (no rows: no hits). ``only``: a JSON
    array of the only facts scored (``Ranking.sql``)."""
    if rows is not None and not rows:
        return []
    carried = _CARRIED_EXPLAINED if explain else _CARRIED
    sql, params = _ranked(
        plan, ranking, slots, limit, now, min_score, min_relevance, total, explain, tf, since,
        until, tags, rows, f"seq, {', '.join(carried)}, {_SIZE}", only,
    )  # fmt: skip
    return conn.execute(_joined(sql, carried), params).fetchall()


# What a ``search`` row carries beside the fact's columns, in order; ``search_both``'s also
# ``_BOTH``. The candidates are ranked carrying these and their size alone, and the best
# joined to their facts: carrying each candidate's whole row through the sort cost
# ``search_both`` 1.17x and the hybrid leg's statement 1.09x (docs/benchmarks.md).
_CARRIED = ("match", "mass", "matched", "specific", "feedback", "recency", "score")
_CARRIED_EXPLAINED = (
    "match",
    "mass",
    "matched",
    "specific",
    "parts",
    "feedback",
    "recency",
    "score",
)
_BOTH = ("pmatch", "pscore")
_SIZE = "length(key) + length(value) AS size"  # the tie-break's, as ``_ranked`` orders


def _joined(ranked: str, carried: tuple[str, ...], order: str = "r.score DESC") -> str:
    """The ranked rows ``ranked`` (a subquery with seq, ``carried`` and size), each with its
    fact's columns first, as ``Ranking.sql`` gives them, in the order they were ranked."""
    columns = ", ".join(f"r.{name}" for name in carried)
    return f"""SELECT f.*, {columns} FROM {ranked} r CROSS JOIN memory_facts f ON f.seq = r.seq
        ORDER BY {order}, r.size, r.seq DESC"""


# What ``best`` reads of each of its rows beside the fact's columns (records.FACT_COLUMNS).
BEST_COLUMNS = ("mass", "matched", "specific", "score", "tags")
TAG_SEPARATOR = "\x1f"  # between a fact's tags in a ``best`` row (a tag holds no control character)


def best(conn, plan: Plan, ranking: Ranking, **options) -> list[tuple]:
    """``search``'s rows (without an explanation) in a cheaper form of the same statement
    (``best_sql``, which takes ``search``'s options but ``explain`` and ``tf``). Each row (a
    tuple): the fact's columns (``records.FACT_COLUMNS``), then ``BEST_COLUMNS`` (``tags``: the
    fact's tags joined by ``TAG_SEPARATOR``, None when it has none), in ``search``'s order."""
    if options.get("rows") is not None and not options["rows"]:
        return []
    sql, params = best_sql(plan, ranking, **options)
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: read by position
    return cursor.execute(sql, params).fetchall()


_FACT_SQL = ", ".join(f"f.{name}" for name in FACT_COLUMNS)  # the same at every search
_TAGGED_SQL = (
    "(SELECT group_concat(t.tag, char(31)) FROM memory_fact_tags t WHERE t.fact_seq = f.seq)"
)
_WIDTH, _KEY = len(FACT_COLUMNS), FACT_COLUMNS.index("key")
BEST_SCORE = _WIDTH + BEST_COLUMNS.index("score")  # a ``best`` row's score, by position
_WEIGHED = tuple(map(FACT_COLUMNS.index, ("confidence", "quality", "updated_at")))


def best_weight(row: tuple, ranking: Ranking, now: int) -> float:
    """``Ranking.weight`` of a ``best`` row's fact (its statement does not return the factors)."""
    confidence, quality, updated = (row[i] for i in _WEIGHED)
    return ranking.weight(confidence, quality, updated, now)


def best_sql(
    plan: Plan,
    ranking: Ranking,
    *,
    slots: list[str] | None,
    limit: int,
    now: int,
    min_score: float | None = None,
    min_relevance: float | None = None,
    total: float = 0.0,
    since: int | None = None,
    until: int | None = None,
    tags: tuple[str, ...] = (),
    rows: list[tuple] | None = None,
    only: str | None = None,
) -> tuple[str, dict]:
    """``best``'s statement: the candidates ranked carrying only their seq and the parts of a
    hit (``search``'s ``SELECT *`` carries every column of every candidate through the sort:
    a rare-word question at 100k facts cost 0.8x as much this way, docs/benchmarks.md), then
    the best ``limit`` joined to their facts and their tags. ``only``: as ``search``'s."""
    ranked, params = _ranked(
        plan, ranking, slots, limit, now, min_score, min_relevance, total, False, True, since,
        until, tags, rows, "seq, mass, matched, specific, score", only,
    )  # fmt: skip
    sql = f"""SELECT {_FACT_SQL}, r.mass, r.matched, r.specific, r.score, {_TAGGED_SQL}
        FROM {ranked} r CROSS JOIN memory_facts f ON f.seq = r.seq
        ORDER BY r.score DESC, length(f.key) + length(f.value), r.seq DESC"""
    return sql, params


def _ranked(
    plan: Plan,
    ranking: Ranking,
    slots: list[str] | None,
    limit: int,
    now: int,
    min_score: float | None,
    min_relevance: float | None,
    total: float,
    explain: bool,
    tf: bool,
    since: int | None,
    until: int | None,
    tags: tuple[str, ...],
    rows: list[tuple] | None,
    columns: str = "*",
    only: str | None = None,
) -> tuple[str, dict]:
    """``(SELECT columns FROM (the statement) WHERE the tests ORDER BY ... LIMIT +:limit)``
    and its parameters: what ``search`` and ``best`` run. ``+:limit``, not ``:limit``: SQLite
    3.50 (sqlean's) reads a bare bound LIMIT while planning, so each run with it bound anew
    prepares the statement again (150 µs of a rare-word search at 100k facts, a third of the
    statement; SQLite 3.40 does not: docs/benchmarks.md)."""
    sql, params = ranking.sql(plan, slots, explain, tf, rows, only=only)
    params.update(now=now, limit=limit, total=total)
    tests = fact_tests(params, since, until, tags)
    if min_score is not None:
        tests.append("score >= :min_score")
        params["min_score"] = float(min_score)
    if min_relevance is not None:
        tests.append(ranking.calibration.lexical_sql(min_relevance, params))
    where = f"WHERE {' AND '.join(tests)}" if tests else ""
    # Equal scores (common with presence scoring: the same words, the same confidence): the
    # shorter fact first, as bm25's length part would order them, then the newer.
    order = "score DESC, length(key) + length(value), seq DESC"
    return f"(SELECT {columns} FROM ({sql}) {where} ORDER BY {order} LIMIT +:limit)", params


def search_both(
    conn,
    plan: Plan,
    ranking: Ranking,
    *,
    slots: list[str] | None,
    depth: int,
    limit: int,
    now: int,
    min_score: float | None = None,
    min_relevance: float | None = None,
    total: float = 0.0,
    since: int | None = None,
    until: int | None = None,
    tags: tuple[str, ...] = (),
) -> tuple[list, list]:
    """What a hybrid search asks of the same plan twice, in one statement (the FTS5 arms run
    once): the best ``depth`` rows with each matched term scored as present (``search`` with
    ``tf=False``: the hybrid leg's candidates, ordered by ``pscore``), and the best ``limit``
    scored as ``search`` scores them (the search by words alone, with its ``min_score`` and
    ``min_relevance``). Each in the order, and with the rows, ``search`` gives; a row of the
    first carries the second's ``match`` and ``score`` (its ``pmatch`` and ``pscore`` are its
    own), which a hybrid search does not read. ``depth`` and ``limit``: at least 0 (SQLite
    reads a negative LIMIT as none)."""
    sql, params = ranking.sql(plan, slots, both=True)
    params.update(now=now, depth=depth, limit=limit, total=total)
    tests = fact_tests(params, since, until, tags)
    alone = []
    if min_score is not None:
        alone.append("score >= :min_score")
        params["min_score"] = float(min_score)
    if min_relevance is not None:
        alone.append(ranking.calibration.lexical_sql(min_relevance, params))
    kept = " AND ".join(alone) or "1"
    order = "size, seq DESC"  # as in ``search``
    carried = (*_CARRIED, *_BOTH)
    # the candidates once (MATERIALIZED: the arms run once), then each order's best alone: two
    # sorts that keep ``depth`` and ``limit`` rows cost 0.74x at 1M facts what numbering every
    # candidate in both orders (two window functions) did (docs/benchmarks.md)
    ranked = f"""(
        WITH candidates AS {materialized(type(conn).__module__)} (
            SELECT seq, {", ".join(carried)}, {_SIZE} FROM ({sql}) WHERE {" AND ".join(tests)})
        SELECT * FROM (
            SELECT *, 1 AS presence FROM candidates
            ORDER BY pscore DESC, {order} LIMIT +:depth)
        UNION ALL
        SELECT * FROM (
            SELECT *, 0 AS presence FROM candidates WHERE {kept}
            ORDER BY score DESC, {order} LIMIT +:limit))"""
    by = "r.presence DESC, CASE WHEN r.presence THEN r.pscore ELSE r.score END DESC"
    rows = conn.execute(_joined(ranked, (*carried, "presence"), by), params).fetchall()
    return [row for row in rows if row["presence"]], [row for row in rows if not row["presence"]]


@functools.cache
def materialized(module: str) -> str:
    """``MATERIALIZED`` where the SQLite of the connections of ``module`` (the driver: sqlite3,
    sqlean.dbapi2...) knows the hint, 3.35 and later (without it, 3.50 writes the CTE into each
    of its two uses and runs the arms twice: 1.9x at 1M facts); nothing before (the same
    rows)."""
    version = getattr(sys.modules.get(module), "sqlite_version_info", None)
    return "MATERIALIZED" if version is not None and version >= (3, 35, 0) else ""


def fact_tests(
    params: dict, since: int | None, until: int | None, tags: tuple[str, ...] = ()
) -> list[str]:
    """SQL tests of a fact row that a hit must pass: not expired at ``:now``, updated in the
    window when one is given (its bounds added to ``params``), and with every one of ``tags``.
    A search's candidates are few (the arms' postings budget, the vector leg's neighbours), so
    each tag is a seek of memory_fact_tags' primary key per candidate: reading every fact of a
    common tag first (an IN over the (tag, fact_seq) index) cost a rare-word search 1.24x at
    100k facts with a tag on 10% of them (benchmarks/bench_tags.py), this 1.0x."""
    tests = ["(expires_at IS NULL OR expires_at > :now)"]
    if since is not None:
        tests.append("updated_at >= :since")
        params["since"] = since
    if until is not None:
        tests.append("updated_at < :until")
        params["until"] = until
    for i, tag in enumerate(tags):  # a lookup of the primary key (fact_seq, tag) per candidate
        params[f"tag{i}"] = tag
        tests.append(
            f"EXISTS (SELECT 1 FROM memory_fact_tags t WHERE t.fact_seq = seq AND t.tag = :tag{i})"
        )
    return tests


def to_hit(
    row,
    plan: Plan,
    ranking: Ranking,
    total: float,
    with_explanation: bool,
    key: float = 0.0,
    fact: Fact | None = None,
) -> Hit:
    """The row as a Hit; ``total`` is the query's idf mass (relevance.query_mass), ``key`` the
    row's key match (relevance.key_matches), ``fact`` the row's Fact when made already
    (records.fact_reader)."""
    covered = relevance.coverage(row["mass"], total)
    likely = ranking.calibration.relevance(
        covered, row["matched"], key=key, specific=row["specific"]
    )
    parts = None
    if with_explanation:
        parts = explain(row, plan, ranking)
        parts.update(
            coverage=covered,
            key_match=key,
            specific=row["specific"],
            relevance=likely,
            relevance_from=(
                f"lexical: coverage {covered:.2f}, matched {row['matched']}, key {key:.2f}, "
                f"specific {row['specific']:.2f}"
            ),
        )
    return Hit(fact or Fact.from_row(row), row["score"], parts, likely)


def to_hits(
    rows: list, plan: Plan, ranking: Ranking, total: float, keys: dict[str, float]
) -> list[Hit]:
    """``to_hit`` of each row without an explanation (``keys``: each row key's key match), its
    columns read by position (a ``sqlite3.Row`` finds a name by comparing it with each of its
    columns': four names a row cost a rare-word search more than its score)."""
    if not rows:
        return []
    columns = list(rows[0].keys())
    fact = fact_reader(columns)
    mass, matched, specific, score = map(columns.index, ("mass", "matched", "specific", "score"))
    likely = ranking.calibration.relevance
    hits = []
    for row in rows:
        made = fact(row)
        covered = relevance.coverage(row[mass], total)
        chance = likely(covered, row[matched], key=keys[made.key], specific=row[specific])
        hits.append(hit_of(made, row[score], None, chance))
    return hits


def best_hits(
    rows: list[tuple], ranking: Ranking, total: float, keys: dict[str, float]
) -> list[Hit]:
    """The Hits of ``best``'s rows, each fact with its tags (``keys``: each row key's key
    match): the same Hits as ``to_hits`` of ``search``'s rows, tags attached."""
    width, key = _WIDTH, _KEY
    likely, coverage = ranking.calibration.lexical_relevance(), relevance.coverage
    hits = []
    for row in rows:
        mass, matched, specific, score, tagged = row[width:]
        tags = () if tagged is None else tuple(sorted(tagged.split(TAG_SEPARATOR)))
        fact = fact_of(*row[:width], tags)
        chance = likely(coverage(mass, total), matched, keys[row[key]], specific)
        hits.append(hit_of(fact, score, None, chance))
    return hits


@functools.lru_cache(maxsize=4096)
def _idf(facts: int, df: int, power: float) -> float:
    """``Ranking.idf``, remembered: a search computes it about a dozen times, for few (N, df)."""
    df = min(max(df, 0), facts)  # an index that drifted must not make it negative
    return math.log(1 + (facts - df + 0.5) / (df + 0.5)) ** power


def fts5_idf(facts: int, df: int) -> float:
    """The idf inside FTS5's bm25() (clamped to 1e-6 for terms in over half the rows)."""
    df = min(max(df, 0), facts)  # as in Ranking.idf: a df read apart from N must not raise
    idf = math.log((facts - df + 0.5) / (df + 0.5))
    return idf if idf > 0 else 1e-6


def _slot_test(slots: list[str] | None, params: dict) -> str:
    if not slots:
        return ""
    names = [f"slot{i}" for i in range(len(slots))]
    params.update(zip(names, slots))
    return f"f.slot IN ({', '.join(':' + name for name in names)})"


def explain(row, plan: Plan, ranking: Ranking) -> dict:
    """Every part of a hit's score: the factors, and each matched term's share of relevance."""
    terms = {}
    for item in (row["parts"] or "").split():
        index, raw = item.split(":", 1)
        arm = plan.arms[int(index)]
        terms[arm.term] = _term_part(arm, float(raw) if raw else None, plan.facts, ranking)
    return {
        "score": row["score"],
        "match": row["match"],
        "bm25": sum(part.get("bm25", 0.0) for part in terms.values()),
        "matched": row["matched"],
        "confidence": row["confidence"],
        "quality": row["quality"],
        "feedback": row["feedback"],
        "recency": row["recency"],
        "terms": terms,
        "parts": " + ".join(f"{term} {part['part']:.3g}" for term, part in terms.items()),
        "ignored": list(plan.dropped),
    }


def _term_part(arm: Arm, raw: float | None, facts: int, ranking: Ranking) -> dict:
    idf = ranking.idf(facts, arm.df)
    part = {"df": arm.df, "idf": idf}
    if raw is None:
        tf = 1.0
    else:
        tf = -raw / fts5_idf(facts, arm.df)
        part["bm25"] = raw
    part.update(tf=tf, coordination=ranking.coordination, part=idf * tf + ranking.coordination)
    if arm.cap is not None:
        part["scored_newest"] = arm.cap
    return part
