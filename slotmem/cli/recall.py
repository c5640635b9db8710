"""Commands that ask the memory a question: search, and context (what a prompt gets)."""

from __future__ import annotations

import click

from ..agents.context import CANDIDATES, DEFAULT_BUDGET_TOKENS
from ..records import with_iso_times
from ..search.lexical import EXPLAIN_COLUMNS
from .app import cli, database_option, open_store
from .grammar import episode_options, every, limit_option, tag_option
from .output import (
    echo_json,
    emit,
    flat_tags,
    format_options,
    note,
    since_options,
    table,
    width_option,
)


@cli.command()
@click.argument("text")
@click.option(
    "-s",
    "--slot",
    "slots",
    multiple=True,
    help="Only these slots (repeatable; 'user.*': every slot under user)",
)
@limit_option(10, "At most this many hits")
@click.option("--min-score", type=float, help="Drop hits scoring below this")
@click.option(
    "--min-relevance",
    type=click.FloatRange(0, 1),
    help="Drop hits less likely than this to be relevant (0 to 1)",
)
@click.option("--explain", is_flag=True, help="Show the parts of each hit's score")
@click.option("--no-track", is_flag=True, help="Do not count this search as an access")
@click.option("--lexical", is_flag=True, help="Full-text leg only, even when semantic is on")
@tag_option("Only facts with this tag (repeatable: every one of them)")
@since_options("updated")
@format_options
@database_option
def search(
    text,
    slots,
    tags,
    limit,
    min_score,
    min_relevance,
    explain,
    no_track,
    lexical,
    since,
    until,
    fmt,
    database,
):
    """Search facts for TEXT, best first.

    \b
    slotmem search "what timezone am I in?" --slot user --explain
    slotmem search "deadline" --since 30d
    slotmem search "where does marta work" --tag marta
    """
    store = open_store(database)
    hits = store.query_facts(
        text,
        slots=list(slots) or None,
        limit=every(store, limit),
        min_score=min_score,
        min_relevance=min_relevance,
        track_access=not no_track,
        explain=explain,
        semantic=not lexical,
        since=since,
        until=until,
        tags=tags,
    )
    rows = flat_tags([hit.to_dict() for hit in hits], fmt)
    columns = None
    if fmt in (None, "table"):
        for row in rows:
            row.update(row.pop("explanation", None) or {})
        columns = ["score", "relevance", "slot", "key", "value"]
        columns += ["tags"] if any(hit.fact.tags for hit in hits) else []
        if explain:
            hybrid = any("fused" in row for row in rows)
            from ..search.fusion import EXPLAIN_COLUMNS as HYBRID_COLUMNS

            columns += HYBRID_COLUMNS if hybrid else EXPLAIN_COLUMNS
    emit(rows, fmt, columns)


@cli.command()
@click.argument("message")
@click.option(
    "-s",
    "--slot",
    "slots",
    multiple=True,
    help="Slots to ask, in priority order (repeatable; 'user.*': every slot under user) "
    "[default: every slot the file holds, user, project and agent first]",
)
@click.option(
    "--budget",
    type=click.IntRange(min=0),
    default=DEFAULT_BUDGET_TOKENS,
    show_default=True,
    help="Tokens (estimated) for the whole context",
)
@click.option(
    "--pinned-budget",
    type=click.IntRange(min=0),
    help="Tokens for pinned facts  [default: half the budget]",
)
@click.option(
    "--min-relevance",
    type=click.FloatRange(0, 1),
    help="Leave out facts less likely than this to be relevant  [default: each slot's floor]",
)
@limit_option(CANDIDATES, "Hits asked of each slot")
@click.option(
    "--dates/--no-dates",
    default=None,
    help="Show when each fact was last updated  [default: where it speaks of time]",
)
@click.option("--lexical", is_flag=True, help="Full-text leg only, even when semantic is on")
@click.option("--no-track", is_flag=True, help="Do not count this as an access")
@click.option("--explain", is_flag=True, help="Also list every fact in and out, with why")
@click.option(
    "--delimit",
    is_flag=True,
    help="Inside a <memory> element that marks the facts as data, not instructions",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Output sections, facts, relevance and what was cut as JSON",
)
@episode_options
@width_option
@database_option
def context(
    message,
    slots,
    budget,
    pinned_budget,
    min_relevance,
    limit,
    dates,
    lexical,
    no_track,
    explain,
    delimit,
    as_json,
    database,
    **episode_args,
):
    """Print the markdown an agent's prompt would get for MESSAGE.

    Pinned facts first, then the facts relevant enough to the message, within one budget.

    \b
    slotmem context "Can we deploy on Friday?" --explain
    """
    from ..agents import context as builder

    store = open_store(database)
    built = builder.build(
        store,
        message,
        list(slots) or None,
        budget_tokens=budget,
        pinned_tokens=pinned_budget,
        min_relevance=min_relevance,
        candidates=every(store, limit),
        dates=dates,
        semantic=not lexical,
        track_access=not no_track,
        explain=explain or as_json,
        **episode_args,
    )
    if as_json:
        data = built.to_dict()
        for part in [*(section["facts"] for section in data["sections"]), data["cut"]]:
            part[:] = [with_iso_times(item) for item in part]
        echo_json(data)
        return
    if not built.text:
        note("(no relevant facts)")
    elif delimit:
        from ..agents.framing import delimited

        click.echo(delimited(built.text))
    else:
        click.echo(built.text)
    if explain:
        rows = [
            {**item.to_dict(), "reason": "pinned" if item.pinned else "relevant"}
            for item in built.facts()
        ] + [item.to_dict() for item in built.cut]
        click.echo(f"\n{built.tokens} of {budget} tokens (estimated)\n")
        click.echo(table(rows, ["slot", "key", "relevance", "tokens", "reason"]))
