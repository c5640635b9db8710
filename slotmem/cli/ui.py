"""`slotmem ui`: the memory in a browser, to see and correct (slotmem.ui)."""

from __future__ import annotations

import click

from .app import cli, database_option


@cli.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="The address to serve on")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option(
    "--write",
    is_flag=True,
    help="Offer changes: edit, forget, pin, protect, rate, restore, undo a flush",
)
@click.option(
    "--token",
    envvar="SLOTMEM_UI_TOKEN",
    help="The token changes (and, off loopback, every page) need [default: a random one]",
)
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the browser")
@database_option
def ui(host, port, write, token, open_browser, database):
    """See and correct the memory in a browser, read-only unless --write.

    Facts and slots with their policies, search as the agent searches, the context a
    message would get and why, each fact's history. With --write: edit, forget, pin,
    protect, rate, restore an old value, undo a flush, each through the Store (history
    keeps every old value). Served on 127.0.0.1; on any other address every request needs
    the token, printed in the address.

    \b
    slotmem ui -d agent.db
    slotmem ui -d agent.db --write --open
    """
    from ..ui import UI

    server = UI(database, host=host, port=port, write=write, token=token)
    mode = "changes allowed" if server.writable else "read-only"
    if write and not server.writable:
        mode += " (the file is read-only)"
    click.echo(f"slotmem ui: {server.url} ({mode}; Ctrl-C stops it)", err=False)
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
