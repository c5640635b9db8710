"""upsert_many's results of new keys make their Fact when it is first read (records.created):
each is an UpsertResult equal in every way to one made whole; and the keys a batch finds
already in the file, whichever way they are looked up (a slot read whole, or the batch's key
forms looked up), take the update path."""

import copy
import dataclasses
import pickle

import pytest

from slotmem.records import Fact, UpsertResult, created


def _whole(store, result: UpsertResult) -> UpsertResult:
    stored = store.get(result.fact.slot, result.fact.key)
    return UpsertResult("created", dataclasses.replace(stored, tags=()))


def test_created_results_equal_results_made_whole(store):
    results = store.upsert_many(
        [
            {"slot": "project", "key": f"k{i}", "value": f"value {i}", "confidence": 0.5}
            for i in range(5)
        ]
        + [{"slot": "user", "key": "name", "value": "Maja", "source": "chat"}]
    )
    for result in results:
        whole = _whole(store, result)
        assert type(result) is UpsertResult
        assert result == whole and hash(result) == hash(whole)
        assert repr(result) == repr(whole)
        assert dataclasses.asdict(result) == dataclasses.asdict(whole)
        assert result.fact is result.fact and result.previous is None


@pytest.mark.parametrize(
    "copied",
    [
        lambda r: pickle.loads(pickle.dumps(r)),
        copy.copy,
        copy.deepcopy,
        lambda r: dataclasses.replace(r),
    ],
    ids=["pickle", "copy", "deepcopy", "replace"],
)
def test_created_results_copy_before_their_fact_is_read(copied):
    item = ("project", "deploy", "Fridays", 0.5, None, None)
    expected = UpsertResult("created", Fact("id1", *item[:4], 0, None, 7, 7, 7, 0))
    (result,) = created(["id1"], [item], 7)
    assert copied(result) == expected
    assert result == expected


def test_a_result_without_a_fact_raises_attribute_error():
    (result,) = created(["id1"], [("s", "k", "v", 1.0, None, None)], 1)
    with pytest.raises(AttributeError, match="nope"):
        result.nope  # noqa: B018
    assert not hasattr(result, "missing")
    with pytest.raises(ValueError):
        created(["a", "b"], [("s", "k", "v", 1.0, None, None)], 1)


def test_a_slot_smaller_than_the_batch_is_read_whole_for_its_keys(store):
    store.upsert("project", "Owner", "Maja")
    results = store.upsert_many(
        [{"slot": "project", "key": "owner", "value": "Ola"}]
        + [{"slot": "project", "key": f"new.{i}", "value": "x"} for i in range(3)]
    )
    assert [r.action for r in results] == ["updated", "created", "created", "created"]
    assert results[0].fact.key == "Owner" and results[0].previous.value == "Maja"
    assert store.get("project", "Owner").value == "Ola"


def test_a_slot_larger_than_the_batch_has_the_batch_looked_up(store):
    store.upsert_many([{"slot": "project", "key": f"old.{i}", "value": "x"} for i in range(20)])
    store.upsert("project", "Owner", "Maja")
    store.upsert("user", "owner", "Per")  # another slot's key of the same form
    results = store.upsert_many(
        [
            {"slot": "project", "key": "OWNER", "value": "Ola"},
            {"slot": "project", "key": "fresh", "value": "y"},
            {"slot": "user", "key": "Owner ", "value": "Per"},
        ]
    )
    assert [r.action for r in results] == ["updated", "created", "unchanged"]
    assert store.get("project", "Owner").value == "Ola"
    assert len(store.list_facts("project")) == 22
