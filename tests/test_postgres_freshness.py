"""What one process remembers of a PostgreSQL memory between searches (the statistics' dfs, the
semantic settings) never hides what another process changed since: two stores on one memory,
one writes, the other's next search sees it. And a refresh leaves the terms' GIN index cheap to
ask (its pending list merged), so a word written since the refresh is counted through it."""

import random

import llm
import pytest
from test_semantic import Plugin

from slotmem import Store
from slotmem.pg.search import DocFreqs


@pytest.fixture(autouse=True)
def fake_models():
    llm.pm.register(Plugin(), name="fake-embeddings")
    yield
    llm.pm.unregister(name="fake-embeddings")


@pytest.fixture
def two(pg_url, clock):
    with Store(pg_url, create=True, clock=clock) as a, Store(pg_url, clock=clock) as b:
        a.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
        a.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
        a.refresh_statistics()
        yield a, b


def keys(store, text, **options):
    return [hit.fact.key for hit in store.query_facts(text, track_access=False, **options)]


def test_a_fact_written_by_another_store_is_found_next(two):
    a, b = two
    assert keys(a, "zeppelin") == []
    assert keys(a, "deploy") == ["deploy.schedule"]  # its df remembered by a
    b.upsert("project", "airship", "A zeppelin hangar near the deploy site.")
    assert keys(a, "zeppelin") == ["airship"]
    assert set(keys(a, "deploy")) == {"deploy.schedule", "airship"}


def test_statistics_refreshed_by_another_store_are_used_next(two, pg_url, clock):
    a, b = two
    a.query_facts("tea deploy", track_access=False)  # a remembers the dfs of this refresh
    for i in range(5):
        b.upsert("user", f"tea.{i}", f"tea number {i}")
    b.refresh_statistics()
    seen = a.query_facts("tea deploy", track_access=False, explain=True)
    with Store(pg_url, clock=clock) as fresh:
        wanted = fresh.query_facts("tea deploy", track_access=False, explain=True)
    assert [(h.fact.key, h.score) for h in seen] == [(h.fact.key, h.score) for h in wanted]


def test_semantic_search_turned_on_by_another_store_is_used_next(two):
    a, b = two
    hit = a.query_facts("green tea", track_access=False, explain=True)[0]
    assert "semantic_part" not in hit.explanation
    b.semantic.reindex("fake-64")
    hit = a.query_facts("green tea", track_access=False, explain=True)[0]
    assert "semantic_part" in hit.explanation


def test_after_a_refresh_a_new_word_is_counted_through_the_index(pg_store):
    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    pg_store.upsert_many(
        [
            {"slot": "project", "key": f"k.{i}", "value": " ".join(rng.sample(words, 8))}
            for i in range(3000)
        ]
    )
    pg_store.refresh_statistics()
    plan = "\n".join(
        row["QUERY PLAN"] for row in pg_store.conn.execute(f"EXPLAIN {DocFreqs.sql(1)}", ["unseen"])
    )
    assert "Seq Scan on memory_facts" not in plan, plan
    assert "memory_facts_terms" in plan, plan


def test_a_search_of_words_asked_before_is_one_statement(two, monkeypatch):
    """Their dfs remembered, the scoring statement also reads the statistics (to check they are
    still those) and the hits' tags: one round trip."""
    from pg_server import statements_sent

    a, _ = two
    a.tag("user", "drinks", "beverage")
    a.query_facts("green tea", track_access=False, semantic=False)  # its words' dfs read
    sent = statements_sent(monkeypatch)
    hits = a.query_facts("green tea", track_access=False, semantic=False)
    assert [(hit.fact.key, hit.fact.tags) for hit in hits] == [("drinks", ("beverage",))]
    assert len(sent) == 1


def test_the_statistics_statement_is_planned_once_per_connection(two):
    """Prepared by psycopg after its fifth run, it runs on the server's generic plan: not
    planned again at every search (an array's unnest was: its custom plans looked cheaper)."""
    a, _ = two
    for i in range(20):  # new words each time: their dfs are not remembered
        a.query_facts(f"zeppelin{i} hangar{i} deploy", track_access=False, semantic=False)
    rows = a.conn.execute(
        """SELECT generic_plans, custom_plans FROM pg_prepared_statements
           WHERE statement LIKE '%%memory_term_stats%%'"""
    ).fetchall()
    assert rows, "the statistics statement is prepared"
    assert all(row["generic_plans"] >= 5 for row in rows), rows


def test_a_search_of_rare_words_is_planned_once_per_connection(pg_store):
    """Each rare term out of the planner's sight, the scoring statement's generic plan costs
    what its custom ones do: prepared, it is not planned again at every search."""
    rng = random.Random(5)
    # words in 0.5% of the facts each: the column's statistics (ANALYZE) price a term they do
    # not list below the planner's default, and a custom plan looked cheaper than the generic
    common = [f"w{i}" for i in range(1000)]
    pg_store.upsert_many(
        [
            {
                "slot": "project",
                "key": f"k.{i}",
                "value": " ".join([f"unique{i}", *rng.sample(common, 5)]),
            }
            for i in range(2000)
        ]
    )
    pg_store.refresh_statistics()
    for i in range(20):
        hits = pg_store.query_facts(f"unique{i}", track_access=False, semantic=False)
        assert [hit.fact.key for hit in hits] == [f"k.{i}"]
    rows = pg_store.conn.execute(
        """SELECT generic_plans, custom_plans FROM pg_prepared_statements
           WHERE statement LIKE '%%WITH hits%%'"""
    ).fetchall()
    assert rows, "the scoring statement is prepared"
    assert all(row["generic_plans"] >= 5 for row in rows), rows
