"""`slotmem mcp`: the memory served to MCP clients."""

from __future__ import annotations

import click

from .app import cli, database_option, open_store


@cli.command()
@database_option
def mcp(database):
    """Serve this memory over MCP on stdio: recall, remember, forget, context.

    Creates the file if there is none (and says so on stderr). Needs the mcp extra:
    pip install 'slotmem[mcp]'. In an MCP client's config:

    \b
    {"command": "slotmem", "args": ["mcp", "-d", "/home/maja/agent.db"]}
    """
    from ..agents.mcp_server import build_server

    if not database.exists():
        click.echo(f"slotmem: a new memory file at {database}", err=True)  # stdout is MCP's
    build_server(open_store(database, create=True)).run("stdio")
