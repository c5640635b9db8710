"""Keys spelled another way are the same key: an agent cannot set a look-alike of a person's
protected key beside it, and a file that already holds two spellings stays readable and says so."""

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from sqlite_utils import Database

from slotmem import InvalidInput, ProtectedFact, Store
from slotmem.agents.llm_plugin import Slotmem
from slotmem.agents.mcp_server import build_server
from slotmem.integrations.langgraph import SlotmemStore
from slotmem.storage import db, migrate
from slotmem.validation import key_form

LOOK_ALIKES = [
    "Owner",
    "OWNER",
    "owner\u200b",  # zero-width space
    "\u200bowner",
    "ow\u00adner",  # soft hyphen
    "owner\ufe0f",  # variation selector
    "ｏｗｎｅｒ",  # fullwidth (NFKC)
    "\u043ewner",  # Cyrillic о
    "ow\u0578er",  # Armenian ո
    "\u0585wner",  # Armenian օ
    "ᴏᴡɴᴇʀ",  # Latin small capitals
    "owne\u0301r",  # a combining acute accent
    "o\u0323wner",  # a combining dot below
    "owner\u0338",  # a combining overlay
    "owner.",  # punctuation at an end
    "Owner:",
    "_owner_",
    "owner\u3000",  # an ideographic space
    "ow ner",  # a space inside is another key
]


def test_key_forms_of_other_words():
    assert key_form("prİce") == key_form("prıce") == "price"  # Turkish dotted and dotless i
    assert key_form("deploy_schedule") == key_form("Deploy-Schedule") == "deploy schedule"
    assert key_form("résumé") == "resume"
    assert key_form("user/owner") != "owner"  # a key naming a slot is another key
    assert key_form("किताब") == "किताब"  # a Hindi key keeps its marks
    assert key_form("हिंदी") == "हिंदी"  # after a spacing vowel sign too
    assert key_form("мой") != key_form("мои")  # two Russian words: й is not и
    assert key_form("ӧwner") == "owner"  # a mark over a letter that looks Latin goes
    assert key_form("_") == "_" and key_form("...") == "..."  # punctuation only: kept


def test_key_forms():
    assert {key_form(k) for k in LOOK_ALIKES[:-1]} == {"owner"}
    assert key_form(LOOK_ALIKES[-1]) != "owner"
    assert key_form("Straße") == key_form("STRASSE") == "strasse"
    assert key_form("город") == "город"  # a Russian key keeps its letters
    assert key_form("deploy  schedule") == "deploy schedule"


@pytest.fixture
def owned(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "owner", "Maja Berg owns this account", protect=True)
    return db_path


def only_owner(db_path):
    with Store(db_path) as store:
        [fact] = store.list_facts("user", limit=None)
        assert (fact.key, fact.value, fact.protected) == (
            "owner",
            "Maja Berg owns this account",
            True,
        )


@pytest.mark.parametrize("key", LOOK_ALIKES[:-1])
def test_no_surface_an_agent_reaches_sets_a_look_alike_beside_a_protected_key(owned, key):
    with Store(owned) as store:  # the Store refuses what agents pass it
        with pytest.raises(ProtectedFact, match="user/owner is protected"):
            store.upsert("user", key, "Mallory owns this account", allow_protected=False)
        with pytest.raises(ProtectedFact, match="user/owner is protected"):
            store.delete("user", key, allow_protected=False)
        with pytest.raises(ProtectedFact, match="user/owner is protected"):
            store.rate("user", key, -3, allow_protected=False)
    refused = (ProtectedFact, InvalidInput)  # InvalidInput: the write scan saw a hidden character
    tools = Slotmem(str(owned))
    with pytest.raises(refused):
        tools.remember("user", key, "Mallory owns this account")
    with pytest.raises(refused):
        tools.forget("user", key)
    graph = SlotmemStore(Store(owned))
    with pytest.raises(refused):
        graph.put(("user",), key, {"content": "Mallory owns this account"})

    async def steps(client):
        return await client.call_tool(
            "remember", {"slot": "user", "key": key, "value": "Mallory owns this account"}
        )

    async def go():
        async with Client(build_server(Store(owned))) as client:
            return await steps(client)

    answer = asyncio.run(go())
    assert answer.is_error and (
        "protected" in answer.content[0].text or "hidden" in answer.content[0].text
    )
    only_owner(owned)


def test_a_person_writing_another_spelling_updates_the_fact(owned):
    with Store(owned) as store:
        done = store.upsert("user", "OWNER", "Maja and Jonas Berg own this account")
        assert (done.action, done.fact.key) == ("updated", "owner")
        assert store.get("user", "Owner\u200b").value == "Maja and Jonas Berg own this account"
        results = store.upsert_many(
            [
                {"slot": "user", "key": "city", "value": "Berlin"},
                {"slot": "user", "key": "City", "value": "Hamburg"},  # the same key, later
                {"slot": "user", "key": "ｏｗｎｅｒ", "value": "Maja Berg owns it again"},
            ]
        )
        assert [(r.action, r.fact.key) for r in results] == [
            ("created", "city"),
            ("updated", "city"),
            ("updated", "owner"),
        ]
        assert sorted(f.key for f in store.list_facts("user", limit=None)) == ["city", "owner"]
        assert store.delete("user", "CITY") and store.get("user", "city") is None


def test_import_and_restore_refuse_a_look_alike_key(owned):
    with Store(owned) as store:
        records = store.export()
        fact = next(r for r in records if r.get("key") == "owner")
        fact.update(key="Owner", id="0123456789abcdef", value="Mallory owns this account")
        lines = [json.dumps(r) for r in records]
        with pytest.raises(InvalidInput, match="spelled another way"):  # edited: --partial
            store.import_records(lines, mode="merge", partial=True)
        only_owner(owned)
        store.upsert("user", "Ｃｉｔｙ", "Berlin")
        store.delete("user", "Ｃｉｔｙ")
        store.upsert("user", "city", "Hamburg")
        with pytest.raises(InvalidInput, match="spelled another way"):
            store.restore("user", "Ｃｉｔｙ")
        assert store.get("user", "city").value == "Hamburg"


def test_a_file_with_two_spellings_stays_readable_and_the_doctor_lists_them(db_path):
    conn = db.connect(db_path, "rwc")
    names = migrate.migration_names()
    migrate.migration_set().apply(
        Database(conn), stop_before=names[names.index("0013_key_forms") :]
    )
    conn.executemany(
        "INSERT INTO memory_facts (id, slot, key, value, created_at, updated_at, last_accessed) "
        "VALUES (?, ?, ?, ?, 1, 1, 1)",
        [
            ("a" * 16, "user", "owner", "Maja Berg owns this account"),
            ("b" * 16, "user", "Owner", "Mallory owns this account"),
            ("c" * 16, "user", "drink", "Green tea"),
        ],
    )
    conn.close()
    with Store(db_path) as store:
        assert "0013_key_forms" in store.migrated
        assert store.get("user", "owner").value == "Maja Berg owns this account"
        assert store.get("user", "Owner").value == "Mallory owns this account"
        row = {r["check"]: r for r in store.doctor()}["one spelling per key"]
        assert row["ok"] is False and "user/'owner', 'Owner'" in row["detail"]
        assert store.upsert("user", "OWNER", "Maja Berg, still").fact.key == "owner"  # the oldest
        assert store.delete("user", "Owner")  # the exact spelling first
        row = {r["check"]: r for r in store.doctor()}["one spelling per key"]
        assert row["ok"] is True


def test_migration_0015_computes_the_forms_again(db_path):
    """A file whose forms 0013 computed: ``owner.`` had a form of its own then; now a write to
    ``owner`` reaches that protected fact."""
    conn = db.connect(db_path, "rwc")
    names = migrate.migration_names()
    migrate.migration_set().apply(
        Database(conn), stop_before=names[names.index("0015_key_forms_again") :]
    )
    conn.execute(
        "INSERT INTO memory_facts (id, slot, key, value, created_at, updated_at, last_accessed, "
        "protected_at, key_form) VALUES (?, 'user', 'owner.', 'Maja Berg owns this account', "
        "1, 1, 1, 1, 'owner.')",
        ("a" * 16,),
    )
    conn.close()
    with Store(db_path) as store:
        assert "0015_key_forms_again" in store.migrated
        with pytest.raises(ProtectedFact, match="user/owner. is protected"):
            store.upsert("user", "owner", "Mallory owns this account", allow_protected=False)
        assert [f.key for f in store.list_facts("user", limit=None)] == ["owner."]


@given(st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), min_size=1))
def test_an_ascii_key_has_the_form_the_general_path_gives(key):
    """key_form's path for ASCII keys is the general one (a zero-width space sends a key
    through it, and is dropped there)."""
    assert key_form(key) == key_form(key + "\u200b")
