"""upsert_many's items checked a column at a time (slotmem/storage/items.py): the same facts
as checked one by one, and every bad item still named, with nothing written."""

import pytest
from conftest import BOTH_BACKENDS

from slotmem import InvalidInput, validation
from slotmem.storage import items as batch_items

PLAIN = [
    {"slot": "user", "key": f"k{i}", "value": f"value {i}", "confidence": 0.5, "source": "s"}
    for i in range(5)
]
GOOD = [
    {"slot": "user", "key": "emoji", "value": "likes 🍣 and 🏔️", "source": "chat 💬"},
    {"slot": "user", "key": "咖啡", "value": "我喜欢喝咖啡", "confidence": 1},
    {"slot": "project", "key": "  padded key\u3000", "value": "\n two lines\nand\ta tab \t"},
    {"slot": "agent.x-1", "key": "k" * 200, "value": "v" * 4000, "confidence": 0},
    {"slot": "user", "key": "Ωmega", "value": "Ünïcödé", "source": None, "confidence": 0.25},
    {"slot": "user", "key": "Pet", "value": "x", "source": "  src  "},
    {"slot": "user", "key": "pet", "value": "y"},  # one key in two spellings: both checked
]


def one_by_one(items):
    return [
        (
            *validation.fact(
                item["slot"],
                item["key"],
                item["value"],
                item.get("confidence", 1.0),
                item.get("source"),
            ),
            None,
        )
        for item in items
    ]


def test_the_column_pass_checks_as_one_by_one():
    checked, wanted = batch_items.checked(GOOD, 1)
    assert checked == one_by_one(GOOD)
    assert [type(item[3]) for item in checked] == [float] * len(GOOD)
    assert wanted == [None] * len(GOOD)


def test_plain_items_take_the_column_pass(monkeypatch):
    def refuse(*args):
        raise AssertionError("checked one by one")

    monkeypatch.setattr(validation, "fact", refuse)
    assert len(batch_items.checked(GOOD + PLAIN, 1)[0]) == len(GOOD) + len(PLAIN)
    with pytest.raises(AssertionError):  # a field the column pass leaves to the other
        batch_items.checked([*PLAIN, {**PLAIN[0], "ttl": "1h"}], 1)


@BOTH_BACKENDS
@pytest.mark.parametrize(
    "bad, message",
    [
        ({"slot": "User"}, "invalid slot"),
        ({"slot": ""}, "invalid slot"),
        ({"slot": ["user"]}, "invalid slot"),  # unhashable
        ({"key": ""}, "key must not be empty"),
        ({"key": " \t "}, "key must not be empty"),
        ({"value": ""}, "value must not be empty"),
        ({"source": "   "}, "source must not be empty"),
        ({"key": "k\x00"}, "control character"),
        ({"value": "nul\x00byte"}, "control character"),
        ({"value": "esc\x1b[31m"}, "control character"),
        ({"value": "del\x7f"}, "control character"),
        ({"source": "a\x00b"}, "control character"),
        ({"key": "two\nlines"}, "control character"),
        ({"key": "a\ttab"}, "control character"),
        ({"source": "two\nlines"}, "control character"),
        ({"value": "a\ud800b"}, "not valid Unicode"),
        ({"key": "😀\udc00"}, "not valid Unicode"),
        ({"source": "\udfff x"}, "not valid Unicode"),
        ({"key": "k" * 201}, "limit is 200"),
        ({"key": "字" * 201}, "limit is 200"),
        ({"value": "v" * 4001}, "limit is 4000"),
        ({"value": "v" * 1_000_000}, "limit is 4000"),
        ({"source": "s" * 501}, "limit is 500"),
        ({"confidence": 1.5}, "confidence"),
        ({"confidence": -0.1}, "confidence"),
        ({"confidence": 2}, "confidence"),
        ({"confidence": float("nan")}, "confidence"),
        ({"confidence": True}, "confidence"),
        ({"confidence": "high"}, "confidence"),
        ({"confidence": None}, "confidence"),
        ({"value": 42}, "must be a string"),
        ({"key": None}, "must be a string"),
        ({"source": b"bytes"}, "must be a string"),
        ({"color": "red"}, r"unknown field\(s\) \['color'\]"),
    ],
)
def test_a_bad_item_among_plain_ones_is_named_and_nothing_is_written(store, bad, message):
    items = [*PLAIN, {**PLAIN[0], "key": "last", **bad}, PLAIN[1]]
    with pytest.raises(InvalidInput, match=f"item 5: .*{message}"):
        store.upsert_many(items)
    assert store.stats()["facts"] == 0


@BOTH_BACKENDS
def test_a_surrogate_pair_split_over_two_items_is_refused(store):
    items = [{**PLAIN[0], "value": "ends \ud83d"}, {**PLAIN[1], "value": "\ude00 starts"}]
    with pytest.raises(InvalidInput, match="item 0: value is not valid Unicode"):
        store.upsert_many(items)
    assert store.stats()["facts"] == 0


@BOTH_BACKENDS
def test_a_missing_field_or_an_item_not_a_dict(store):
    with pytest.raises(InvalidInput, match="item 1: needs slot, key and value"):
        store.upsert_many([PLAIN[0], {"slot": "user", "key": "k"}])
    with pytest.raises(InvalidInput, match="item 0: unknown field"):  # a tuple: its "fields"
        store.upsert_many([("user", "k", "v")])
    assert store.stats()["facts"] == 0


def test_a_batch_of_new_keys_and_one_with_repeats_write_the_same_facts(store):
    results = store.upsert_many(GOOD)
    assert [r.action for r in results] == ["created"] * 6 + ["updated"]  # Pet, then pet
    assert store.get("user", "Pet").value == "y"
    for item, result in zip(GOOD[:5] + GOOD[6:], results[:5] + results[6:]):
        assert store.get(item["slot"], result.fact.key) == result.fact  # Pet's, overwritten
    assert store.get("user", "emoji").source == "chat 💬"
    assert store.get("project", "padded key").value == "two lines\nand\ta tab"
    assert store.get("agent.x-1", "k" * 200).confidence == 0.0


def test_keys_of_one_form_in_other_slots_are_new_and_existing_ones_found_per_slot(store):
    store.upsert("user", "name", "Maja")
    store.upsert("agent", "Name", "Bot")
    results = store.upsert_many(
        [
            {"slot": slot, "key": "NAME", "value": f"{slot} name"}
            for slot in ("user", "project", "agent", "pinned")
        ]
    )
    assert [r.action for r in results] == ["updated", "created", "updated", "created"]
    assert [r.previous and r.previous.value for r in results] == ["Maja", None, "Bot", None]
    again = store.upsert_many([{"slot": s, "key": f"k{s}", "value": "v"} for s in ("a", "b")])
    assert [r.action for r in again] == ["created", "created"]
    assert store.stats()["facts"] == 6


class Strange:
    """A value whose comparisons raise (as a numpy array's truth does)."""

    def __eq__(self, other):
        raise ValueError("ambiguous")

    __hash__ = object.__hash__


@BOTH_BACKENDS
def test_values_of_other_types_are_refused_by_name_not_by_their_own_errors(store):
    with pytest.raises(InvalidInput, match="item 1: source must be a string, not Strange"):
        store.upsert_many([PLAIN[0], {**PLAIN[1], "source": Strange()}])
    with pytest.raises(InvalidInput, match="item 1: invalid slot"):
        store.upsert_many([PLAIN[0], {**PLAIN[1], "slot": Strange()}])
    assert store.stats()["facts"] == 0


def test_a_str_subclass_is_checked_one_by_one_and_written(store):
    class Name(str):
        pass

    results = store.upsert_many([{**PLAIN[0], "slot": Name("user"), "key": Name(" k ")}])
    assert store.get("user", "k").value == PLAIN[0]["value"] == results[0].fact.value
