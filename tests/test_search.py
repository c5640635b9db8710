import dataclasses
import math

import pytest

from slotmem import Ranking, Store
from slotmem.search import common
from slotmem.search import plan as lexical
from slotmem.search import terms as query
from tests.conftest import fts_integrity_error

HOSTILE = [
    "",
    "   ",
    '"',
    '""',
    "'",
    '"unterminated',
    "a AND b",
    "OR",
    "NOT deploy",
    "AND OR NOT NEAR",
    "NEAR(deploy friday, 2)",
    "-x",
    "-deploy",
    "a:b",
    "key:deploy",
    "value:friday",
    "*",
    "deploy*",
    "^deploy",
    "c++",
    "c#",
    "f#.net",
    "maja@example.com",
    "/usr/local/bin",
    "C:\\Users\\maja",
    "2026-03-31",
    "31/03/2026",
    "10:00",
    "\x00",
    "deploy\x00friday",
    "\x1b[31mred\x1b[0m",
    "🚀🚀🚀",
    "when do we 🚀?",
    "我们什么时候发布",
    "デプロイはいつ",
    "((deploy))",
    "{deploy}",
    "[deploy]",
    "deploy)",
    "(deploy",
    "'; DROP TABLE memory_facts; --",
    "\\",
    "%",
    "_",
    "$1",
    "\ud800",
    "deploy \udfff friday",
    "x" * 100_000,
    "deploy " * 5000,
    "\u200b\u200bdeploy",
]


@pytest.fixture
def deploy_store(store):
    store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
    store.upsert("project", "stack", "Python with FastAPI and PostgreSQL.")
    store.upsert("user", "timezone", "Maja works in Europe/Stockholm.")
    return store


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_query_never_raises_on_hostile_text(deploy_store, text):
    hits = deploy_store.query_facts(text)
    assert isinstance(hits, list)
    chosen = lexical.plan(deploy_store.conn, query.parse(text))
    assert all(arm.match.startswith('"') and arm.match.endswith('"') for arm in chosen.arms)


def test_hostile_text_still_finds_its_words(deploy_store):
    for text in [
        "NOT deploy",
        "deploy\x00friday",
        "-deploy",
        "^deploy",
        "key:deploy",
        "((deploy))",
    ]:
        hits = deploy_store.query_facts(text, track_access=False)
        assert [h.fact.key for h in hits] == ["deploy.schedule"], text


def test_text_without_tokens_returns_nothing(deploy_store):
    for text in ["", "   ", "?!", "the and of", "\x00\x01"]:
        assert not query.parse(text)
        assert deploy_store.query_facts(text) == []


def test_possessives_and_stemming(store):
    store.upsert("user", "friend", "Joanna plays the guitar")
    assert [h.fact.key for h in store.query_facts("Joanna's hobbies")] == ["friend"]
    assert [h.fact.key for h in store.query_facts("who is playing?")] == ["friend"]


def test_confidence_changes_the_order(store):
    store.upsert("project", "db.a", "the database is postgres", confidence=0.3)
    store.upsert("project", "db.b", "the database is postgres", confidence=0.9)
    assert [h.fact.key for h in store.query_facts("database postgres")] == ["db.b", "db.a"]
    store.upsert("project", "db.a", "the database is postgres", confidence=1.0)
    assert [h.fact.key for h in store.query_facts("database postgres")] == ["db.a", "db.b"]


def test_quality_feedback_changes_the_order(store):
    store.upsert("agent", "one", "always run the linter")
    store.upsert("agent", "two", "always run the linter")
    store.rate("agent", "two", 3)
    hits = store.query_facts("linter", explain=True)
    assert [h.fact.key for h in hits] == ["two", "one"]
    assert hits[0].explanation["feedback"] == pytest.approx(1.45)
    store.rate("agent", "two", -3)
    store.rate("agent", "two", -3)
    assert store.query_facts("linter")[0].fact.key == "one"


def test_access_tracking(store, clock):
    store.upsert("user", "editor", "uses neovim")
    store.upsert("user", "shell", "uses fish")
    clock.advance(days=1)
    hits = store.query_facts("neovim")
    assert [h.fact.access_count for h in hits] == [1]
    assert hits[0].fact.last_accessed == clock.now
    assert store.get("user", "editor").access_count == 1
    assert store.get("user", "shell").access_count == 0
    store.query_facts("neovim", track_access=False)
    assert store.get("user", "editor").access_count == 1


def test_slots_filter_limit_and_min_score(deploy_store):
    assert {
        h.fact.slot for h in deploy_store.query_facts("deploy python maja", slots=["user"])
    } == {"user"}
    assert len(deploy_store.query_facts("deploy python maja", limit=2)) == 2
    assert deploy_store.query_facts("deploy", slots=[]) == []
    scores = [h.score for h in deploy_store.query_facts("deploy python maja")]
    assert scores == sorted(scores, reverse=True)
    kept = deploy_store.query_facts("deploy python maja", min_score=scores[0])
    assert [h.score for h in kept] == [s for s in scores if s >= scores[0]]
    below = deploy_store.query_facts("deploy python", min_score=scores[0] + 1e-9)
    assert below == []


def test_explain_shows_the_parts(store):
    store.upsert("user", "tz", "Stockholm time", confidence=0.5)
    store.upsert("user", "oslo", "Oslo time")
    store.upsert("user", "rome", "Rome time")
    store.ranking = Ranking(presence=True)  # tf = 1, no bm25
    [hit] = store.query_facts("stockholm", explain=True)
    term = hit.explanation["terms"]["stockholm"]
    assert term["tf"] == 1.0 and "bm25" not in term and hit.explanation["bm25"] == 0
    assert term["part"] == pytest.approx(term["idf"] + 4)
    store.ranking = Ranking()  # bm25's term frequency and length
    [hit] = store.query_facts("stockholm", explain=True)
    parts = hit.explanation
    assert parts["confidence"] == 0.5 and parts["feedback"] == 1.0 and parts["recency"] == 1.0
    assert parts["score"] == pytest.approx(parts["match"] * 0.5) == pytest.approx(hit.score)
    term = parts["terms"]["stockholm"]
    assert term["df"] == 1 and parts["matched"] == 1 and parts["bm25"] == term["bm25"] < 0
    assert term["idf"] == pytest.approx(math.log(1 + (3 - 1 + 0.5) / 1.5) ** 1.5)
    assert term["tf"] == pytest.approx(-term["bm25"] / math.log((3 - 1 + 0.5) / 1.5))
    assert term["part"] == pytest.approx(term["idf"] * term["tf"] + 4)
    assert parts["match"] == pytest.approx(term["part"])
    assert parts["parts"].startswith("stockholm ")
    assert store.query_facts("stockholm")[0].explanation is None


def test_relevance_is_the_sum_of_the_matched_terms(store):
    store.upsert("user", "pet", "Maja has a dog named Rex")
    store.upsert("user", "car", "Maja drives a red car")
    store.upsert("user", "dog", "The neighbour's dog barks")
    hits = store.query_facts("what is the name of Maja's dog?", explain=True)
    assert hits[0].fact.key == "pet"  # two terms beat one: coordination
    for hit in hits:
        terms = hit.explanation["terms"]
        assert hit.explanation["matched"] == len(terms)
        assert hit.explanation["match"] == pytest.approx(sum(t["part"] for t in terms.values()))
    assert set(hits[0].explanation["terms"]) == {"maja", "dog", "name"}


def test_terms_in_over_half_the_facts_still_count(store):
    for i in range(6):
        store.upsert("episodic", f"t{i}", f"Caroline: turn number {i} about nothing")
    store.upsert("episodic", "m", "Melanie: I went hiking")
    store.upsert("episodic", "c", "Caroline: I went hiking")
    # FTS5's own idf for "caroline" is ~0 (7 of 8 facts); ours is not
    assert store.query_facts("Did Caroline go hiking?")[0].fact.key == "c"


def test_recency_half_life(db_path, clock):
    from slotmem import Ranking, Store

    with Store(db_path, create=True, clock=clock, ranking=Ranking(half_life_days=10)) as store:
        store.upsert("project", "old", "release notes")
        clock.advance(days=10)
        store.upsert("project", "new", "release notes")
        hits = store.query_facts("release", explain=True)
        assert [h.fact.key for h in hits] == ["new", "old"]
        assert hits[1].explanation["recency"] == pytest.approx(0.5)


def test_fts_stays_in_sync(store):
    for i in range(50):
        store.upsert("project", f"k{i}", f"value number {i} about topic{i % 5}")
    for i in range(0, 50, 3):
        store.upsert("project", f"k{i}", f"rewritten {i} now about subject{i % 7}")
    for i in range(0, 50, 4):
        store.delete("project", f"k{i}")
    store.query_facts("topic1 subject2")  # access bumps must not disturb the index
    assert fts_integrity_error(store) is None
    keys = {h.fact.key for h in store.query_facts("rewritten", limit=100)}
    assert keys == {f"k{i}" for i in range(0, 50, 3) if i % 4}
    assert store.query_facts("topic0", limit=100, track_access=False)
    assert not {h.fact.key for h in store.query_facts("number", limit=100)} & {"k0", "k3"}


def test_integrity_check_sees_drift(store):
    store.upsert("project", "a", "alpha")
    store.conn.execute("DROP TRIGGER memory_facts_au")
    store.conn.execute("UPDATE memory_facts SET value = 'omega' WHERE key = 'a'")
    assert fts_integrity_error(store) is not None


@pytest.fixture
def small_limits(monkeypatch):
    """The df rules at toy scale: 'common' above 5 facts, 12 postings scored per search (the
    plan's own path: tests/test_common_words.py has the one over every posting)."""
    monkeypatch.setattr(lexical, "COMMON_MIN", 5)
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 12)
    monkeypatch.setattr(common, "ENABLED", False)


def test_common_terms_are_dropped_when_rarer_ones_remain(store, small_limits):
    store.upsert_many(
        [{"slot": "project", "key": f"n{i}", "value": f"note {i} on the build"} for i in range(40)]
    )
    for word in ["alpha", "bravo", "charlie", "delta"]:
        store.upsert("project", word, f"{word} build note")
    hits = store.query_facts("alpha bravo charlie delta build note", explain=True)
    assert {h.fact.key for h in hits} == {"alpha", "bravo", "charlie", "delta"}
    assert hits[0].explanation["ignored"] == ["build", "note"]
    assert set(hits[0].explanation["terms"]) <= {"alpha", "bravo", "charlie", "delta"}


def test_all_common_query_still_answers_within_budget(store, clock, small_limits):
    store.upsert_many(
        [
            {"slot": "user", "key": f"u{i}", "value": f"a note about the build {i}"}
            for i in range(10)
        ]
    )
    clock.advance(days=1)
    store.upsert_many(
        [
            {"slot": "project", "key": f"p{i}", "value": f"a note about the build {i}"}
            for i in range(30)
        ]
    )
    hits = store.query_facts("note build", limit=50, explain=True)
    assert len(hits) == 12 and {h.fact.slot for h in hits} == {"project"}  # the 12 newest
    (term,) = hits[0].explanation["terms"].values()
    assert term["scored_newest"] == 12 and hits[0].explanation["ignored"] == ["build"]
    # a slot's facts are found even when they are older than the budget's newest postings
    user = store.query_facts("note build", slots=["user"], limit=50)
    assert len(user) == 10 and {h.fact.slot for h in user} == {"user"}


def test_unknown_terms_run_no_arms(store):
    store.upsert("user", "a", "alpha")
    assert store.query_facts("zulu yankee") == []
    assert lexical.plan(store.conn, query.parse("zulu alpha")).arms[0].term == "alpha"


def test_indexed_rows_reads_the_averages_record(store):
    assert lexical.indexed_rows(store.conn, lexical.WORDS) == 0
    store.upsert_many([{"slot": "user", "key": f"k{i}", "value": "v"} for i in range(300)])
    store.delete("user", "k7")
    assert lexical.indexed_rows(store.conn, lexical.WORDS) == 299
    assert lexical.varint(bytes([0xBD, 0x84, 0x40])) == 1_000_000


def test_budgeted_search_of_a_small_slot_skips_other_slots(store, small_limits):
    store.upsert_many(
        [{"slot": "team.x-1", "key": f"t{i}", "value": f"build note {i}"} for i in range(3)]
    )
    store.upsert_many(
        [{"slot": "episodic", "key": f"e{i}", "value": f"build note {i}"} for i in range(60)]
    )
    hits = store.query_facts("build", slots=["team.x-1"], limit=50, explain=True)
    assert sorted(h.fact.key for h in hits) == ["t0", "t1", "t2"]
    assert hits[0].explanation["terms"]["build"]["scored_newest"] == 12  # the capped path ran
    assert lexical.slot_tag("team.x-1") == '"slot7465616d2e782d31x"'


def test_the_index_follows_a_change_of_slot(store, small_limits):
    store.upsert_many(
        [{"slot": "episodic", "key": f"e{i}", "value": "build note"} for i in range(30)]
    )
    store.conn.execute("UPDATE memory_facts SET slot = 'project' WHERE key = 'e0'")
    assert fts_integrity_error(store) is None
    assert [h.fact.key for h in store.query_facts("build", slots=["project"])] == ["e0"]


def test_document_frequencies_are_remembered_until_the_index_changes(db_path):
    reader, writer = (
        Store(db_path, create=True),
        Store(db_path, create=True),
    )  # two connections, as two processes have
    writer.upsert("user", "a", "alpha beta")
    lookups = []
    reader.conn.set_trace_callback(lambda sql: lookups.append(sql) if "_vocab" in sql else None)

    def df():
        hits = reader.query_facts("alpha", explain=True, semantic=False)
        return hits[0].explanation["terms"]["alpha"]["df"] if hits else 0

    assert df() == 1 and len(lookups) == 1
    assert df() == 1 and len(lookups) == 1  # remembered: access tracking leaves the index alone
    writer.upsert("user", "b", "alpha gamma")
    assert df() == 2 and len(lookups) == 2
    writer.delete("user", "a")
    assert df() == 1
    writer.upsert("user", "b", "delta")
    assert df() == 0 and reader.query_facts("delta", semantic=False)[0].fact.key == "b"


@pytest.mark.parametrize("presence", [False, True])
def test_equal_scores_go_to_the_shorter_fact(store, presence):
    """Presence scoring ties every fact holding the same words: the short standing fact comes
    before the long one that merely mentions them, as bm25's length part would order them."""
    store.ranking = Ranking(presence=presence)
    store.upsert("user", "language", "Elixir")  # the older: newest-first would put it last
    store.upsert("project", "languages", "The backend is written in Elixir, the site in TypeScript")
    hits = store.query_facts("language elixir", track_access=False)
    assert [hit.fact.key for hit in hits] == ["language", "languages"]


def _planned_in_a_transaction(conn, text):
    """The plan as it was made before plan.DocFreqs.read: N and each df in BEGIN ... ROLLBACK."""
    terms = query.parse(text)
    with lexical.snapshot(conn):
        facts = lexical.indexed_rows(conn, lexical.WORDS)
        arms = lexical._word_arms(conn, terms.words, lexical.DocFreqs())
    return lexical.choose(arms, facts)


def test_a_plan_read_in_one_statement_is_the_plan_read_in_a_transaction(store):
    store.upsert_many(
        [
            {"slot": "user", "key": f"k{i}", "value": f"alpha beta{i % 3} gamma{i % 7}"}
            for i in range(40)
        ]
    )
    freqs = lexical.DocFreqs()
    for text in ("alpha", "beta1 gamma2 missing", "Gamma3 gammas beta0", "nothing here", "alpha"):
        terms = query.parse(text)
        assert lexical.plan(store.conn, terms, freqs=freqs) == _planned_in_a_transaction(
            store.conn, text
        )


def test_remembered_dfs_follow_this_connections_own_writes(store):
    """The memo is keyed by the index's structure record, read in the plan's one statement: a
    write by the searching Store itself starts it afresh too (another connection's: the test
    above)."""

    def df(word):
        hits = store.query_facts(word, explain=True, semantic=False, track_access=False)
        return hits[0].explanation["terms"][word]["df"] if hits else 0

    store.upsert("user", "a", "alpha")
    assert df("alpha") == 1
    store.upsert("user", "b", "alpha beta")
    assert df("alpha") == 2
    store.delete("user", "a")
    assert df("alpha") == 1


def test_the_lexical_statement_binds_no_bare_limit(store):
    """SQLite 3.50 prepares a statement again at each run when its LIMIT is a bare bound
    parameter (150 µs of a rare-word search at 100k facts: docs/benchmarks.md); ``+:limit``
    is the same number without that."""
    from slotmem.search import lexical as scoring

    store.upsert("user", "a", "alpha")
    chosen = lexical.plan(store.conn, query.parse("alpha"))
    sql, _ = scoring.best_sql(chosen, Ranking(), slots=None, limit=10, now=0)
    capped = lexical.Plan((dataclasses.replace(chosen.arms[0], cap=5),), chosen.facts)
    capped_sql, _ = Ranking().sql(capped, None)
    for text in (sql, capped_sql):
        assert "LIMIT :" not in text and "LIMIT ?" not in text


def test_no_statement_binds_a_bare_limit():
    """The same rule for every SQLite statement slotmem writes (lists, episodes, retrievals,
    prune's candidates, the backfill, the key forms of a bulk load): ``LIMIT +?``, never
    ``LIMIT ?``. PostgreSQL's statements (``slotmem/pg``) bind ``%s`` and are not concerned."""
    import re
    from pathlib import Path

    import slotmem

    bare = re.compile(r"\b(LIMIT|OFFSET)\s+[?:]")
    found = [
        f"{path.name}:{number}"
        for path in Path(slotmem.__file__).parent.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if bare.search(line)
    ]
    assert found == []
