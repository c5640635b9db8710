"""Commands on single facts: remember, get, forget, list, history, rate, pin, unpin, protect,
unprotect."""

from __future__ import annotations

import sys

import click

from .. import validation
from ..records import HISTORY_REASONS, with_iso_times
from .app import cli, database_option, open_store, slot_key
from .output import echo_json, emit, fact_rows, format_options, since_options, when

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
@click.option(
    "--ttl",
    metavar="DURATION",
    help="Expire after this long (90m, 2h, 3d, 2w): then never returned, and pruned",
)
@database_option
def remember(slot, key, value, confidence, source, protect, ttl, database):
    """Store VALUE under SLOT/KEY (use - to read VALUE from stdin).

    A fact you write here is protected: agents (MCP, llm tools, LangGraph) can read it but
    not overwrite or forget it ('slotmem unprotect' lifts that).

    \b
    slotmem remember user timezone "Europe/Stockholm" -c 0.9
    slotmem remember user location "At the airport" --ttl 6h
    """
    if value == "-":
        value = sys.stdin.read()
    validation.fact(slot, key, value, confidence, source)  # bad input creates no file
    if ttl is not None:
        validation.duration(ttl)
    result = open_store(database, create=True).upsert(
        slot,
        key,
        value,
        confidence=confidence,
        source=source,
        protect=source == "cli" if protect is None else protect,
        ttl=ttl,
    )
    until = f" (until {when(result.fact.expires_at)})" if result.fact.expires_at else ""
    click.echo(f"{result.action}: {slot}/{key}{until}")
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
@since_options("updated")
@format_options
@database_option
def list_(slot, limit, order, pinned, since, until, fmt, database):
    """List facts of SLOT (or all slots), most recently accessed first.

    \b
    slotmem list user --since 7d
    slotmem list --since 2026-10-01 --until 2026-10-31 --order updated
    """
    facts = open_store(database).list_facts(
        slot, limit=limit or None, order=order, pinned=pinned, since=since, until=until
    )
    columns = FACT_COLUMNS + ["pinned_at"] if pinned else FACT_COLUMNS
    if any(fact.expires_at for fact in facts):
        columns = columns + ["expires_at"]
    emit(fact_rows(facts, fmt), fmt, None if fmt else columns)


@cli.command()
@click.argument("slot", required=False)
@click.argument("key", required=False)
@click.option("--all", "all_", is_flag=True, help="Every key's (of SLOT when given)")
@click.option(
    "--reason",
    type=click.Choice(HISTORY_REASONS),
    multiple=True,
    help="Only changes of this kind (repeatable)",
)
@click.option("-n", "--limit", type=int, default=0, help="At most this many (0: all)")
@since_options("made")
@format_options
@database_option
def history(slot, key, all_, reason, limit, since, until, fmt, database):
    """Old values of SLOT KEY, newest first (overwrites, deletes, prunes, expiries, restores,
    undos, imports, merges); with --all, of every key. VERSION is what restore takes.

    \b
    slotmem history user home_city
    slotmem history --all --since 1d                 # what changed today, and why
    slotmem history --all --reason prune --reason expired
    """
    if key is None and not all_:
        raise click.UsageError("give SLOT KEY, or --all (with or without a SLOT)")
    if key is not None and all_:
        raise click.UsageError("--all lists every key: give SLOT alone with it")
    entries = open_store(database).history(
        slot, key, since=since, until=until, reason=reason, limit=limit or None
    )
    columns = ["version", "changed_at", "reason", "value", "confidence", "source", "changed_by"]
    if all_:
        columns = ["changed_at", "reason", "slot", "key", "version", "value", "changed_by"]
    emit(fact_rows(entries, fmt), fmt, None if fmt else columns)


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
        slot, key = slot_key(fact)
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
