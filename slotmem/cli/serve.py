"""`slotmem mcp`: the memory served to MCP clients."""

from __future__ import annotations

from .app import cli, database_option, open_store


@cli.command()
@database_option
def mcp(database):
    """Serve this memory over MCP on stdio: recall, remember, forget, context.

    Needs the mcp extra: pip install 'slotmem[mcp]'. In an MCP client's config:

    \b
    {"command": "slotmem", "args": ["mcp", "-d", "/home/maja/agent.db"]}
    """
    from ..agents.mcp_server import build_server

    build_server(open_store(database, create=True)).run("stdio")
