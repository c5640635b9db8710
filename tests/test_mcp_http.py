"""`slotmem mcp --http`: a real process on 127.0.0.1 and the official SDK client. The bearer
token, the addresses it refuses, and 20 clients writing at once. (The tool tests themselves
run over HTTP in test_mcp_server.py.)"""

import asyncio
import json

import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp_transports import TOKEN, Servers

from slotmem import Store
from slotmem.agents import mcp_http
from slotmem.cli import cli
from slotmem.errors import InvalidInput

CLIENTS, WRITES_EACH = 20, 3
ALL_CLIENTS_SECONDS = 300  # a generous bound on the whole concurrent run, not a measurement

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def servers():
    started = Servers()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture
def memory(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("user", "timezone", "Maja lives in Stockholm (CET)", protect=True)
    return db_path


def facts_in(db_path) -> int:
    with Store(db_path) as store:
        return store.stats()["facts"]


async def remember(server, token, key):
    async with Client(server.transport(token)) as client:
        arguments = {"slot": "project", "key": key, "value": f"{key} is written"}
        return await client.call_tool("remember", arguments)


def test_a_request_without_or_with_a_wrong_token_gets_401_and_changes_nothing(memory, servers):
    server = servers.start(memory)
    bare = httpx2.post(server.url, json=INITIALIZE, headers=ACCEPT, timeout=30)
    wrong = httpx2.post(
        server.url,
        json=INITIALIZE,
        headers={**ACCEPT, "Authorization": "Bearer not-the-token"},
        timeout=30,
    )
    basic = httpx2.post(
        server.url,
        json=INITIALIZE,
        headers={**ACCEPT, "Authorization": f"Basic {TOKEN}"},
        timeout=30,
    )
    right = httpx2.post(
        server.url,
        json=INITIALIZE,
        headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )
    for refused in (bare, wrong, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert json.loads(refused.text)["error"] == "invalid_token"
    assert right.status_code == 200
    rebound = httpx2.post(  # the right token, through a name that rebinds to 127.0.0.1
        server.url,
        json=INITIALIZE,
        headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example:80"},
        timeout=30,
    )
    assert rebound.status_code in (400, 403, 421)

    with pytest.raises(Exception) as refused:  # the SDK raises it inside exception groups
        asyncio.run(asyncio.wait_for(remember(server, "not-the-token", "intruder"), 120))
    assert "Server returned an error response" in repr(refused.value)
    assert facts_in(memory) == 1  # the refused client wrote nothing

    done = asyncio.run(asyncio.wait_for(remember(server, TOKEN, "welcome"), 120))
    assert done.structured_content["action"] == "created" and facts_in(memory) == 2


def test_twenty_concurrent_clients_lose_no_write(memory, servers):
    server = servers.start(memory)

    async def client(number):
        async with Client(server.transport()) as session:
            results = []
            for write in range(WRITES_EACH):
                key = f"client{number}.fact{write}"
                arguments = {"slot": "project", "key": key, "value": f"Written by {number}"}
                results.append(await session.call_tool("remember", arguments))
            return results

    async def everyone():
        runs = asyncio.gather(*(client(number) for number in range(CLIENTS)))
        return await asyncio.wait_for(runs, ALL_CLIENTS_SECONDS)

    results = [result for run in asyncio.run(everyone()) for result in run]
    assert [r.is_error for r in results] == [False] * (CLIENTS * WRITES_EACH)
    assert {r.structured_content["action"] for r in results} == {"created"}
    with Store(memory) as store:
        keys = {fact.key for fact in store.list_facts("project", limit=None)}
        assert keys == {f"client{n}.fact{w}" for n in range(CLIENTS) for w in range(WRITES_EACH)}
        assert store.stats()["facts"] == 1 + CLIENTS * WRITES_EACH


def test_loopback_without_a_token_with_the_scoping_options(memory, servers):
    """On loopback a token is optional; --allow-protected and --slots hold as over stdio."""
    server = servers.start(memory, "--slots", "user", "--allow-protected", token=None)

    async def steps():
        async with Client(server.transport()) as client:
            changed = await client.call_tool(
                "remember", {"slot": "user", "key": "timezone", "value": "Maja is in Lisbon"}
            )
            outside = await client.call_tool(
                "remember", {"slot": "project", "key": "k", "value": "v"}
            )
            return changed, outside

    changed, outside = asyncio.run(asyncio.wait_for(steps(), 120))
    assert changed.structured_content["action"] == "updated"
    assert outside.is_error and "Input should be 'user'" in outside.content[0].text


@pytest.mark.parametrize(
    "arguments,words",
    [
        (["--http", "0.0.0.0:8765"], "refusing to serve 0.0.0.0 without a token"),
        (["--http", "[::]:8765"], "refusing to serve :: without a token"),
        (["--http", "memory.example.org:8765"], "refusing to serve memory.example.org"),
        (["--http", "127.0.0.1"], "--http takes HOST:PORT"),
        (["--http", "127.0.0.1:0"], "--http takes HOST:PORT"),
        (["--http", "127.0.0.1:70000"], "--http takes HOST:PORT"),
        (["--http", "127.0.0.1:http"], "--http takes HOST:PORT"),
        (["--http", "127.0.0.1:8765", "--token", "  "], "the token must not be empty"),
        (["--token", TOKEN], "--token goes with --http"),
    ],
)
def test_what_is_refused_before_serving_creates_no_file(tmp_path, monkeypatch, arguments, words):
    def serve(*args):  # were it not refused, the test fails here instead of serving
        raise AssertionError(f"served {arguments}")

    monkeypatch.setattr(mcp_http, "serve", serve)
    monkeypatch.setattr("mcp.server.mcpserver.MCPServer.run", serve)
    result = CliRunner().invoke(
        cli,
        ["mcp", *arguments, "-d", str(tmp_path / "new.db")],
        env={"SLOTMEM_MCP_TOKEN": None},
    )
    assert result.exit_code != 0 and words in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "host,loopback",
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("192.168.1.4", False),
        ("::", False),
        ("localhost.example.org", False),
    ],
)
def test_loopback_is_what_never_leaves_the_machine(host, loopback):
    assert mcp_http.is_loopback(host) is loopback
    if not loopback:
        with pytest.raises(InvalidInput, match="without a token"):
            mcp_http.checked_token(host, None)


def test_addresses_are_read_as_host_and_port():
    assert mcp_http.address("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert mcp_http.address("[::1]:8765") == ("::1", 8765)
    assert mcp_http.address(":8765") == ("127.0.0.1", 8765)
    assert mcp_http.url("::1", 8765) == "http://[::1]:8765/mcp"
