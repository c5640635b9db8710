import dataclasses

import pytest

from slotmem import InvalidInput, Store
from tests.conftest import fts_integrity_error


def test_upsert_creates_updates_and_leaves_unchanged(store, clock):
    created = store.upsert("user", "timezone", "Europe/Stockholm", confidence=0.9, source="cli")
    assert created.action == "created" and created.previous is None
    assert created.fact.created_at == created.fact.updated_at == clock.now

    clock.advance(ms=5)
    same = store.upsert("user", "timezone", "Europe/Stockholm", confidence=0.9, source="cli")
    assert same.action == "unchanged"
    assert store.history("user", "timezone") == []

    clock.advance(ms=5)
    updated = store.upsert("user", "timezone", "America/New_York", confidence=0.8, source="chat")
    assert updated.action == "updated"
    assert updated.previous.value == "Europe/Stockholm"
    assert updated.fact.id == created.fact.id
    assert (
        updated.fact.updated_at == clock.now and updated.fact.created_at == created.fact.created_at
    )
    assert store.get("user", "timezone") == updated.fact

    [entry] = store.history("user", "timezone")
    assert (entry.value, entry.confidence, entry.reason, entry.source) == (
        "Europe/Stockholm",
        0.9,
        "update",
        "cli",
    )
    assert entry.changed_by == "chat"


def test_confidence_change_alone_is_an_update(store):
    store.upsert("user", "k", "v", confidence=0.5)
    assert store.upsert("user", "k", "v", confidence=0.6).action == "updated"
    assert [h.confidence for h in store.history("user", "k")] == [0.5]


def test_history_is_newest_first(store):
    for value in ["one", "two", "three", "four"]:
        store.upsert("project", "phase", value)
    assert [h.value for h in store.history("project", "phase")] == ["three", "two", "one"]
    assert [h.value for h in store.history("project", "phase", limit=1)] == ["three"]


def test_delete_keeps_history(store):
    store.upsert("user", "pet", "a cat named Miso")
    assert store.delete("user", "pet") is True
    assert store.get("user", "pet") is None
    assert store.delete("user", "pet") is False
    [entry] = store.history("user", "pet")
    assert (entry.value, entry.reason) == ("a cat named Miso", "delete")
    assert store.query_facts("cat Miso") == []


def test_same_key_in_different_slots_is_two_facts(store):
    store.upsert("user", "name", "Maja")
    store.upsert("project", "name", "Ledgerline")
    assert store.get("user", "name").value == "Maja"
    assert store.get("project", "name").value == "Ledgerline"


def test_upsert_many_is_one_transaction(store):
    results = store.upsert_many(
        [
            {"slot": "user", "key": "a", "value": "alpha"},
            {"slot": "user", "key": "b", "value": "beta", "confidence": 0.5, "source": "import"},
        ]
    )
    assert [r.action for r in results] == ["created", "created"]
    with pytest.raises(InvalidInput, match="item 1"):
        store.upsert_many(
            [
                {"slot": "user", "key": "c", "value": "gamma"},
                {"slot": "user", "key": "d", "value": ""},
            ]
        )
    assert store.get("user", "c") is None


def test_upsert_many_updates_and_reports_previous(store):
    store.upsert("user", "city", "Paris")
    [result] = store.upsert_many([{"slot": "user", "key": "city", "value": "Berlin"}])
    assert result.action == "updated" and result.previous.value == "Paris"


@pytest.mark.parametrize(
    "slot, key, value, confidence, message",
    [
        ("User", "k", "v", 1.0, "invalid slot"),
        ("1user", "k", "v", 1.0, "invalid slot"),
        ("", "k", "v", 1.0, "invalid slot"),
        ("user slot", "k", "v", 1.0, "invalid slot"),
        ("user", "", "v", 1.0, "key must not be empty"),
        ("user", "   ", "v", 1.0, "key must not be empty"),
        ("user", "k", "", 1.0, "value must not be empty"),
        ("user", "k\x00", "v", 1.0, "control character"),
        ("user", "k", "nul\x00byte", 1.0, "control character"),
        ("user", "k", "a\ud800b", 1.0, "not valid Unicode"),
        ("user", "k" * 201, "v", 1.0, "limit is 200"),
        ("user", "k", "v" * 4001, 1.0, "limit is 4000"),
        ("user", "k", "v", 1.5, "confidence"),
        ("user", "k", "v", -0.1, "confidence"),
        ("user", "k", "v", float("nan"), "confidence"),
        ("user", "k", "v", "high", "confidence"),
        ("user", "k", 42, 1.0, "must be a string"),
        ("user", None, "v", 1.0, "must be a string"),
    ],
)
def test_bad_input_raises_and_writes_nothing(store, slot, key, value, confidence, message):
    with pytest.raises(InvalidInput, match=message):
        store.upsert(slot, key, value, confidence=confidence)
    assert store.stats()["facts"] == 0


def test_unicode_values_round_trip(store):
    values = {
        "emoji": "likes 🍣 and 🏔️",
        "cjk": "我喜欢喝咖啡",
        "quotes": "he said \"hi\" 'ok'",
        "multiline": "line one\nline two\ttabbed",
    }
    for key, value in values.items():
        store.upsert("user", key, value)
    for key, value in values.items():
        assert store.get("user", key).value == value
    assert fts_integrity_error(store) is None


def test_list_facts_orders(store, clock):
    for key in ["alpha", "beta", "gamma"]:
        store.upsert("project", key, f"value {key}")
        clock.advance(ms=10)
    store.query_facts("beta", slots=["project"])
    assert [f.key for f in store.list_facts("project", limit=1)] == ["beta"]
    assert next(f.key for f in store.list_facts("project", order="used")) == "beta"
    assert [f.key for f in store.list_facts("project", order="created")] == [
        "gamma",
        "beta",
        "alpha",
    ]
    assert [f.key for f in store.list_facts("project", order="key")] == ["alpha", "beta", "gamma"]
    assert store.list_facts("user") == []
    with pytest.raises(InvalidInput):
        store.list_facts("project", order="random")


def test_rate_changes_quality_and_logs_feedback(store):
    store.upsert("agent", "lesson", "run tests first")
    assert store.rate("agent", "lesson", 3).quality == 3
    assert store.rate("agent", "lesson", -1, "too strict").quality == 1  # round(mean(3, -1))
    assert store.stats()["feedback"] == 2
    with pytest.raises(InvalidInput):
        store.rate("agent", "lesson", 4)
    with pytest.raises(InvalidInput, match="no fact"):
        store.rate("agent", "missing", 1)


def test_reopen_keeps_facts(db_path, clock):
    with Store(db_path, create=True, clock=clock) as first:
        first.upsert("user", "k", "v")
    with Store(db_path, create=True, clock=clock) as second:
        assert second.get("user", "k").value == "v"
        assert second.migrated == []


def test_memory_path_is_refused():
    with pytest.raises(InvalidInput):
        Store(":memory:")


def test_transaction_groups_writes_and_rolls_back(store):
    with pytest.raises(RuntimeError), store.transaction():
        store.upsert("user", "a", "one")
        raise RuntimeError("boom")
    assert store.get("user", "a") is None


def test_upsert_many_with_repeated_and_existing_keys(store):
    store.upsert("user", "city", "Paris")
    results = store.upsert_many(
        [
            {"slot": "user", "key": "pet", "value": "cat"},
            {"slot": "user", "key": "city", "value": "Berlin"},
            {"slot": "user", "key": "pet", "value": "dog"},
            {"slot": "user", "key": "pet", "value": "dog"},
            {"slot": "project", "key": "pet", "value": "none"},
        ]
    )
    assert [r.action for r in results] == ["created", "updated", "updated", "unchanged", "created"]
    assert results[2].previous.value == "cat"
    assert [h.value for h in store.history("user", "pet")] == ["cat"]
    assert [h.value for h in store.history("user", "city")] == ["Paris"]
    assert store.get("user", "pet").value == "dog"
    assert results[0].fact.id == store.get("user", "pet").id


def test_a_protected_fact_refuses_guarded_writes(store):
    from slotmem import ProtectedFact

    store.upsert("user", "tz", "Europe/Stockholm")
    assert store.upsert("user", "tz", "Europe/Stockholm", protect=True).fact.protected
    assert not store.history("user", "tz")  # protecting an unchanged value is no update
    same = store.upsert("user", "tz", "Europe/Stockholm", allow_protected=False)
    assert same.action == "unchanged"
    with pytest.raises(ProtectedFact, match="user/tz is protected"):
        store.upsert("user", "tz", "UTC", source="agent", allow_protected=False)
    with pytest.raises(ProtectedFact, match="cannot forget it"):
        store.delete("user", "tz", allow_protected=False)
    assert store.get("user", "tz").value == "Europe/Stockholm" and not store.history("user", "tz")
    updated = store.upsert("user", "tz", "UTC")  # the owner's call: protection stays
    assert updated.action == "updated" and updated.fact.protected
    assert store.get("user", "tz").protected_at == updated.previous.protected_at
    store.unprotect("user", "tz")
    assert store.delete("user", "tz", allow_protected=False)


def test_a_bulk_load_gives_each_fact_its_own_random_id_and_whole_facts(store):
    """upsert_many makes its facts without Fact's __init__ and its ids from one random read."""
    import re

    results = store.upsert_many(
        [{"slot": "user", "key": f"k{i}", "value": f"value {i}", "ttl": "1d"} for i in range(300)]
    )
    ids = [result.fact.id for result in results]
    assert len(set(ids)) == 300 and all(re.fullmatch("[0-9a-f]{16}", i) for i in ids)
    for result in results[:3]:
        stored = store.get("user", result.fact.key)
        assert result.fact == stored and hash(result.fact) == hash(stored)
        assert repr(result.fact) == repr(stored)
    with pytest.raises(dataclasses.FrozenInstanceError):
        results[0].fact.value = "changed"  # type: ignore[misc]


def test_a_single_line_text_names_its_control_character_before_a_line_break(store):
    with pytest.raises(InvalidInput, match=r"key contains a control character \('\\x01'\)"):
        store.upsert("user", "a\nb\x01", "v")
    with pytest.raises(InvalidInput, match=r"key contains a control character \('\\n'\)"):
        store.upsert("user", "a\nb", "v")
    assert store.list_facts() == []


def test_a_bulk_load_leaves_the_cycle_collector_as_it_found_it(store):
    """upsert_many pauses Python's cycle collector while it makes its objects: it is on again
    after, even when a write in the middle raises, and stays off for a caller who turned it off."""
    import gc

    from slotmem import ProtectedFact

    store.upsert("user", "locked", "kept", protect=True)
    items = [{"slot": "user", "key": f"k{i}", "value": "v"} for i in range(10)]
    items.append({"slot": "user", "key": "locked", "value": "changed"})
    assert gc.isenabled()
    with pytest.raises(ProtectedFact):
        store.upsert_many(items, allow_protected=False)
    assert gc.isenabled()
    assert store.get("user", "locked").value == "kept" and store.get("user", "k0") is None
    gc.disable()
    try:
        store.upsert_many(items[:3])
        assert not gc.isenabled()
    finally:
        gc.enable()
