"""The file's lexical score, computed on PostgreSQL in one statement.

The file scores with FTS5 (slotmem.search.lexical): per matched term idf^1.5 × bm25's tf part
+ coordination, times confidence, feedback and recency. Here each fact row carries what FTS5
would know of it (slotmem.pg.tokens): its distinct terms (a GIN index: each term's postings),
its term frequencies in key and value, its length in tokens. The number of facts, their total
length and each term's document frequency live in ``memory_stats`` and ``memory_term_stats``,
refreshed by ``refresh`` (prune, ``refresh_statistics``, the first search of a memory); a term
written since is counted when a search asks for it. Which terms run (too common ones dropped,
the postings budget, the newest postings of capped terms), the query's mass, relevance and
the explanation are slotmem.search's own, imported: only the SQL is PostgreSQL's. A common-word
question the file scores over every posting (slotmem.search.common) is scored so here too, its
candidates cut in the same statement (slotmem.pg.common).

bm25's term part is computed as FTS5's C code computes it (the same operations in the same
order, in double precision), so that scores, not only orders, equal the file's: after a refresh
the top 10 of a search on both are the same facts in the same order (tests/test_postgres_contract.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..records import Hit
from ..search import Query, Ranking, relevance
from ..search import lexical as file_lexical
from ..search import plan as file_plan
from ..search.stemmer import stem
from . import common as pg_common
from . import tags as fact_tags

K1, B = 1.2, 0.75  # FTS5's bm25 constants (fts5_aux.c)
# Statistics are stale once this many facts were added since the refresh (and at least a tenth
# of what it counted): a search then asks for a refresh in the background (PostgresStore).
STALE_MIN = 100
STALE_FRACTION = 0.1
# A term in at most this fraction of the facts is rare: the planner's default estimate of an
# unseen term's postings (0.5% of the rows) is about right for it (``statement``).
RARE = 0.01


@dataclass(frozen=True)
class Stats:
    facts: int
    tokens: int
    refreshed_at: int | None
    seq: int = 0  # the newest fact's seq at the refresh

    def stale(self, newest: int | None) -> bool:
        """Have enough facts been added since (``newest``: the newest seq now)?"""
        grown = (newest or 0) - self.seq
        return grown >= max(STALE_MIN, STALE_FRACTION * self.facts)


def refresh(conn, now: int) -> Stats:
    """Recount every term's document frequency, the facts and their tokens (inside the
    caller's transaction, which holds the memory's lock)."""
    conn.execute("DELETE FROM memory_term_stats")
    conn.execute(
        """INSERT INTO memory_term_stats (term, df)
           SELECT term, count(*) FROM memory_facts, unnest(terms) AS term GROUP BY term"""
    )
    row = conn.execute(
        """SELECT count(*) AS facts, coalesce(sum(length), 0) AS tokens,
                  coalesce(max(seq), 0) AS seq FROM memory_facts"""
    ).fetchone()
    conn.execute(
        """INSERT INTO memory_stats (one, facts, tokens, refreshed_at, seq)
           VALUES (true, %s, %s, %s, %s)
           ON CONFLICT (one) DO UPDATE SET facts = excluded.facts, tokens = excluded.tokens,
               refreshed_at = excluded.refreshed_at, seq = excluded.seq""",
        (row["facts"], row["tokens"], now, row["seq"]),
    )
    conn.execute("ANALYZE memory_facts")  # the planner's view of the terms, for the GIN scans
    # The GIN indexes' pending lists into their trees, as VACUUM does: after a bulk load every
    # GIN scan read the whole list, and the planner, pricing it, counted a term written since
    # the refresh (a rare word's df) by scanning every fact. Only the index's owner may: a
    # refresh by another role goes on without it (a savepoint), leaving it to autovacuum.
    import psycopg

    try:
        with conn.transaction():
            conn.execute(
                """SELECT gin_clean_pending_list(c.oid) FROM pg_class c
                   WHERE c.relname IN ('memory_facts_terms', 'memory_facts_cjk')
                     AND c.relnamespace = current_schema()::regnamespace"""
            )
    except psycopg.errors.InsufficientPrivilege:
        pass
    return Stats(row["facts"], row["tokens"], now, row["seq"])


def stats(conn) -> Stats | None:
    row = conn.execute("SELECT facts, tokens, refreshed_at, seq FROM memory_stats").fetchone()
    if row is None:
        return None
    return Stats(row["facts"], row["tokens"], row["refreshed_at"], row["seq"])


class DocFreqs:
    """Term dfs, in one statement per search: the statistics table's, and a term it lacks
    (written since the refresh) counted live, through the GIN index. Those the table holds are
    remembered while it stays as refreshed (a key's words, asked again and again)."""

    @staticmethod
    def sql(count: int) -> str:
        """The dfs of ``count`` terms, one parameter each. A VALUES list, not an array's
        unnest: its plan's cost does not hang on the terms, so after psycopg prepares it (its
        fifth run) the server plans it once per connection; an array's unnest, priced from
        its values, was planned anew at every search (0.2 ms, four times the statement's run)."""
        terms = ", ".join(["(%s::text)"] * count) if count else "(NULL::text)"
        return f"""SELECT t.term, coalesce(s.df, (SELECT count(*) FROM memory_facts f
                                              WHERE f.terms @> ARRAY[t.term])) AS df,
                      s.df IS NOT NULL AS kept
               FROM (VALUES {terms}) AS t(term) LEFT JOIN memory_term_stats s USING (term)
               WHERE t.term IS NOT NULL"""

    def __init__(self) -> None:
        self._memo: tuple[int | None, dict[str, int]] = (None, {})
        self._stats: Stats | None = None  # the statistics last read
        self.stale = False  # did the last search find the statistics stale (Stats.stale)?

    def remembered(self, terms) -> tuple[Stats, dict[str, int]] | None:
        """The statistics last read and the dfs of ``terms`` without a round trip, when every
        one of them was read from those statistics' table (a search then checks, in its own
        statement, that the statistics are still these: ``search``)."""
        current, (refreshed_at, known) = self._stats, self._memo
        if current is None or refreshed_at != current.refreshed_at:
            return None
        try:
            return current, {term: known[term] for term in terms}
        except KeyError:
            return None

    def seen(self, current: Stats | None, newest: int | None) -> None:
        """The statistics a statement read, and the newest seq it saw."""
        self._stats = current
        if current is not None:
            self.stale = current.stale(newest)

    def lookup(self, conn, terms, refreshed_at: int | None) -> dict[str, int]:
        if self._memo[0] != refreshed_at:
            self._memo = (refreshed_at, {})
        known = self._memo[1]
        out = {term: known[term] for term in terms if term in known}
        wanted = sorted(set(terms) - set(out))
        if wanted:
            for row in conn.execute(self.sql(len(wanted)), wanted):
                out[row["term"]] = row["df"]
                if row["kept"]:
                    known[row["term"]] = row["df"]
        return out

    def with_stats(self, conn, terms) -> tuple[Stats | None, dict[str, int]]:
        """The statistics and the dfs of ``terms``, in one round trip."""
        wanted = sorted(set(terms))
        rows = conn.execute(
            f"""SELECT st.facts, st.tokens, st.refreshed_at, st.seq, d.term, d.df, d.kept,
                       (SELECT max(seq) FROM memory_facts) AS newest
                FROM (SELECT 1) AS one LEFT JOIN memory_stats st ON true
                LEFT JOIN LATERAL ({self.sql(len(wanted))}) AS d ON true""",
            wanted,
        ).fetchall()
        first = rows[0]
        if first["refreshed_at"] is None:
            self._stats = None
            return None, {}
        current = Stats(first["facts"], first["tokens"], first["refreshed_at"], first["seq"])
        self.seen(current, first["newest"])
        if self._memo[0] != current.refreshed_at:
            self._memo = (current.refreshed_at, {})
        dfs = {}
        for row in rows:
            if row["term"] is not None:
                dfs[row["term"]] = row["df"]
                if row["kept"]:
                    self._memo[1][row["term"]] = row["df"]
        return current, dfs


def plan(
    conn,
    query: Query,
    freqs: DocFreqs,
    now: int,
    budget: int | None = None,
    remembered: tuple[Stats, dict[str, int]] | None = None,
) -> tuple[file_plan.Plan, Stats]:
    """The file's plan (slotmem.search.plan.choose) over this memory's dfs (``remembered``:
    DocFreqs.remembered's, read before), its CJK grams' arms as the file's (``gram_arms``)."""
    stems = {word: stem(word) for word in query.terms.words}
    current, dfs = remembered or freqs.with_stats(conn, stems.values())
    if current is None:  # a memory never refreshed: its first search counts
        with conn.transaction():
            conn.execute(  # the memory's lock (slotmem.pg.server.exclusive)
                "SELECT pg_advisory_xact_lock(hashtextextended('slotmem:' || current_schema(), 0))"
            )
            refresh(conn, now)
        current, dfs = freqs.with_stats(conn, stems.values())
    assert current is not None
    facts = max([current.facts, *dfs.values()])
    arms = [
        file_plan.Arm(word, file_plan.WORDS, stems[word], dfs[stems[word]])
        for word in query.terms.words
    ]
    arms += gram_arms(conn, query.terms.grams)
    return file_plan.choose(arms, facts, budget), current


GRAMS = "\x00"  # between a CJK arm's trigrams in its ``match`` (no text holds a NUL)


def gram_arms(conn, grams) -> list[file_plan.Arm]:
    """Each CJK gram as the file's arm (slotmem.search.plan): the indexed trigrams it is a
    prefix of, the ``MAX_EXPANSIONS`` held by most facts, its df their postings' sum (at most
    the CJK facts). Counted live, as the file's trigram vocabulary is."""
    if not grams:
        return []
    rows = conn.execute(
        """WITH cjk AS (SELECT cjk FROM memory_facts WHERE cjk IS NOT NULL)
           SELECT g.gram, (SELECT count(*) FROM cjk) AS facts, e.term, e.doc
           FROM unnest(%s::text[]) WITH ORDINALITY AS g(gram, n)
           LEFT JOIN LATERAL (
               SELECT term, count(*) AS doc FROM cjk, unnest(cjk) AS term
               WHERE starts_with(term, g.gram) GROUP BY term
               ORDER BY doc DESC, term COLLATE "C" LIMIT %s) e ON true
           ORDER BY g.n, e.doc DESC, e.term COLLATE "C"
        """,
        (list(grams), file_plan.MAX_EXPANSIONS),
    ).fetchall()
    found: dict[str, list[tuple[str, int]]] = {gram: [] for gram in grams}
    for row in rows:
        if row["term"] is not None:
            found[row["gram"]].append((row["term"], row["doc"]))
    facts = rows[0]["facts"] if rows else 0
    arms = []
    for gram, expansions in found.items():
        if expansions:
            match = GRAMS.join(sorted(term for term, _ in expansions))
            df = min(facts, sum(doc for _, doc in expansions))
            arms.append(file_plan.Arm(gram, file_plan.CJK, match, df))
    return arms


def search(conn, query: Query, ranking: Ranking, freqs: DocFreqs, now: int) -> list[Hit]:
    """The query's hits, best first, as the file's lexical search ranks them, with their tags.

    One round trip when every word's df is remembered from the statistics last read (a word
    asked before): the scoring statement reads the statistics too, and when they are no longer
    those (refreshed since, by anyone) the search plans again over the new ones and runs
    again, so what it returns is what planning first would have returned. Else two: the
    statistics and dfs, then the scoring."""
    if query.slots == () or not query.terms:
        return []
    found = None
    remembered = None if query.terms.grams else freqs.remembered(map(stem, query.terms.words))
    if remembered is not None:
        chosen, current = plan(conn, query, freqs, now, remembered=remembered)
        if chosen:  # no arm: the new statistics might give one
            chosen, total, prepared = _prepared(conn, chosen, current, ranking, query, now)
            found = scored(conn, freqs, current, prepared)
            if not found[0]["checked"]:
                found = None  # the statistics changed since they were read
    if found is None:
        chosen, current = plan(conn, query, freqs, now)
        if not chosen:
            return []
        chosen, total, prepared = _prepared(conn, chosen, current, ranking, query, now)
        found = scored(conn, freqs, current, prepared)
    found = [row for row in found if row["id"] is not None]
    keys = relevance.key_matches(
        relevance.stems(query.terms),
        [row["key"] for row in found],
        lambda words: freqs.lookup(conn, words, current.refreshed_at),
        ranking,
        chosen.facts,
    )
    hits = [
        _tagged(
            file_lexical.to_hit(row, chosen, ranking, total, query.explain, keys[row["key"]]),
            row["tags"],
        )
        for row in found
    ]
    floor = query.min_relevance
    return hits if floor is None else [hit for hit in hits if hit.relevance >= floor]


def _prepared(
    conn, chosen: file_plan.Plan, current: Stats, ranking: Ranking, query: Query, now: int
) -> tuple[file_plan.Plan, float, tuple[str, dict]]:
    """The plan as scored, the query's mass and the scoring statement: a common-word question
    over every posting when the file would score it so (slotmem.pg.common)."""
    every = pg_common.applies(conn, chosen)
    if every:
        chosen = pg_common.widened(chosen)
    total = relevance.query_mass(chosen, query.terms, ranking)
    return chosen, total, statement(chosen, current, ranking, query, now, total, every)


ORDER = "ORDER BY score DESC, length(key) + length(value), seq DESC"
CHECKED = f"""
    SELECT st.facts AS st_facts, st.tokens AS st_tokens, st.refreshed_at AS st_refreshed_at,
           st.seq AS st_seq, (SELECT max(seq) FROM memory_facts) AS st_newest,
           st.facts = %(st_facts)s AND st.tokens = %(st_tokens)s
               AND st.refreshed_at = %(st_refreshed_at)s AND st.seq = %(st_seq)s AS checked,
           (SELECT array_agg(t.tag ORDER BY t.tag) FROM memory_fact_tags t
            WHERE t.fact_seq = s.seq) AS tags, s.*
    FROM (SELECT 1) AS one LEFT JOIN (SELECT * FROM memory_stats LIMIT 1) AS st ON true
    LEFT JOIN LATERAL ({{sql}}) AS s ON true
    {ORDER}"""  # LIMIT 1: the one row priced as one (the scoring's own plan choice unchanged)


def scored(conn, freqs: DocFreqs, current: Stats, prepared: tuple[str, dict]) -> list:
    """The scoring statement's rows, each with its fact's tags and whether the statistics it
    read are ``current``, those it was planned over (``checked``); at least one row (an ``id``
    of None when nothing matched). DocFreqs learns the statistics it read."""
    sql, params = prepared
    params.update(
        st_facts=current.facts,
        st_tokens=current.tokens,
        st_refreshed_at=current.refreshed_at,
        st_seq=current.seq,
    )
    rows = conn.execute(CHECKED.format(sql=sql), params).fetchall()
    first = rows[0]
    read = None
    if first["st_refreshed_at"] is not None:
        read = Stats(
            first["st_facts"], first["st_tokens"], first["st_refreshed_at"], first["st_seq"]
        )
    freqs.seen(read, first["st_newest"])
    return rows


def _tagged(hit: Hit, tags) -> Hit:
    return dataclasses.replace(hit, fact=dataclasses.replace(hit.fact, tags=tuple(tags or ())))


def statement(
    chosen: file_plan.Plan,
    current: Stats,
    ranking: Ranking,
    query: Query,
    now: int,
    total: float,
    every: bool = False,
) -> tuple[str, dict]:
    """The one scoring statement and its parameters. ``every``: the arms score only the best
    candidates by presence over every posting (slotmem.pg.common.candidates)."""
    facts = chosen.facts
    presence = ranking.presence
    params: dict = {
        "now": now,
        "limit": query.limit,
        "total": total,
        "k1": K1,
        "k1p1": K1 + 1.0,
        "omb": 1 - B,
        "b": B,
        # statistics refreshed while the memory was empty (the refresh runs later, in the
        # background) have no tokens: no length normalisation then, not a division by zero
        "avgdl": float(current.tokens) / float(current.facts) if current.tokens else 1.0,
        "kw": float(ranking.key_weight),
        "vw": float(ranking.value_weight),
    }
    slots = list(query.slots) if query.slots else None
    if slots:
        params["slots"] = slots
    source, cand = "memory_facts f", ""
    if every:
        cand = pg_common.candidates(chosen, ranking, slots, params) + ",\n        "
        source = "cand f"  # the candidates' rows only
    arms = []
    for i, arm in enumerate(chosen.arms):
        params.update({f"t{i}": arm.match, f"c{i}": float(ranking.coordination)})
        params[f"v{i}"] = relevance.weight(ranking, facts, arm.df)
        params[f"s{i}"] = relevance.specificity(arm.term) if arm.table != file_plan.CJK else 1.0
        test = f"f.terms @> ARRAY[%(t{i})s]::text[]"
        if arm.cap is None and arm.df <= RARE * facts:
            # the term out of the planner's sight (an InitPlan): its estimate then does not hang
            # on the term, so a statement of rare terms, prepared, is planned once per
            # connection (0.5 ms at 10,000 facts, three times its run); a commoner term's
            # postings are priced from the column's statistics at every search, as before
            test = f"f.terms @> (SELECT ARRAY[%(t{i})s]::text[])"
        if arm.table == file_plan.CJK:  # binary, as the file's: the gram is there or not
            params[f"t{i}"] = arm.match.split(GRAMS)
            params[f"w{i}"] = ranking.idf(facts, arm.df)
            raw, part = "NULL::float8", f"%(w{i})s + %(c{i})s"
            test = f"f.cjk && %(t{i})s::text[]"
        elif presence:
            params[f"w{i}"] = ranking.idf(facts, arm.df)
            raw, part = "NULL::float8", f"%(w{i})s + %(c{i})s"
        else:  # FTS5's bm25 for the term, its idf then swapped for ours (lexical.py)
            params[f"fi{i}"] = file_lexical.fts5_idf(facts, arm.df)
            params[f"m{i}"] = ranking.idf(facts, arm.df) / params[f"fi{i}"]
            tf = (
                f"(CASE WHEN f.freqs ? %(t{i})s THEN (f.freqs->%(t{i})s->>0)::float8 * %(kw)s"
                f" + (f.freqs->%(t{i})s->>1)::float8 * %(vw)s ELSE %(vw)s END)"
            )
            bm25 = (
                f"(%(fi{i})s * (({tf} * %(k1p1)s) / ({tf} + %(k1)s * "
                f"(%(omb)s + %(b)s * f.length::float8 / %(avgdl)s))))"
            )
            raw, part = f"-{bm25}", f"{bm25} * %(m{i})s + %(c{i})s"
        select = (
            f"SELECT f.seq, {i} AS arm, {raw} AS raw, {part} AS part, %(v{i})s::float8 AS mass,"
            f" %(s{i})s::float8 AS specific FROM {source}"
            f" WHERE {test}"
        )
        if slots:
            select += " AND f.slot = ANY(%(slots)s)"
        if arm.cap is not None:  # only the newest postings (of the asked slots)
            params[f"cap{i}"] = arm.cap
            select += f" ORDER BY f.seq DESC LIMIT %(cap{i})s"
        arms.append(f"({select})")
    feedback, recency = factors(ranking, params)
    tests = fact_tests(query, params)
    outer = []
    if query.min_score is not None:
        outer.append("score >= %(min_score)s")
        params["min_score"] = float(query.min_score)
    if query.min_relevance is not None:
        outer.append(_portable(ranking.calibration.lexical_sql(query.min_relevance, params)))
    sql = f"""
        WITH {cand}hits AS ({" UNION ALL ".join(arms)}),
        matched AS (
            SELECT seq, sum(part ORDER BY arm) AS match, sum(mass ORDER BY arm) AS mass,
                   count(*) AS matched, max(specific) AS specific,
                   string_agg(arm || ':' || coalesce(raw::text, ''), ' ' ORDER BY arm) AS parts
            FROM hits GROUP BY seq)
        SELECT * FROM (
            SELECT f.id, f.slot, f.key, f.value, f.confidence, f.quality, f.source,
                   f.created_at, f.updated_at, f.last_accessed, f.access_count, f.pinned_at,
                   f.protected_at, f.expires_at, f.seq, m.match, m.mass, m.matched,
                   m.specific, m.parts, {feedback} AS feedback, {recency} AS recency,
                   m.match * f.confidence * {feedback} * {recency} AS score
            FROM matched m JOIN memory_facts f ON f.seq = m.seq
            WHERE {" AND ".join(tests)}) s
        {"WHERE " + " AND ".join(outer) if outer else ""}
        {ORDER}
        LIMIT %(limit)s"""
    return sql, params


def factors(ranking: Ranking, params: dict) -> tuple[str, str]:
    """SQL for feedback and recency over the fact row ``f`` (needs ``%(now)s``), as the
    file's (lexical.Ranking.factors)."""
    feedback = (
        f"greatest({file_lexical.FEEDBACK_FLOOR}::float8, "
        f"1 + {file_lexical.FEEDBACK_STEP}::float8 * f.quality)"
    )
    recency = "1.0::float8"
    if ranking.half_life_days:
        params["half_life"] = float(ranking.half_life_days) * file_lexical.DAY_MS
        recency = (
            "(1.0::float8 / (1.0 + greatest(0, %(now)s - f.updated_at)::float8 / %(half_life)s))"
        )
    return feedback, recency


def fact_tests(query: Query, params: dict) -> list[str]:
    """What a hit's fact row ``f`` must pass: not expired at ``%(now)s``, in the query's window,
    with every one of its tags (lexical.fact_tests)."""
    tests = ["(f.expires_at IS NULL OR f.expires_at > %(now)s)"]
    if query.since is not None:
        tests.append("f.updated_at >= %(since)s")
        params["since"] = query.since
    if query.until is not None:
        tests.append("f.updated_at < %(until)s")
        params["until"] = query.until
    return tests + fact_tags.filter_sql(query.tags, params, "f.seq")


def _portable(test: str) -> str:
    """relevance.Calibration's SQLite test in PostgreSQL's words: ``:name`` parameters, and
    ``min`` of two values as ``least``."""
    import re

    test = re.sub(r"(?<![:\w]):([a-z_]\w*)", r"%(\1)s", test)
    test = test.replace("min(", "least(")
    return {"1": "true", "0": "false"}.get(test.strip(), test)
