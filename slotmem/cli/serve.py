"""`slotmem mcp`: the memory served to MCP clients."""

from __future__ import annotations

import click

from .app import cli, database_option, open_store


@cli.command()
@click.option(
    "--slots",
    metavar="SLOT,...",
    help="Serve only these slots: the agent cannot read or write others",
)
@click.option(
    "--read-only",
    is_flag=True,
    help="Offer no writing tool (remember, remember_many, forget, rate, flush)",
)
@click.option(
    "--allow-protected",
    is_flag=True,
    help="Let the agent overwrite and forget facts a person protected",
)
@click.option(
    "--flush-model",
    metavar="MODEL",
    help="The llm model the flush tool uses when the client offers no sampling",
)
@click.option(
    "--http",
    "http",
    metavar="HOST:PORT",
    help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (127.0.0.1:8765)",
)
@click.option(
    "--token",
    envvar="SLOTMEM_MCP_TOKEN",
    show_envvar=True,
    metavar="TOKEN",
    help="With --http: the bearer token every request must carry (required off loopback)",
)
@click.option(
    "--no-delimit",
    is_flag=True,
    help="Contexts as plain markdown, not inside a <memory> element marking them as data",
)
@database_option
def mcp(slots, read_only, allow_protected, flush_model, http, token, no_delimit, database):
    """Serve this memory over MCP on stdio, or streamable HTTP with --http.

    Tools: recall, get, list, history, context, search, fetch, remember, remember_many,
    forget, rate, flush (the conversation so far, read by the client's model through MCP
    sampling, else by --flush-model); resources: the slots, a slot, a fact (slotmem://fact/SLOT/KEY); a
    prompt, with_memory. Facts written
    with 'slotmem remember' (or protected) cannot be overwritten or forgotten by the agent
    unless --allow-protected.

    Creates the file if there is none (and says so on stderr), unless --read-only. Needs
    the mcp extra: pip install 'slotmem[mcp]'. In an MCP client's config:

    \b
    {"command": "slotmem", "args": ["mcp", "-d", "/home/maja/agent.db",
                                    "--slots", "project", "--read-only"]}

    Over HTTP with a token (--token, or better $SLOTMEM_MCP_TOKEN), each request must carry
    'Authorization: Bearer TOKEN', else it gets 401; an address other than loopback is
    refused without a token:

    \b
    SLOTMEM_MCP_TOKEN=$(openssl rand -hex 24) slotmem mcp --http 127.0.0.1:8765
    """
    from ..agents import mcp_http
    from ..agents.mcp_server import build_server
    from ..agents.tools import scope

    served = scope(slots)  # a bad slot name is refused before any file is made
    given = click.get_current_context().get_parameter_source("token")
    if http is None and given is click.core.ParameterSource.COMMANDLINE:
        raise click.UsageError("--token goes with --http: stdio needs none")
    if http is not None:
        host, port = mcp_http.address(http)
        token = mcp_http.checked_token(host, token)
    if flush_model:
        from ..ingest.model import resolve

        flush_model = resolve(flush_model)  # an unknown model fails now, not at the first flush
    if not database.exists() and not read_only:
        click.echo(f"slotmem: a new memory file at {database}", err=True)  # stdout is MCP's
    store = open_store(database, create=not read_only)
    server = build_server(
        store,
        slots=served,
        read_only=read_only,
        allow_protected=allow_protected,
        flush_model=flush_model,
        delimit=not no_delimit,
    )
    if http is None:
        server.run("stdio")
        return
    guard = "a bearer token" if token else "no token: any local process can use it"
    click.echo(f"slotmem: serving MCP at {mcp_http.url(host, port)} ({guard})", err=True)
    mcp_http.serve(server, host, port, token)
