"""`slotmem demo`: a demo memory, and what an agent would get from it."""

from __future__ import annotations

from pathlib import Path

import click

from ..storage.db import default_path
from .app import cli, open_store


@cli.command()
@click.option(
    "-d",
    "--database",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to build the demo file [default: demo.db in the data directory]",
)
def demo(database):
    """Build a demo memory and show what an agent would get for a few messages.

    Needs no API key and no network.
    """
    from ..agents.context import build_context
    from . import demo_data

    database = database or default_path().with_name("demo.db")
    store = open_store(database, create=True)
    foreign = store.conn.execute(
        "SELECT count(*) FROM memory_facts WHERE source IS NOT ?", (demo_data.DEMO_SOURCE,)
    ).fetchone()[0]
    if foreign:
        raise click.ClickException(
            f"{database} holds {foreign} facts that are not demo facts; pick another file with -d"
        )
    results = store.upsert_many(demo_data.items())
    created = sum(r.action == "created" for r in results)
    click.echo(f"Demo memory: {database} ({len(results)} facts, {created} new)\n")
    for message in demo_data.MESSAGES:
        click.secho(f"> {message}", bold=True)
        click.echo(build_context(store, message, track_access=False) or "(no relevant facts)")
        click.echo()
    click.echo(f'Try: slotmem search -d {database} "deploy on Friday" --explain')
