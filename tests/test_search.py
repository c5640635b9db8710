import pytest

from slotmem import query
from tests.conftest import fts_integrity_error

HOSTILE = [
    "", "   ", '"', '""', "'", "\"unterminated", "a AND b", "OR", "NOT deploy", "AND OR NOT NEAR",
    "NEAR(deploy friday, 2)", "-x", "-deploy", "a:b", "key:deploy", "value:friday", "*", "deploy*",
    "^deploy", "c++", "c#", "f#.net", "maja@example.com", "/usr/local/bin", "C:\\Users\\maja",
    "2026-03-31", "31/03/2026", "10:00", "\x00", "deploy\x00friday", "\x1b[31mred\x1b[0m",
    "🚀🚀🚀", "when do we 🚀?", "我们什么时候发布", "デプロイはいつ", "((deploy))", "{deploy}",
    "[deploy]", "deploy)", "(deploy", "'; DROP TABLE memory_facts; --", "\\", "%", "_", "$1",
    "\ud800", "deploy \udfff friday", "x" * 100_000, "deploy " * 5000, "\u200b\u200bdeploy",
]  # fmt: skip


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
    expression = query.build(text)
    assert expression is None or all(part.startswith('"') for part in expression.split(" OR "))


def test_hostile_text_still_finds_its_words(deploy_store):
    for text in ["NOT deploy", "deploy\x00friday", "-deploy", "^deploy", "key:deploy", "((deploy))"]:
        hits = deploy_store.query_facts(text, track_access=False)
        assert [h.fact.key for h in hits] == ["deploy.schedule"], text


def test_text_without_tokens_returns_nothing(deploy_store):
    for text in ["", "   ", "?!", "the and of", "\x00\x01"]:
        assert query.build(text) is None
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
    assert {h.fact.slot for h in deploy_store.query_facts("deploy python maja", slots=["user"])} == {"user"}
    assert len(deploy_store.query_facts("deploy python maja", limit=2)) == 2
    assert deploy_store.query_facts("deploy", slots=[]) == []
    scores = [h.score for h in deploy_store.query_facts("deploy python maja")]
    assert scores == sorted(scores, reverse=True)
    kept = deploy_store.query_facts("deploy python maja", min_score=scores[0])
    assert [h.score for h in kept] == [scores[0]]


def test_explain_shows_the_parts(store):
    store.upsert("user", "tz", "Stockholm time", confidence=0.5)
    [hit] = store.query_facts("stockholm", explain=True)
    parts = hit.explanation
    assert parts["confidence"] == 0.5 and parts["feedback"] == 1.0 and parts["recency"] == 1.0
    assert parts["score"] == pytest.approx(parts["relevance"] * 0.5)
    assert parts["bm25"] == -parts["relevance"]
    assert store.query_facts("stockholm")[0].explanation is None


def test_recency_half_life(db_path, clock):
    from slotmem import Ranking, Store

    with Store(db_path, clock=clock, ranking=Ranking(half_life_days=10)) as store:
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
