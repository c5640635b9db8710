"""Commands that ask the memory a question: search, and context (what a prompt gets)."""

from __future__ import annotations

import click

from ..search.fusion import EXPLAIN_COLUMNS as HYBRID_COLUMNS
from ..search.lexical import EXPLAIN_COLUMNS
from .app import cli, database_option, open_store
from .output import emit, format_options


@cli.command()
@click.argument("text")
@click.option("-s", "--slot", "slots", multiple=True, help="Only these slots (repeatable)")
@click.option("-n", "--limit", type=int, default=10, show_default=True)
@click.option("--min-score", type=float, help="Drop hits scoring below this")
@click.option("--explain", is_flag=True, help="Show the parts of each hit's score")
@click.option("--no-track", is_flag=True, help="Do not count this search as an access")
@click.option("--lexical", is_flag=True, help="Full-text leg only, even when semantic is on")
@format_options
@database_option
def search(text, slots, limit, min_score, explain, no_track, lexical, fmt, database):
    """Search facts for TEXT, best first.

    \b
    slotmem search "what timezone am I in?" --slot user --explain
    """
    hits = open_store(database).query_facts(
        text,
        slots=list(slots) or None,
        limit=limit,
        min_score=min_score,
        track_access=not no_track,
        explain=explain,
        semantic=not lexical,
    )
    rows = [hit.to_dict() for hit in hits]
    columns = None
    if fmt in (None, "table"):
        for row in rows:
            row.update(row.pop("explanation", None) or {})
        columns = ["score", "relevance", "slot", "key", "value"]
        if explain:
            hybrid = any("fused" in row for row in rows)
            columns += HYBRID_COLUMNS if hybrid else EXPLAIN_COLUMNS
    emit(rows, fmt, columns)


@cli.command()
@click.argument("message")
@click.option("-s", "--slot", "slots", multiple=True, help="Slots to ask, in order")
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="Facts per slot")
@click.option("--budget", type=int, default=1500, show_default=True, help="Characters per slot")
@click.option("--no-track", is_flag=True, help="Do not count this as an access")
@database_option
def context(message, slots, limit, budget, no_track, database):
    """Print the markdown an agent's prompt would get for MESSAGE."""
    from ..agents.context import build_context

    text = build_context(
        open_store(database),
        message,
        slots or ("user", "project", "agent"),
        limit=limit,
        budget_chars=budget,
        track_access=not no_track,
    )
    click.echo(text or "(no relevant facts)")
