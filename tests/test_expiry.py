"""Expiry (ttl, expires_at), the default retention policy, low-rated facts, since/until."""

import datetime
import json

import pytest
from click.testing import CliRunner

from slotmem import InvalidInput, Store
from slotmem.agents.context import build_context
from slotmem.cli import cli
from slotmem.storage.retention import DEFAULT_POLICY
from tests.conftest import BOTH_BACKENDS, DAY_MS, fts_integrity_error

HOUR_MS = 3_600_000


def visible(store, key="location", slot="user"):
    """Every way of reading a fact, each saying whether it sees it."""
    return {
        "get": store.get(slot, key) is not None,
        "list": key in {f.key for f in store.list_facts(slot)},
        "search": key in {h.fact.key for h in store.query_facts("airport gate", slots=[slot])},
        "context": f"**{key}**" in build_context(store, "at the airport gate", [slot]),
        "slots": store.slots().get(slot, 0) > 0,
    }


def test_expiry_at_the_boundary(store, clock):
    result = store.upsert("user", "location", "At the airport, gate B12.", ttl="2h")
    assert result.fact.expires_at == clock.now + 2 * HOUR_MS
    clock.advance(ms=2 * HOUR_MS - 1)
    assert all(visible(store).values())
    clock.advance(ms=1)  # expires_at itself: gone
    assert not any(visible(store).values())
    assert store.stats()["expired"] == 1 and store.stats()["facts"] == 0
    assert store.history("user", "location") == []  # still in the file until prune


def test_prune_moves_expired_facts_into_history_whatever_the_cap(store, clock):
    store.upsert("user", "location", "At the airport.", ttl=60)
    store.upsert("user", "name", "Maja")
    store.pin("user", "location")  # a pin does not keep an expired fact
    clock.advance(ms=60_000)
    dry = store.prune(dry_run=True)
    assert [f.key for r in dry for f in r.expired] == ["location"]
    assert store.history("user", "location") == []
    reports = {r.slot: r for r in store.prune()}
    assert [f.key for f in reports["user"].expired] == ["location"]
    assert reports["user"].removed == [] and reports["user"].count == 1
    [entry] = store.history("user", "location")
    assert (entry.reason, entry.changed_by, entry.expires_at) == ("expired", "prune", clock.now)
    assert store.conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0] == 1
    assert fts_integrity_error(store) is None


def test_a_write_without_ttl_makes_a_fact_permanent_and_onto_an_expired_key_creates(store, clock):
    store.upsert("user", "mood", "Tired.", ttl="1d")
    again = store.upsert("user", "mood", "Tired.", ttl="1d")
    assert again.action == "unchanged"  # the same expiry: nothing to write
    clock.advance(days=0.5)
    assert store.upsert("user", "mood", "Tired.").action == "updated"
    assert store.get("user", "mood").expires_at is None
    store.upsert("user", "trip", "In Rome this week.", expires_at=clock.now + DAY_MS)
    first = store.get("user", "trip")
    clock.advance(days=2)
    assert store.delete("user", "trip") is False  # expired: there is none to delete
    with pytest.raises(InvalidInput, match="no fact user/trip"):
        store.rate("user", "trip", 1)
    result = store.upsert("user", "trip", "Back home.")
    assert result.action == "created" and result.fact.id != first.id
    assert [(e.reason, e.value) for e in store.history("user", "trip")] == [
        ("expired", "In Rome this week.")
    ]


@pytest.mark.parametrize(
    "ttl",
    [
        2 * 3600,
        datetime.timedelta(hours=2),
        "2h",
        "120m",
        "1h60m",
        "2 hours",
        "0.0833d",
    ],
)
def test_ttl_forms(store, clock, ttl):
    fact = store.upsert("user", "k", "v", ttl=ttl).fact
    assert abs(fact.expires_at - clock.now - 2 * HOUR_MS) < 60_000


@pytest.mark.parametrize(
    "options, message",
    [
        ({"ttl": "soon"}, "not a duration"),
        ({"ttl": "2"}, "not a duration"),
        ({"ttl": 0}, "more than 0"),
        ({"ttl": -5}, "more than 0"),
        ({"ttl": "101y"}, "at most 100 years"),
        ({"ttl": True}, "duration"),
        ({"ttl": ""}, "empty"),
        ({"ttl": "2h", "expires_at": "2030-01-01"}, "not both"),
        ({"expires_at": "2020-01-01"}, "not in the future"),
        ({"expires_at": "tomorrow-ish"}, "neither a date"),
    ],
)
def test_bad_expiry_writes_nothing(store, options, message):
    with pytest.raises(InvalidInput, match=message):
        store.upsert("user", "k", "v", **options)
    with pytest.raises(InvalidInput, match=f"item 1: .*{message}"):
        store.upsert_many(
            [
                {"slot": "user", "key": "a", "value": "b"},
                {"slot": "user", "key": "k", "value": "v", **options},
            ]
        )
    assert store.list_facts() == []


def test_upsert_many_takes_ttl_and_expires_at(store, clock):
    results = store.upsert_many(
        [
            {"slot": "user", "key": "a", "value": "x", "ttl": "1h"},
            {"slot": "user", "key": "b", "value": "y", "expires_at": clock.now + 5},
            {"slot": "user", "key": "c", "value": "z"},
        ]
    )
    assert [r.fact.expires_at for r in results] == [clock.now + HOUR_MS, clock.now + 5, None]
    clock.advance(ms=5)
    assert [f.key for f in store.list_facts(order="key")] == ["a", "c"]


@BOTH_BACKENDS
def test_default_policy_prunes_slots_without_one(store, clock):
    assert store.default_policy() == DEFAULT_POLICY
    store.set_default_policy(cap=2, min_age_days=1)
    assert (store.default_policy().cap, store.default_policy().min_age_days) == (2, 1.0)
    for i in range(5):
        store.upsert("scratch", f"note{i}", f"note {i}")
    store.upsert("user", "keep", "a user fact")  # user has its own policy (cap 500)
    clock.advance(days=2)
    reports = {r.slot: r for r in store.prune()}
    assert reports["scratch"].cap == 2 and len(reports["scratch"].removed) == 3
    assert store.slots() == {"scratch": 2, "user": 1}
    with Store(store.path) as again:  # the default is in the file
        assert again.default_policy().cap == 2
    with pytest.raises(InvalidInput):
        store.set_default_policy(cap=-1)


def test_badly_rated_facts_are_prunable_whatever_their_use(store, clock):
    for i in range(4):
        store.upsert("project", f"fact{i}", f"value {i}")
    for _ in range(5):
        store.query_facts("value", slots=["project"])  # every fact often used, and recently
    for _ in range(3):
        store.rate("project", "fact2", -3)
    store.rate("project", "fact1", -2)
    store.rate("project", "fact3", -1)  # not bad enough
    report = store.prune_slot("project", cap=2)  # nothing else is old or rarely used
    assert [f.key for f in report.removed] == ["fact2", "fact1"]  # the worst first
    assert store.history("project", "fact2")[0].reason == "prune"
    store.pin("project", "fact3")
    assert store.prune_slot("project", cap=0).removed == []  # pinned or well used


def test_list_and_search_since_until(store, clock):
    store.upsert("project", "old", "deploy notes from march")
    clock.advance(days=10)
    store.upsert("project", "mid", "deploy notes from april")
    clock.advance(days=10)
    store.upsert("project", "new", "deploy notes from may")
    start = clock.now - 10 * DAY_MS

    def keys(**window):
        listed = [f.key for f in store.list_facts(order="updated", **window)]
        found = sorted(h.fact.key for h in store.query_facts("deploy notes", **window))
        assert sorted(listed) == found
        return listed

    assert keys(since=start) == ["new", "mid"]
    assert keys(until=start) == ["old"]
    assert keys(since=start, until=start + 1) == ["mid"]
    assert keys(since="10d") == ["new", "mid"]  # a duration: that long before now
    assert keys(since=datetime.datetime.fromtimestamp(start / 1000)) == ["new", "mid"]
    day = datetime.datetime.fromtimestamp(start / 1000).date()
    assert keys(since=day.isoformat(), until=day.isoformat()) == ["mid"]  # a day counts whole
    with pytest.raises(InvalidInput, match="until must be later"):
        store.list_facts(since=start, until=start)
    with pytest.raises(InvalidInput, match="since"):
        store.query_facts("deploy", since="last tuesday")


def test_cli_ttl_since_until_default_policy(tmp_path):
    db = str(tmp_path / "m.db")
    runner = CliRunner()

    def run(*args):
        return runner.invoke(cli, [*args, "-d", db])

    bad = run("remember", "user", "location", "At the airport", "--ttl", "soon")
    assert bad.exit_code == 1 and "Error: ttl 'soon' is not a duration" in bad.output
    assert not (tmp_path / "m.db").exists()  # bad input creates no file
    made = run("remember", "user", "location", "At the airport", "--ttl", "2h")
    assert made.exit_code == 0 and made.output.startswith("created: user/location (until ")
    listed = run("list", "--json", "--since", "1h")
    assert json.loads(listed.output)[0]["expires_at"] is not None
    assert run("list", "--until", "1h").output.strip() == "(none)"
    assert "location" in run("search", "airport", "--since", "1d").output
    bad = run("search", "airport", "--since", "yesterday-ish")
    assert bad.exit_code == 1 and "Error: since 'yesterday-ish' is neither" in bad.output
    assert run("policy", "--default", "--cap", "7").exit_code == 0
    rows = json.loads(run("policy", "--json").output)
    assert rows[-1]["slot"] == "*" and rows[-1]["cap"] == 7
    both = run("policy", "user", "--default", "--cap", "7")
    assert both.exit_code == 2 and "not both" in both.output
    table = run("prune", "--dry-run").output
    assert "expired" in table.splitlines()[0]
