"""Commands on single facts: remember, get, forget, list, history, rate, pin, unpin, protect,
unprotect."""

from __future__ import annotations

import sys

import click

from .. import validation
from ..records import with_iso_times
from .app import cli, database_option, open_store
from .output import echo_json, emit, fact_rows, format_options

FACT_COLUMNS = ["slot", "key", "value", "confidence", "access_count", "last_accessed"]


@cli.command()
@click.argument("slot")
@click.argument("key")
@click.argument("value")
@click.option("-c", "--confidence", type=float, default=1.0, show_default=True, help="0 to 1")
@click.option("--source", default="cli", show_default=True, help="Provenance to record")
@click.option(
    "--protect/--no-protect",
    default=None,
    help="Agents may not overwrite or forget it  [default: unless --source is given]",
)
@database_option
def remember(slot, key, value, confidence, source, protect, database):
    """Store VALUE under SLOT/KEY (use - to read VALUE from stdin).

    A fact you write here is protected: agents (MCP, llm tools, LangGraph) can read it but
    not overwrite or forget it ('slotmem unprotect' lifts that).

    \b
    slotmem remember user timezone "Europe/Stockholm" -c 0.9
    """
    if value == "-":
        value = sys.stdin.read()
    validation.fact(slot, key, value, confidence, source)  # bad input creates no file
    result = open_store(database, create=True).upsert(
        slot,
        key,
        value,
        confidence=confidence,
        source=source,
        protect=source == "cli" if protect is None else protect,
    )
    click.echo(f"{result.action}: {slot}/{key}")
    if result.action == "updated":
        click.echo(f"  was: {result.previous.value}")


@cli.command()
@click.argument("slot")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Output the whole fact as JSON")
@database_option
def get(slot, key, as_json, database):
    """Print the value of SLOT/KEY (exit status 1 when there is none)."""
    fact = open_store(database).get(slot, key)
    if fact is None:
        raise click.ClickException(f"no fact {slot}/{key}")
    if as_json:
        echo_json(with_iso_times(fact.to_dict()))
    else:
        click.echo(fact.value)


@cli.command()
@click.argument("slot")
@click.argument("key")
@database_option
def forget(slot, key, database):
    """Delete SLOT/KEY; its last value stays in history."""
    if not open_store(database).delete(slot, key, source="cli"):
        raise click.ClickException(f"no fact {slot}/{key}")
    click.echo(f"forgot: {slot}/{key}")


@cli.command(name="list")
@click.argument("slot", required=False)
@click.option("-n", "--limit", type=int, default=50, show_default=True, help="0 for all")
@click.option(
    "--order",
    type=click.Choice(["accessed", "used", "updated", "created", "key", "pinned"]),
    default="accessed",
    show_default=True,
)
@click.option("--pinned", is_flag=True, help="Only pinned facts")
@format_options
@database_option
def list_(slot, limit, order, pinned, fmt, database):
    """List facts of SLOT (or all slots), most recently accessed first."""
    facts = open_store(database).list_facts(slot, limit=limit or None, order=order, pinned=pinned)
    columns = FACT_COLUMNS + ["pinned_at"] if pinned else FACT_COLUMNS
    emit(fact_rows(facts, fmt), fmt, None if fmt else columns)


@cli.command()
@click.argument("slot")
@click.argument("key")
@format_options
@database_option
def history(slot, key, fmt, database):
    """Old values of SLOT/KEY, newest first (overwrites, deletes, prunes)."""
    entries = open_store(database).history(slot, key)
    emit(
        fact_rows(entries, fmt),
        fmt,
        None if fmt else ["changed_at", "reason", "value", "confidence", "source"],
    )


@cli.command()
@click.argument("slot")
@click.argument("key")
@click.argument("rating", type=click.IntRange(-3, 3))
@click.option("--comment", help="Why")
@database_option
def rate(slot, key, rating, comment, database):
    """Rate SLOT/KEY from -3 to 3; quality feedback scales its search score."""
    fact = open_store(database).rate(slot, key, rating, comment)
    click.echo(f"rated {slot}/{key}: quality is now {fact.quality}")


def _mark_command(verb: str, done: str, doc: str) -> None:
    """``slotmem VERB SLOT/KEY``: pin, unpin, protect or unprotect one fact."""

    @cli.command(name=verb, help=doc)
    @click.argument("fact", metavar="SLOT/KEY")
    @database_option
    def command(fact, database):
        slot, key = _slot_key(fact)
        getattr(open_store(database), verb)(slot, key)
        click.echo(f"{done}: {slot}/{key}")


_mark_command(
    "pin",
    "pinned",
    """Pin SLOT/KEY: it is in every context of its slot, first, and never pruned.

    \b
    slotmem pin user/name
    slotmem pin project/rule.main-branch
    """,
)
_mark_command(
    "unpin",
    "unpinned",
    "Unpin SLOT/KEY: it reaches a context only when relevant, and may be pruned.",
)
_mark_command(
    "protect", "protected", "Protect SLOT/KEY: agents may read it, not overwrite or forget it."
)
_mark_command("unprotect", "unprotected", "Let agents overwrite and forget SLOT/KEY again.")


def _slot_key(fact: str) -> tuple[str, str]:
    slot, sep, key = fact.partition("/")
    if not sep or not slot or not key:
        raise click.UsageError(f"give the fact as SLOT/KEY (for example user/name), not {fact!r}")
    return slot, key
