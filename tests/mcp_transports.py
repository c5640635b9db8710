"""`slotmem mcp` as a real process, over stdio or streamable HTTP on 127.0.0.1, for the
official SDK client: the same tool tests run over both."""

import contextlib
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx2
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

TOKEN = "test-token-7f3a9c"
START_SECONDS = 60  # a loaded 2-core machine: a generous bound on the server's start


def command(*args) -> list[str]:
    """`slotmem ARGS`: this environment's script (not another one on PATH), else ``-m``."""
    script = Path(sys.executable).parent / "slotmem"
    return [str(script), *args] if script.exists() else [sys.executable, "-m", "slotmem", *args]


def stdio(db_path, *flags) -> StdioServerParameters:
    cmd = command("mcp", "-d", str(db_path), *flags)
    return StdioServerParameters(command=cmd[0], args=cmd[1:])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Http:
    """A running `slotmem mcp --http` and the token its clients send (None: none)."""

    url: str
    token: str | None = TOKEN

    def transport(self, token: str | None = None):
        """A new transport for one client session, sending ``token`` (default: the right one)."""
        return http_transport(self.url, self.token if token is None else token)


@contextlib.asynccontextmanager
async def http_transport(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else None
    timeout = httpx2.Timeout(30, read=300)  # the SDK's own client's
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


class Servers:
    """Starts `slotmem mcp --http` processes and stops every one of them at the end."""

    def __init__(self):
        self.processes: list[subprocess.Popen] = []

    def start(self, db_path, *flags, token: str | None = TOKEN) -> Http:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if k != "SLOTMEM_MCP_TOKEN"}
        if token:
            env["SLOTMEM_MCP_TOKEN"] = token
        process = subprocess.Popen(
            command("mcp", "-d", str(db_path), "--http", f"127.0.0.1:{port}", *flags),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.processes.append(process)
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_answering(process, url)
        return Http(url, token)

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
            if process.stderr:
                process.stderr.close()


def wait_until_answering(process: subprocess.Popen, url: str) -> None:
    """Until any HTTP answer comes from ``url``; fails with the server's stderr if it exits."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server exited: {process.stderr.read().decode()}")
        try:
            httpx2.get(url, timeout=5)
            return
        except httpx2.TransportError:
            time.sleep(0.2)  # a poll interval, not a timed wait: the bound is the deadline
    raise AssertionError(f"{url} did not answer within {START_SECONDS} s")
