"""Restore from history, history of the whole file, undo what a flush wrote."""

import json

import pytest
from click.testing import CliRunner

from slotmem import InvalidInput, Store
from slotmem.cli import cli
from slotmem.ingest.flusher import flush
from slotmem.ingest.prompt import PROMPT_VERSION
from tests.conftest import BOTH_BACKENDS, DAY_MS, fts_integrity_error

pytest_plugins = ["llm_mock"]  # fixtures: mock_models


def test_restore_the_newest_or_a_version_and_restore_the_restore(store, clock):
    store.upsert("user", "home_city", "Lives in Paris.", source="cli")
    clock.advance(days=1)
    store.upsert("user", "home_city", "Lives in Berlin.", source="flush:chat.json|model:m|prompt:p")
    clock.advance(days=1)
    store.upsert("user", "home_city", "Lives in Rome.", source="cli")
    assert [e.version for e in store.history("user", "home_city")] == [2, 1]
    result = store.restore("user", "home_city", version=1)
    assert result.action == "restored"
    assert (result.fact.value, result.fact.source, result.fact.updated_at) == (
        "Lives in Paris.",
        "cli",
        clock.now,
    )
    assert result.previous.value == "Lives in Rome."
    history = store.history("user", "home_city")
    assert [(e.version, e.reason, e.value) for e in history] == [
        (3, "restore", "Lives in Rome."),
        (2, "update", "Lives in Berlin."),
        (1, "update", "Lives in Paris."),
    ]
    store.restore("user", "home_city")  # the newest: what the restore replaced
    assert store.get("user", "home_city").value == "Lives in Rome."
    assert fts_integrity_error(store) is None
    assert [h.fact.key for h in store.query_facts("Rome")] == ["home_city"]
    assert store.query_facts("Paris") == []


def test_restore_after_prune_brings_the_fact_back_as_it_was(store, clock):
    store.upsert("project", "old", "the old deploy checklist", confidence=0.7)
    store.pin("project", "old")
    store.query_facts("deploy checklist")
    store.unpin("project", "old")
    before = store.get("project", "old")
    clock.advance(days=60)
    assert [f.key for f in store.prune_slot("project", cap=0).removed] == ["old"]
    assert store.get("project", "old") is None
    fact = store.restore("project", "old").fact
    assert (fact.id, fact.created_at, fact.confidence, fact.access_count) == (
        before.id,
        before.created_at,
        0.7,
        1,
    )
    assert fact.updated_at == clock.now  # and so not pruned again at once
    assert store.prune_slot("project", cap=0).removed == []
    assert store.history("project", "old")[0].reason == "prune"  # nothing to archive: it was gone


def test_restore_of_an_expired_fact_drops_the_passed_expiry(store, clock):
    store.upsert("user", "location", "At the airport.", ttl="1h")
    clock.advance(days=1)
    store.prune()
    assert store.restore("user", "location").fact.expires_at is None
    assert store.get("user", "location").value == "At the airport."


def test_restore_of_a_deleted_pinned_fact_keeps_its_pin(store, clock):
    store.upsert("user", "name", "Maja")
    pinned = store.pin("user", "name").pinned_at
    store.delete("user", "name", source="cli")
    assert store.restore("user", "name").fact.pinned_at == pinned
    assert store.list_facts(pinned=True)[0].key == "name"


def test_restore_errors(store):
    with pytest.raises(InvalidInput, match="user/none has no history"):
        store.restore("user", "none")
    store.upsert("user", "k", "a")
    store.upsert("user", "k", "b")
    with pytest.raises(InvalidInput, match="no version 5: its versions are 1 to 1"):
        store.restore("user", "k", version=5)
    with pytest.raises(InvalidInput, match="version"):
        store.restore("user", "k", version=0)
    with pytest.raises(InvalidInput):
        store.restore("Bad Slot", "k")
    assert store.get("user", "k").value == "b"


def test_history_of_the_whole_file(store, clock):
    store.upsert("user", "a", "one")
    store.upsert("user", "a", "two")
    clock.advance(days=2)
    store.upsert("project", "b", "three")
    store.delete("project", "b")
    everything = store.history()
    assert [(e.slot, e.key, e.reason) for e in everything] == [
        ("project", "b", "delete"),
        ("user", "a", "update"),
    ]
    assert [e.key for e in store.history(since=clock.now - DAY_MS)] == ["b"]
    assert [e.key for e in store.history(until=clock.now - DAY_MS)] == ["a"]
    assert [e.key for e in store.history("user")] == ["a"]
    assert [e.key for e in store.history(reason="delete")] == ["b"]
    assert store.history(reason=["delete", "update"], limit=1)[0].key == "b"
    with pytest.raises(InvalidInput, match="reason must be one of"):
        store.history(reason="oops")
    with pytest.raises(InvalidInput, match="needs its slot"):
        store.history(key="a")


# -- undo-flush ---------------------------------------------------------------------------
def fact(key, value, slot="user"):
    return {"slot": slot, "key": key, "value": value, "confidence": 0.9}


@BOTH_BACKENDS
def test_undo_flush_reverts_what_a_flush_wrote(store, clock, mock_models):
    store.upsert("user", "home_city", "Lives in Paris.", source="cli")
    store.upsert("user", "drink", "Prefers coffee.", source="cli")
    clock.advance(days=1)
    mock_models.plain.enqueue(
        {
            "facts": [
                fact("home_city", "Lives in Berlin."),
                fact("pet", "Has a cat named Miso."),
                fact("drink", "Prefers tea."),
            ]
        }
    )
    report = flush(store, "I moved to Berlin, got a cat, Miso, and I drink tea now.", "mock",
                   source="chat.json")  # fmt: skip
    assert report.counts()["created"] == 1 and report.counts()["updated"] == 2
    clock.advance(days=1)
    store.upsert("user", "drink", "Prefers mate.", source="cli")  # changed since: kept
    dry = store.undo_flush("chat.json", dry_run=True)
    assert store.get("user", "pet") is not None  # a dry run writes nothing
    undone = store.undo_flush("chat.json")
    assert undone.to_dict()["changes"] == dry.to_dict()["changes"]
    assert {(c.action, c.key) for c in undone.changes} == {
        ("reverted", "home_city"),
        ("deleted", "pet"),
        ("kept", "drink"),
    }
    assert store.get("user", "home_city").value == "Lives in Paris."
    assert store.get("user", "pet") is None
    assert store.get("user", "drink").value == "Prefers mate."
    entries = store.history(reason="undo")
    assert {e.key for e in entries} == {"home_city", "pet"}
    assert all(e.changed_by == "undo-flush:chat.json" for e in entries)
    assert store.restore("user", "pet").fact.value == "Has a cat named Miso."  # a way back
    assert store.undo_flush("chat.json").changes[0].action == "deleted"  # pet again
    assert store.undo_flush("nothing.json").changes == []
    assert fts_integrity_error(store) is None


@BOTH_BACKENDS
def test_undo_flush_of_two_flushes_goes_back_before_both(store, clock, mock_models):
    store.upsert("user", "home_city", "Lives in Paris.", source="cli")
    for city in ("Berlin", "Rome"):
        clock.advance(days=1)
        mock_models.plain.enqueue({"facts": [fact("home_city", f"Lives in {city}.")]})
        flush(store, f"I live in {city}.", "mock", source="chat.json")
    store.undo_flush(f"flush:chat.json|model:mock|prompt:{PROMPT_VERSION}")  # the whole provenance
    assert store.get("user", "home_city").value == "Lives in Paris."


def test_cli_restore_history_undo(tmp_path, mock_models):
    db = tmp_path / "m.db"
    runner = CliRunner()

    def run(*args, code=0):
        result = runner.invoke(cli, [*args, "-d", str(db)])
        assert result.exit_code == code, result.output
        return result.output

    run("remember", "user", "home_city", "Lives in Paris.")
    run("remember", "user", "home_city", "Lives in Berlin.")
    assert "version" in run("history", "user", "home_city").splitlines()[0]
    out = run("restore", "user/home_city", "--version", "1")
    assert out == "restored: user/home_city: Lives in Paris.\n  was: Lives in Berlin.\n"
    rows = json.loads(run("history", "--all", "--since", "1h", "--json"))
    assert [(r["reason"], r["changed_by"]) for r in rows] == [("restore", "cli"), ("update", "cli")]
    assert "restore" not in run("history", "--all", "--reason", "update")
    assert "give SLOT/KEY or SLOT KEY, or --all" in run("history", code=2)
    assert "Error: user/home_city has no version 9" in run(
        "restore", "user/home_city", "--version", "9", code=1
    )
    assert "SLOT/KEY" in run("restore", "home_city", code=2)
    transcript = tmp_path / "chat.json"
    transcript.write_text(json.dumps([{"role": "user", "content": "I have a cat."}]))
    mock_models.plain.enqueue({"facts": [fact("pet", "Has a cat.")]})
    out = run("flush", str(transcript), "-m", "mock")
    assert "To revert it: slotmem undo-flush chat.json" in out
    assert "deleted  user  pet" in run("undo-flush", "chat.json", "--dry-run")
    assert json.loads(run("undo-flush", "chat.json", "--json"))["counts"] == {"deleted": 1}
    assert "no fact holds a value from a flush of 'chat.json'" in run("undo-flush", "chat.json")
    with Store(db) as store:
        assert store.get("user", "pet") is None
