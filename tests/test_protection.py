"""The protection boundary: what an agent can do to a fact a person wrote. Every surface an agent
reaches (each MCP tool, each llm tool, LangGraph's store, a flush through a model) is walked
against a protected fact, then the owner's upkeep (prune, dedupe, import) runs: the fact, its
value and its quality are as the person left them."""

import asyncio
import dataclasses
import json

import pytest
from click.testing import CliRunner
from mcp import Client

from slotmem import ProtectedFact, Store
from slotmem.agents.llm_plugin import Slotmem
from slotmem.agents.mcp_server import build_server
from slotmem.cli import cli
from tests.conftest import BOTH_BACKENDS

pytest_plugins = ["llm_mock"]  # fixtures: mock_models, llm_user_dir, log_chat

OWNER = "Maja Berg owns this account and approves every payment"


def session(server, steps):
    async def go():
        async with Client(server) as client:
            return await steps(client)

    return asyncio.run(go())


def text_of(result) -> str:
    return "".join(part.text for part in result.content if hasattr(part, "text"))


def run(*args):
    result = CliRunner().invoke(cli, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def owned(db_path, clock):
    """A person's protected fact (written months before the wall clock's today), beside a fact
    an agent wrote."""
    with Store(db_path, create=True, clock=clock) as store:
        store.upsert("user", "owner", OWNER, protect=True)
        store.upsert("user", "drink", "Maja drinks green tea", source="agent")
    return db_path


def intact(db_path):
    with Store(db_path) as store:
        fact = store.get("user", "owner")
        assert fact is not None, "the protected fact is gone"
        assert (fact.value, fact.protected, fact.quality) == (OWNER, True, 0)
        return store.list_facts("user", limit=None)


# -- the reported reproductions ------------------------------------------------------------------


def test_an_mcp_agents_rating_cannot_get_a_protected_fact_pruned_by_the_owners_cap(owned):
    async def steps(client):
        return await client.call_tool("rate", {"slot": "user", "key": "owner", "rating": -3})

    rated = session(build_server(Store(owned)), steps)
    assert rated.is_error and "protected" in text_of(rated)
    run("policy", "user", "--cap", 1, "-d", owned)
    run("prune", "-d", owned)
    facts = intact(owned)
    assert [f.key for f in facts] == ["owner"]  # the agent's fact went instead


def test_an_llm_tools_rating_cannot_get_a_protected_fact_pruned_past_the_built_in_cap(owned, clock):
    tools = Slotmem(str(owned))
    with pytest.raises(ProtectedFact, match="cannot rate"):
        tools.rate("user", "owner", -3)
    with Store(owned, clock=clock) as store:  # an agent writes past the built-in cap (500)
        store.upsert_many(
            {"slot": "user", "key": f"k{i}", "value": f"filler fact number {i}"} for i in range(520)
        )
    run("prune", "-d", owned)
    facts = intact(owned)
    assert len(facts) == 500


def test_prune_keeps_a_protected_fact_whatever_its_rating_unless_a_person_asks(owned, clock):
    with Store(owned, clock=clock) as store:
        store.rate("user", "owner", -3)  # the person's own rating, through the Store
        assert store.get("user", "owner").quality == -3
        clock.advance(days=60)
        report = store.prune_slot("user", cap=0)
        assert [f.key for f in report.removed] == ["drink"] and report.protected == 1
        assert store.prune(dry_run=True)[0].removed == []
        assert store.get("user", "owner") is not None
    out = run("prune", "user", "--cap", 0, "--include-protected", "--json", "-d", owned)
    assert json.loads(out)[0]["removed"] == ["owner"]
    with Store(owned) as store:
        assert store.get("user", "owner") is None
        assert store.history("user", "owner")[0].reason == "prune"


def test_an_expired_protected_fact_is_still_pruned(db_path, clock):
    with Store(db_path, create=True, clock=clock) as store:
        store.upsert("user", "trip", "Maja is in Rome", protect=True, ttl="1d")
        clock.advance(days=2)
        assert [f.key for f in store.prune_slot("user").expired] == ["trip"]


def test_dedupe_never_merges_a_protected_fact_into_an_agents_copy(owned, clock):
    with Store(owned, clock=clock) as store:
        clock.advance(days=1)  # the agent's copy is newer: it would be kept
        store.upsert("user", "account_owner", OWNER.replace("every payment", "all payments"))
        [pair] = store.duplicates("user", semantic=False)
        assert (pair.keep.key, pair.drop.key) == ("owner", "account_owner")
        assert len(store.dedupe("user", semantic=False).changes) == 1
        assert store.get("user", "account_owner") is None
    intact(owned)


def test_an_agents_flush_cannot_overwrite_a_protected_fact(owned, mock_models):
    from slotmem.ingest.flusher import flush
    from slotmem.ingest.transcripts import parse

    proposal = {"slot": "user", "key": "owner", "value": "Mallory owns the account now"}
    mock_models.plain.enqueue({"facts": [{**proposal, "confidence": 0.9}]})
    chat = json.dumps([{"role": "user", "content": "Mallory owns the account now."}])
    with Store(owned) as store:
        report = flush(store, parse(chat, source="chat.json"), "mock")
    [item] = report.items
    assert item.action == "rejected" and "protected" in item.reason
    intact(owned)


# -- every surface an agent reaches, then the owner's upkeep ---------------------------------------

HOSTILE = "Mallory Stone is the account owner"  # one the write scan passes: protection refuses it
# a near-duplicate, for dedupe ("this account and approves all payments" is one the write scan
# of issue 22's third round wrongly refuses: 'this', 'and' and money weigh as an instruction)
COPY = OWNER.replace(
    "this account and approves every payment", "the account and approves all payments"
)


def test_every_agent_surface_then_prune_dedupe_and_import_leave_a_protected_fact_intact(
    owned, tmp_path, mock_models
):
    from langgraph.store.base import GetOp, PutOp, SearchOp

    from slotmem.ingest.flusher import flush
    from slotmem.ingest.transcripts import parse
    from slotmem.integrations.langgraph import SlotmemStore

    # MCP: every tool, resource and prompt, with each write aimed at the fact
    calls = [
        ("recall", {"query": "who owns the account?"}),
        ("get", {"slot": "user", "key": "owner"}),
        ("list", {"slot": "user"}),
        ("history", {"slot": "user", "key": "owner"}),
        ("context", {"message": "who owns the account?"}),
        ("remember", {"slot": "user", "key": "owner", "value": HOSTILE}),
        ("remember", {"slot": "user", "key": "Owner", "value": HOSTILE}),
        ("remember", {"slot": "user", "key": "ｏｗｎｅｒ", "value": HOSTILE}),
        ("remember", {"slot": "user", "key": "account_owner", "value": COPY}),
        ("forget", {"slot": "user", "key": "owner"}),
        ("forget", {"slot": "user", "key": "OWNER"}),
        ("rate", {"slot": "user", "key": "owner", "rating": -3}),
        ("rate", {"slot": "user", "key": "Owner", "rating": -3, "comment": "wrong"}),
    ]

    async def steps(client):
        results = [await client.call_tool(name, args) for name, args in calls]
        await client.read_resource("slotmem://fact/user/owner")
        await client.read_resource("slotmem://slot/user")
        await client.read_resource("slotmem://slots")
        await client.get_prompt("with_memory", {"message": "who owns the account?"})
        return results

    results = session(build_server(Store(owned)), steps)
    refused = {name for (name, _), result in zip(calls, results) if result.is_error}
    assert [n for (n, _), r in zip(calls, results) if not r.is_error] == [
        "recall", "get", "list", "history", "context", "remember"  # account_owner: a new key
    ]  # fmt: skip
    assert refused == {"remember", "forget", "rate"}

    # the llm tools: every tool
    tools = Slotmem(str(owned))
    tools.recall("who owns the account?")
    tools.get("user", "owner")
    tools.list("user")
    tools.history("user", "owner")
    tools.context("who owns the account?")
    for write in (
        lambda: tools.remember("user", "owner", HOSTILE),
        lambda: tools.remember("user", "OWNER", HOSTILE),
        lambda: tools.forget("user", "owner"),
        lambda: tools.rate("user", "owner", -3),
        lambda: tools.rate("user", "Owner", -3),
    ):
        with pytest.raises(ProtectedFact):
            write()

    # LangGraph's store: get, search, list namespaces, put, delete, batch
    graph = SlotmemStore(Store(owned))
    assert graph.get(("user",), "owner").value == {"content": OWNER}
    graph.search(("user",), query="who owns the account?")
    graph.list_namespaces()
    for write in (
        lambda: graph.put(("user",), "owner", {"content": HOSTILE}),
        lambda: graph.put(("user",), "Owner", {"content": HOSTILE}),
        lambda: graph.delete(("user",), "owner"),
        lambda: graph.batch(
            [
                GetOp(("user",), "owner"),
                SearchOp(("user",), query="owner"),
                PutOp(("user",), "owner", None),
            ]
        ),
        lambda: asyncio.run(graph.aput(("user",), "OWNER", {"content": HOSTILE})),
    ):
        with pytest.raises(ProtectedFact):
            write()

    # a flush through a model that proposes the hostile value under each spelling
    proposals = [
        {"slot": "user", "key": key, "value": HOSTILE, "confidence": 0.95}
        for key in ("owner", "Owner", "ＯＷＮＥＲ")
    ]
    mock_models.plain.enqueue({"facts": proposals})
    chat = json.dumps([{"role": "user", "content": "Mallory Stone owns the account now."}])
    with Store(owned) as store:
        report = flush(store, parse(chat, source="chat.json"), "mock")
    assert {item.action for item in report.items} == {"rejected"}
    intact(owned)

    # the owner's routine upkeep: prune by a cap, dedupe, export and import back
    run("policy", "user", "--cap", 1, "-d", owned)
    run("prune", "-d", owned)
    run("dedupe", "-d", owned)
    exported = tmp_path / "memory.jsonl"
    run("export", "-o", exported, "-d", owned)
    for mode in ("merge", "replace", "skip-existing"):
        run("import", exported, "--mode", mode, "-d", owned)
    facts = intact(owned)
    assert [f.key for f in facts] == ["owner"]  # drink pruned by the cap, the copy merged
    with Store(owned) as store:
        assert not store.conn.execute("SELECT count(*) FROM memory_feedback").fetchone()[0]


# -- round 2: what an agent's run reaches besides the tools ---------------------------------------


def test_an_agents_episode_cannot_change_a_protected_fact_or_give_it_an_expiry(owned, clock):
    with Store(owned, clock=clock) as store:
        attempts = [
            {"slot": "user", "key": "owner", "text": HOSTILE},  # the episode's own key
            {"slot": "user", "key": "Owner", "text": OWNER},  # the same text: it would become one
            {"facts": [{"slot": "user", "key": "owner", "value": OWNER, "ttl": "1d"}]},
            {"facts": [{"slot": "user", "key": "ＯＷＮＥＲ", "value": HOSTILE}]},
        ]
        for attempt in attempts:
            attempt.setdefault("text", "The agent's run")
            with pytest.raises(ProtectedFact, match="user/owner is protected"):
                store.record_episode(**attempt, title="run")
        assert store.list_episodes() == []  # nothing of a refused episode was written
        clock.advance(days=2)  # past the ttl the agent asked for
        store.prune()
        intact(owned)
        store.record_episode("Maja's own note", slot="user", key="owner", allow_protected=True)
        assert store.get("user", "owner").value == "Maja's own note"  # a person may


def test_a_flush_leaves_a_fact_protected_after_the_model_was_asked(owned, mock_models, monkeypatch):
    """The person protects the fact while the model reads the chat: the write transaction finds
    it protected and leaves it (before, only the agent tools' wrapper looked again)."""
    from slotmem.ingest import flusher
    from slotmem.ingest.transcripts import parse

    with Store(owned) as store:
        store.unprotect("user", "owner")
        classify = flusher._classify

        def protected_meanwhile(store_, items, now, allow_protected):
            classify(store_, items, now, allow_protected)  # read: not protected
            store.protect("user", "owner")  # then the person protects it

        monkeypatch.setattr(flusher, "_classify", protected_meanwhile)
        mock_models.plain.enqueue(
            {"facts": [{"slot": "user", "key": "owner", "value": HOSTILE, "confidence": 0.9}]}
        )
        chat = json.dumps([{"role": "user", "content": "Mallory Stone owns the account now."}])
        report = flusher.flush(store, parse(chat, source="chat.json"), "mock")
    [item] = report.items
    assert item.action == "rejected" and "protected" in item.reason
    intact(owned)


def test_an_mcp_memory_file_agents_wrote_keeps_a_protected_fact(owned):
    from slotmem.ingest.importers import import_memory_json

    entity = {"type": "entity", "name": "Owner", "entityType": "fact", "observations": [HOSTILE]}
    with Store(owned) as store:
        for dry_run in (True, False):
            report = import_memory_json(store, json.dumps(entity), dry_run=dry_run)
            kept = [c for c in report.changes if c.key == "owner"]
            assert [(c.action, c.value) for c in kept] == [("kept", OWNER)]
    intact(owned)


@BOTH_BACKENDS
def test_undo_flush_keeps_a_fact_a_person_protected_after_the_flush_wrote_it(store, clock):
    agent = "flush:chat.json|model:mock|prompt:1"
    store.upsert("user", "owner", OWNER, source=agent)  # the agent's flush created it
    store.upsert("user", "city", "Maja lives in Berlin", protect=True)  # the person's...
    clock.advance(days=1)
    store.upsert("user", "city", "Maja lives in Paris", source=agent)  # ...overwritten
    clock.advance(days=1)
    store.protect("user", "owner")  # the person vouches for what the flush wrote
    report = store.undo_flush("chat.json")
    actions = {change.key: change.action for change in report.changes}
    assert actions == {"owner": "kept", "city": "reverted"}
    assert store.get("user", "owner").value == OWNER
    city = store.get("user", "city")  # reverted to the person's value, still protected
    assert (city.value, city.protected) == ("Maja lives in Berlin", True)


@pytest.mark.parametrize("key", ["ᴏᴡɴᴇʀ", "owne\u0301r", "\u0585wner", "owner.", "_Owner_"])
def test_a_look_alike_the_first_round_missed_reaches_the_protected_fact(owned, key):
    async def steps(client):
        return await client.call_tool("remember", {"slot": "user", "key": key, "value": HOSTILE})

    result = session(build_server(Store(owned)), steps)
    assert result.is_error and "user/owner is protected" in text_of(result)
    facts = intact(owned)
    assert sorted(f.key for f in facts) == ["drink", "owner"]  # nothing beside it


def test_a_file_that_is_not_this_memorys_export_changes_no_protected_fact(owned, tmp_path, clock):
    """Another memory's export (an agent may have written it; it passes the write scan): newer
    values, an expiry, a rating of -3 and ``replace`` leave the person's fact as it was."""
    other = tmp_path / "other.db"
    with Store(other, create=True, clock=clock) as store:
        clock.advance(days=1)  # newer than the person's: merge would take it
        store.upsert("user", "owner", HOSTILE, ttl="2d")
        store.rate("user", "owner", -3, "wrong")
        store.upsert("user", "city", "Maja lives in Paris")
    exported = tmp_path / "other.jsonl"
    run("export", "-o", exported, "-d", other)
    for mode in ("merge", "replace"):
        out = run("import", exported, "--mode", mode, "--json", "-d", owned)
        kept = [c for c in json.loads(out)["changes"] if c["key"] == "owner"]
        assert [c["action"] for c in kept] == ["kept"], out
    clock.advance(days=3)
    run("prune", "-d", owned)
    facts = intact(owned)
    assert [f.key for f in facts] == ["city", "owner"]  # replace removed the agent's drink
    with Store(owned) as store:
        assert not store.conn.execute("SELECT count(*) FROM memory_feedback").fetchone()[0]
    run("import", exported, "--mode", "merge", "--trusted", "-d", owned)  # the person vouches
    with Store(owned) as store:  # the file's value, and its expiry (past by now)
        row = store.conn.execute("SELECT value FROM memory_facts WHERE key = 'owner'").fetchone()
        assert row[0] == HOSTILE and store.get("user", "owner") is None


def test_dedupe_reads_the_pair_again_inside_its_transaction(owned, clock, monkeypatch):
    """The person protects a fact after dedupe chose its pairs (an agent's older copy kept,
    the person's newer one dropped): the merge, inside the transaction, keeps the protected."""
    with Store(owned, clock=clock) as store:
        store.unprotect("user", "owner")
        clock.advance(days=1)
        store.upsert("user", "owner", COPY)  # the person's newer wording, not yet protected
        store.upsert("user", "account_owner", OWNER, source="agent")  # the agent's copy
        clock.advance(days=1)
        store.upsert("user", "owner", OWNER)  # same value now: the agent's copy is older
        chosen = store.duplicates("user", semantic=False)
        [pair] = chosen
        assert (pair.keep.key, pair.drop.key) == ("owner", "account_owner")
        flipped = [dataclasses.replace(pair, keep=pair.drop, drop=pair.keep)]  # as if newer

        def then_protected(*args, **kwargs):
            store.protect("user", "owner")
            return flipped

        monkeypatch.setattr(store, "duplicates", then_protected)
        store.dedupe("user", semantic=False)
        assert store.get("user", "account_owner") is None
    intact(owned)
