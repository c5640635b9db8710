"""The MCP server over streamable HTTP: ``slotmem mcp --http 127.0.0.1:8765`` serves it at
``http://127.0.0.1:8765/mcp``.

- **A bearer token** (``--token`` or ``$SLOTMEM_MCP_TOKEN``): every request must carry
  ``Authorization: Bearer <token>``; one without it, or with another token, gets 401 before it
  reaches the server, so it changes nothing. The token is compared in constant time.
- **Loopback unless a token**: an address other than loopback (127.0.0.0/8, ::1, localhost)
  is refused without a token. On loopback the SDK also checks Host and Origin (DNS rebinding).
- **The same limits** as stdio: the server built by slotmem.agents.mcp_server.build_server.

Needs the mcp extra (which brings uvicorn and starlette).
"""

from __future__ import annotations

import hmac
import ipaddress
import json

from ..errors import InvalidInput

PATH = "/mcp"
LOOPBACK_NAMES = ("localhost",)


def address(text: str) -> tuple[str, int]:
    """(host, port) from ``HOST:PORT``, ``[::1]:PORT`` or ``:PORT`` (loopback)."""
    host, colon, port = str(text).strip().rpartition(":")
    if not colon or not port.isdigit() or not 0 < int(port) < 65536:
        raise InvalidInput(f"--http takes HOST:PORT, such as 127.0.0.1:8765, not {text!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: it may resolve anywhere
        return False


def checked_token(host: str, token: str | None) -> str | None:
    """The token, refused when empty or when a non-loopback address has none."""
    if token is not None and not token.strip():
        raise InvalidInput("the token must not be empty")
    if token is None and not is_loopback(host):
        raise InvalidInput(
            f"refusing to serve {host} without a token: anyone who can reach it could read "
            "and write this memory (--token, or $SLOTMEM_MCP_TOKEN; or bind 127.0.0.1)"
        )
    return None if token is None else token.strip()


class BearerToken:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and not self._authorised(scope):
            await _unauthorised(send)
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope) -> bool:
        given = [value for name, value in scope.get("headers", ()) if name == b"authorization"]
        if len(given) != 1:
            return False
        scheme, _, credentials = given[0].partition(b" ")
        return hmac.compare_digest(scheme.lower() + b" " + credentials.strip(), self.expected)


async def _unauthorised(send) -> None:
    body = json.dumps(
        {"error": "invalid_token", "error_description": "a bearer token is required"}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="slotmem"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def serve(server, host: str, port: int, token: str | None) -> None:
    """Serve ``server`` (an MCPServer) at http://host:port/mcp until interrupted."""
    import uvicorn

    app = server.streamable_http_app(streamable_http_path=PATH, host=host)
    if token is not None:
        app = BearerToken(app, token)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{PATH}"
