"""The flush tools: an agent asks its memory to remember the conversation so far. Over MCP the
client's own model reads it (sampling: mid-call up to MCP 2025-11-25, in input_required rounds
from 2026-07-28), else the server's --flush-model; in llm, the toolbox's model. Scoped like the
other write tools."""

import asyncio
import json

import pytest
from click.testing import CliRunner
from mcp import Client, types

from slotmem import Store
from slotmem.agents.llm_plugin import Slotmem
from slotmem.agents.mcp_server import build_server
from slotmem.cli import cli

pytest_plugins = ["llm_mock"]  # fixtures: mock_models, llm_user_dir

CHAT = [
    {"role": "user", "content": "We decided to deploy on Thursdays from now on. I'm in Lisbon."},
    {"role": "assistant", "content": "Noted: Thursday deploys."},
]


def reply(*facts):
    return json.dumps(
        {"facts": [{"slot": s, "key": k, "value": v, "confidence": 0.9} for s, k, v in facts]}
    )


class Sampler:
    """An MCP client's sampling callback: answers each request with the next reply queued,
    recording what it was asked."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        text = self.replies.pop(0)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=text), model="claude-x"
        )


def call_flush(server, arguments, sampler=None, mode="auto"):
    async def go():
        async with Client(server, sampling_callback=sampler, mode=mode) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("flush", arguments)

    return asyncio.run(go())


@pytest.fixture
def people(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "timezone", "Maja lives in Stockholm (CET)", protect=True)
        store.upsert("project", "deploy", "We deploy on Tuesdays", source="agent")
    return db_path


@pytest.mark.parametrize(
    "mode", ["legacy", "auto"], ids=["2025-11-25 mid-call", "2026-07-28 rounds"]
)
def test_flush_through_the_clients_sampling(people, mode):
    sampler = Sampler(reply(("project", "deploy", "We deploy on Thursdays.")))
    tools, result = call_flush(
        build_server(Store(people)),
        {"conversation": CHAT, "conversation_id": "chat-7"},
        sampler,
        mode,
    )
    assert "flush" in tools
    assert not result.is_error, result.content
    done = result.structured_content
    assert done["model"] == "mcp-sampling" and done["source"] == "mcp:chat-7"
    assert done["facts"] == [
        {
            "action": "updated",
            "slot": "project",
            "key": "deploy",
            "value": "We deploy on Thursdays.",
            "reason": None,
        }
    ]
    (asked,) = sampler.asked
    assert "deploy on Thursdays from now on" in asked.messages[0].content.text
    assert "JSON" in asked.system_prompt  # the flusher's instructions ride the system prompt
    with Store(people) as store:
        fact = store.get("project", "deploy")
        assert fact.value == "We deploy on Thursdays."
        assert fact.source.startswith("flush:mcp:chat-7|model:mcp-sampling")


def test_a_long_conversation_takes_one_round_per_chunk(people):
    """From 2026-07-28 each question is a round of input_required; the answers are replayed
    and nothing is written before the last round."""
    long = [
        {"role": "user", "content": f"Part {n}: " + "we talked about the weather. " * 300}
        for n in range(3)
    ]
    long.append({"role": "user", "content": "Also: the staging database is db-stage-2."})
    sampler = Sampler(
        reply(),
        reply(("project", "weather", "Talked about the weather.")),
        reply(("project", "staging.db", "Staging database is db-stage-2.")),
    )
    _, result = call_flush(build_server(Store(people)), {"conversation": long}, sampler)
    assert not result.is_error, result.content
    assert len(sampler.asked) == 3  # three chunks, three rounds, each question asked once
    texts = [params.messages[0].content.text for params in sampler.asked]
    assert ["Part 0" in t for t in texts] == [True, False, False]
    assert "db-stage-2" in texts[2] and "db-stage-2" not in texts[0] + texts[1]
    assert result.structured_content["counts"]["created"] == 2
    with Store(people) as store:
        assert store.get("project", "staging.db").value == "Staging database is db-stage-2."


def test_flushing_a_growing_conversation_sends_only_what_is_new(people):
    sampler = Sampler(
        reply(("project", "deploy", "We deploy on Thursdays.")),
        reply(("project", "ci", "CI runs on every push.")),
    )
    server = build_server(Store(people))
    grown = [*CHAT, {"role": "user", "content": "And CI now runs on every push."}]
    _, first = call_flush(server, {"conversation": CHAT, "conversation_id": "c1"}, sampler)
    _, second = call_flush(server, {"conversation": grown, "conversation_id": "c1"}, sampler)
    _, third = call_flush(server, {"conversation": grown, "conversation_id": "c1"}, sampler)
    assert not (first.is_error or second.is_error or third.is_error)
    assert len(sampler.asked) == 2  # the third flush had nothing new to read
    new = sampler.asked[1].messages[0].content.text
    assert new.count("CI now runs on every push") == 1
    assert third.structured_content["facts"] == []
    with Store(people) as store:
        assert store.get("project", "ci").value == "CI runs on every push."


def test_a_client_without_sampling_uses_the_servers_flush_model(people, mock_models):
    mock_models.plain.enqueue(reply(("user", "home_city", "Maja lives in Lisbon.")))
    _, result = call_flush(build_server(Store(people), flush_model="mock"), {"conversation": CHAT})
    assert not result.is_error, result.content
    assert result.structured_content["model"] == "mock"
    assert "deploy on Thursdays from now on" in mock_models.plain.prompts[0].prompt
    with Store(people) as store:
        assert store.get("user", "home_city").value == "Maja lives in Lisbon."


def test_no_sampling_and_no_flush_model_says_what_to_do(people):
    _, result = call_flush(build_server(Store(people)), {"conversation": CHAT})
    assert result.is_error
    assert (
        "offers no sampling" in result.content[0].text and "--flush-model" in result.content[0].text
    )
    with Store(people) as store:
        assert store.stats()["facts"] == 2


def test_the_flush_tool_is_scoped_like_the_other_writes(people):
    sampler = Sampler(
        reply(
            ("user", "home_city", "Maja lives in Lisbon."),
            ("project", "deploy", "We deploy on Thursdays."),
        )
    )
    _, result = call_flush(
        build_server(Store(people), slots=["project"]), {"conversation": CHAT}, sampler
    )
    facts = {f["key"]: f for f in result.structured_content["facts"]}
    assert facts["home_city"]["action"] == "rejected"
    assert "slot" in facts["home_city"]["reason"]
    assert facts["deploy"]["action"] == "updated"
    system = sampler.asked[0].system_prompt  # the model is offered the scope only
    assert "- project: " in system and "- user: " not in system
    with Store(people) as store:
        assert store.get("user", "home_city") is None


def test_a_read_only_server_offers_no_flush(people):
    async def go():
        async with Client(build_server(Store(people), read_only=True)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            return tools, await client.call_tool("flush", {"conversation": CHAT})

    tools, result = asyncio.run(go())
    assert "flush" not in tools and result.is_error


@pytest.mark.parametrize("allow", [False, True])
def test_a_fact_a_person_protected_is_left_unless_allowed(people, allow):
    sampler = Sampler(reply(("user", "timezone", "Maja lives in Lisbon (WET).")))
    server = build_server(Store(people), allow_protected=allow)
    _, result = call_flush(server, {"conversation": CHAT}, sampler)
    (fact,) = result.structured_content["facts"]
    with Store(people) as store:
        value = store.get("user", "timezone").value
    if allow:
        assert fact["action"] == "updated" and value == "Maja lives in Lisbon (WET)."
    else:
        assert fact == {
            "action": "rejected",
            "slot": "user",
            "key": "timezone",
            "value": "Maja lives in Lisbon (WET).",
            "reason": "user/timezone is protected (a person wrote it)",
        }
        assert value == "Maja lives in Stockholm (CET)"


@pytest.mark.parametrize(
    "arguments,error",
    [
        ({"conversation": []}, "conversation"),
        ({"conversation": [{"role": "user"}]}, "content"),
        ({"conversation": CHAT, "model": "gpt-4o"}, "unknown argument 'model'"),
        ({"conversation": "hi", "conversation_id": "x" * 201}, "conversation_id"),
    ],
)
def test_bad_arguments_are_refused(people, arguments, error):
    _, result = call_flush(build_server(Store(people)), arguments, Sampler())
    assert result.is_error and error in result.content[0].text


def test_a_sampling_reply_without_text_is_a_clear_error(people):
    class Silent(Sampler):
        async def __call__(self, context, params):
            return types.CreateMessageResult(
                role="assistant",
                content=types.ImageContent(type="image", data="AAAA", mime_type="image/png"),
                model="x",
            )

    _, result = call_flush(build_server(Store(people)), {"conversation": CHAT}, Silent(), "legacy")
    assert (
        result.is_error and "answered the sampling request with no text" in result.content[0].text
    )


def test_mcp_flush_model_is_checked_at_start(tmp_path, llm_user_dir):
    result = CliRunner().invoke(
        cli, ["mcp", "--flush-model", "no-such-model", "-d", str(tmp_path / "m.db")]
    )
    assert result.exit_code == 1 and "Unknown model 'no-such-model'" in result.output


# -- the llm toolbox ---------------------------------------------------------------------------
def test_llm_toolbox_flush(db_path, mock_models):
    mock_models.plain.enqueue(reply(("project", "deploy", "We deploy on Thursdays.")))
    box = Slotmem(str(db_path), slots=["project"], flush_model="mock")
    done = box.flush(json.dumps(CHAT), conversation_id="llm-chat")
    assert done == "created: project/deploy"
    with Store(db_path) as store:
        assert store.get("project", "deploy").source.startswith(
            "flush:llm-tool:llm-chat|model:mock"
        )


def test_llm_toolbox_flush_reports_rejections_and_is_hidden_when_read_only(db_path, mock_models):
    mock_models.plain.enqueue(reply(("user", "home_city", "Lisbon.")))
    done = Slotmem(str(db_path), slots="project", flush_model="mock").flush("I live in Lisbon.")
    assert done.startswith("rejected: user/home_city (") and "slot" in done
    names = {tool.name for tool in Slotmem(str(db_path), read_only=True).tools()}
    assert "Slotmem_flush" not in names and "Slotmem_recall" in names
