"""Many users and agents in one memory: slots under a prefix, taken by ``PREFIX.*``."""

import pytest
from click.testing import CliRunner

from slotmem import InvalidInput
from slotmem.agents.context import build, build_context, title
from slotmem.cli import cli

# Three users and two agents in one memory, as Mem0's user_id / agent_id or LangGraph's
# namespaces would put them, beside the plain project slot.
FACTS = [
    ("user.maja", "city", "Maja lives in Porto."),
    ("user.maja", "coffee", "Maja drinks flat whites."),
    ("user.jonas", "city", "Jonas lives in Porto too, near the river."),
    ("user.ana", "city", "Ana lives in Lisbon."),
    ("agent.planner", "lesson.porto", "Trains to Porto leave every hour."),
    ("agent.coder", "lesson.tests", "Run the tests before pushing."),
    ("project", "office", "The office is in Porto."),
]


@pytest.fixture
def memory(store):
    store.upsert_many({"slot": s, "key": k, "value": v} for s, k, v in FACTS)
    return store


def slots_of(hits):
    return {hit.fact.slot for hit in hits}


@pytest.mark.parametrize("user", ["user.maja", "user.jonas", "user.ana"])
def test_each_users_scope_sees_only_their_facts(memory, user):
    assert slots_of(memory.query_facts("Porto Lisbon city", slots=[user])) <= {user}
    assert {f.slot for f in memory.list_facts(user)} == {user}
    ctx = build(memory, "Who lives in Porto or Lisbon?", [user], track_access=False)
    assert {item.slot for item in ctx.facts()} == {user}


def test_a_prefix_takes_every_slot_under_it_and_nothing_else(memory):
    assert memory.slot_names("user.*") == ["user.ana", "user.jonas", "user.maja"]
    assert memory.slot_names(["agent.*", "project"]) == ["agent.coder", "agent.planner", "project"]
    hits = memory.query_facts("Porto", slots="user.*", limit=20)
    assert slots_of(hits) == {"user.maja", "user.jonas"}
    assert {f.slot for f in memory.list_facts("agent.*")} == {"agent.planner", "agent.coder"}
    assert memory.query_facts("Porto", slots="nobody.*") == []  # takes no slot: finds nothing


def test_user_prefix_also_takes_the_plain_user_slot(memory):
    memory.upsert("user", "name", "The owner is Maja.")
    assert memory.slot_names("user.*")[0] == "user"
    assert "userx" not in memory.slot_names("user.*")


def test_the_default_context_covers_every_slot_with_readable_headings(memory):
    memory.upsert("episodes", "run.1", "Planned a trip to Porto.")  # its own section, on request
    ctx = build(memory, "Who lives in Porto?", track_access=False)
    slots = [section.slot for section in ctx.sections]
    assert "user.maja" in slots and "project" in slots and "agent.planner" in slots
    assert "episodes" not in slots
    assert slots.index("user.maja") < slots.index("project") < slots.index("agent.planner")
    assert "## What I know about the user (maja)" in ctx.text
    assert "## Lessons I have learned (planner)" in ctx.text


def test_headings():
    assert title("user") == "What I know about the user"
    assert title("user.maja") == "What I know about the user (maja)"
    assert title("memories.maja.work") == "Memories (maja / work)"
    assert title("my_notes") == "My notes"


def test_ids_as_keys_are_left_out_of_the_bullets(store):
    store.upsert("memories.maja", "3f2a9c1e-7b4d-4e2a-9c1e-7b4d4e2a9c1e", "Maja likes hiking.")
    store.upsert("memories.maja", "hiking.boots", "Maja's boots are size 39 for hiking.")
    text = build_context(store, "hiking", "memories.*")
    assert "- Maja likes hiking." in text and "3f2a9c1e" not in text
    assert "- **hiking.boots**: Maja's boots" in text


@pytest.mark.parametrize("bad", ["User.*", "user*", ".*", "user.**", "user.*.x", ""])
def test_a_malformed_selector_is_refused_in_one_line(memory, bad):
    with pytest.raises(InvalidInput, match=r"PREFIX\.\*"):
        memory.query_facts("Porto", slots=[bad])


def test_the_command_line_takes_prefixes(memory, db_path):
    memory.close()
    out = CliRunner().invoke(cli, ["search", "Porto", "-s", "user.*", "--json", "-d", str(db_path)])
    assert out.exit_code == 0, out.output
    assert '"user.maja"' in out.output and '"project"' not in out.output
    out = CliRunner().invoke(cli, ["context", "Who lives in Porto?", "-d", str(db_path)])
    assert "What I know about the user (maja)" in out.output and "office" in out.output
    out = CliRunner().invoke(cli, ["context", "Porto", "-s", "User.*", "-d", str(db_path)])
    assert out.exit_code != 0 and "PREFIX.*" in out.output


# -- the agents' surfaces: MCP, the llm toolbox, LangGraph ------------------------------------
def mcp_call(store, slots, tool, arguments):
    import asyncio

    from mcp import Client

    from slotmem.agents.mcp_server import build_server

    async def go():
        async with Client(build_server(store, slots=slots)) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(go())


def mcp_text(result) -> str:
    return "".join(part.text for part in result.content if hasattr(part, "text"))


def test_an_mcp_server_scoped_to_users_sees_every_user_slot_and_nothing_else(memory):
    recalled = mcp_call(memory, "user.*", "recall", {"query": "Porto city trains office"})
    slots = {fact["slot"] for fact in recalled.structured_content["facts"]}
    assert slots == {"user.maja", "user.jonas", "user.ana"}  # no agent, no project
    listed = mcp_call(memory, "user.*", "list", {"slot": "user.ana"})
    assert [f["key"] for f in listed.structured_content["facts"]] == ["city"]
    for tool, arguments in [
        ("get", {"slot": "agent.planner", "key": "lesson.porto"}),
        ("list", {"slot": "project"}),
        ("remember", {"slot": "agent.coder", "key": "x", "value": "Something new."}),
        ("recall", {"query": "Porto", "slot": "userx"}),
    ]:
        result = mcp_call(memory, "user.*", tool, arguments)
        assert result.is_error and "outside this agent's scope" in mcp_text(result), tool
    assert memory.get("agent.coder", "x") is None
    written = mcp_call(
        memory,
        "user.*",
        "remember",
        {"slot": "user.bo", "key": "city", "value": "Bo lives in Malmö."},
    )
    assert not written.is_error and memory.get("user.bo", "city") is not None


@pytest.mark.parametrize("user", ["user.maja", "user.jonas"])
def test_one_users_mcp_server_and_context_see_only_theirs(memory, user):
    recalled = mcp_call(memory, [user], "recall", {"query": "Porto Lisbon city"})
    assert {fact["slot"] for fact in recalled.structured_content["facts"]} == {user}
    context = mcp_call(memory, [user], "context", {"message": "Who lives in Porto?"})
    other = "jonas" if user == "user.maja" else "maja"
    assert other not in mcp_text(context).lower()


def test_the_llm_toolbox_and_langgraph_take_prefix_scopes(memory, db_path):
    import json

    from slotmem.agents.llm_plugin import Slotmem
    from slotmem.integrations.langgraph import SlotmemStore

    memory.close()
    toolbox = Slotmem(str(db_path), slots="agent.*")
    found = json.loads(toolbox.recall("Porto trains tests"))
    assert {fact["slot"] for fact in found} == {"agent.planner", "agent.coder"}
    store = SlotmemStore(str(db_path), slots=["user.*"])
    assert store.get(("user", "maja"), "city") is not None
    assert sorted(store.list_namespaces(prefix=("user",))) == [
        ("user", "ana"),
        ("user", "jonas"),
        ("user", "maja"),
    ]
    with pytest.raises(Exception, match="outside this store's scope"):
        store.get(("agent", "planner"), "lesson.porto")
