"""Commands on single facts: remember, get, forget, list, history, rate, pin, unpin, protect,
unprotect, tag, untag."""

from __future__ import annotations

import sys

import click

from .. import validation
from ..errors import InvalidInput
from ..records import HISTORY_REASONS, with_iso_times
from .app import cli, database_option, open_store
from .grammar import fact_argument, limit_option, stored_key, tag_option
from .output import (
    done,
    echo_json,
    emit,
    fact_rows,
    format_options,
    json_option,
    since_options,
    when,
)

FACT_COLUMNS = ["slot", "key", "value", "confidence", "access_count", "last_accessed"]


@cli.command()
@fact_argument(("value", "VALUE", None))
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
@tag_option("Tag the fact (repeatable): lower case, e.g. --tag work --tag q3")
@json_option("what was written")
@database_option
def remember(slot, key, value, confidence, source, protect, ttl, tags, as_json, database):
    """Store VALUE under SLOT/KEY (use - to read VALUE from stdin).

    A fact you write here is protected: agents (MCP, llm tools, LangGraph) can read it but
    not overwrite or forget it ('slotmem unprotect' lifts that). A key spelled another way
    (Timezone for timezone) writes the same fact.

    \b
    slotmem remember user/timezone "Europe/Stockholm" -c 0.9
    slotmem remember user location "At the airport" --ttl 6h
    slotmem remember user/employer "ACME" --tag work --tag marta

    Without --tag the fact keeps the tags it has; with it, they become the tags given.
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
        tags=tags or None,
    )
    if as_json:
        echo_json(done(result.action, result.fact, previous=result.previous))
        return
    fact = result.fact
    until = f" (until {when(fact.expires_at)})" if fact.expires_at else ""
    click.echo(f"{result.action}: {fact.slot}/{fact.key}{until}")
    if result.action == "updated":
        click.echo(f"  was: {result.previous.value}")


@cli.command()
@fact_argument()
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
@fact_argument()
@json_option("what was forgotten")
@database_option
def forget(slot, key, as_json, database):
    """Delete SLOT/KEY; its last value stays in history."""
    store = open_store(database)
    fact = store.get(slot, key)
    if fact is None or not store.delete(slot, key, source="cli"):
        raise click.ClickException(f"no fact {slot}/{key}")
    if as_json:
        echo_json(done("forgotten", fact))
    else:
        click.echo(f"forgot: {fact.slot}/{fact.key}")


@cli.command(name="list")
@click.argument("slot", required=False)
@limit_option(50)
@click.option(
    "--order",
    type=click.Choice(["accessed", "used", "updated", "created", "key", "pinned"]),
    default="accessed",
    show_default=True,
)
@click.option("--pinned", is_flag=True, help="Only pinned facts")
@tag_option("Only facts with this tag (repeatable: every one of them)")
@since_options("updated")
@format_options
@database_option
def list_(slot, limit, order, pinned, tags, since, until, fmt, database):
    """List facts of SLOT (or all slots), most recently accessed first.

    \b
    slotmem list user --since 7d
    slotmem list --since 2026-10-01 --until 2026-10-31 --order updated
    slotmem list --tag work
    """
    facts = open_store(database).list_facts(
        slot, limit=limit, order=order, pinned=pinned, since=since, until=until, tags=tags
    )
    columns = FACT_COLUMNS + ["pinned_at"] if pinned else FACT_COLUMNS
    if any(fact.expires_at for fact in facts):
        columns = columns + ["expires_at"]
    if any(fact.tags for fact in facts):
        columns = columns + ["tags"]
    emit(fact_rows(facts, fmt), fmt, None if fmt else columns)


@cli.command()
@fact_argument(slot_only=True)
@click.option("--all", "all_", is_flag=True, help="Every key's (of SLOT when given)")
@click.option(
    "--reason",
    type=click.Choice(HISTORY_REASONS),
    multiple=True,
    help="Only changes of this kind (repeatable)",
)
@limit_option(None)
@since_options("made")
@format_options
@database_option
def history(slot, key, all_, reason, limit, since, until, fmt, database):
    """Old values of SLOT/KEY, newest first (overwrites, deletes, prunes, expiries, restores,
    undos, imports, merges); with --all, of every key (of SLOT alone, when given). VERSION is
    what restore takes.

    \b
    slotmem history user/home_city
    slotmem history --all --since 1d                 # what changed today, and why
    slotmem history --all --reason prune --reason expired
    """
    if key is None and not all_:
        raise click.UsageError("give SLOT/KEY or SLOT KEY, or --all (with or without a SLOT)")
    if key is not None and all_:
        raise click.UsageError("--all lists every key: give SLOT alone with it")
    store = open_store(database)
    if key is not None:
        key = stored_key(store, slot, key)
    entries = store.history(slot, key, since=since, until=until, reason=reason, limit=limit)
    columns = ["version", "changed_at", "reason", "value", "confidence", "source", "changed_by"]
    if all_:
        columns = ["changed_at", "reason", "slot", "key", "version", "value", "changed_by"]
    emit(fact_rows(entries, fmt), fmt, None if fmt else columns)


@cli.command(context_settings={"ignore_unknown_options": True})  # -2 is a rating
@fact_argument(("rating", "RATING", click.IntRange(-3, 3)))
@click.option("--comment", help="Why")
@json_option("the rating and the fact's quality")
@database_option
def rate(slot, key, rating, comment, as_json, database):
    """Rate SLOT/KEY from -3 to 3; quality feedback scales its search score.

    \b
    slotmem rate user/editor 2
    slotmem rate user editor -2 --comment "outdated"
    """
    fact = open_store(database).rate(slot, key, rating, comment)
    if as_json:
        echo_json(done("rated", fact, rating=rating, comment=comment))
    else:
        click.echo(f"rated {fact.slot}/{fact.key}: quality is now {fact.quality}")


def _mark_command(verb: str, action: str, doc: str) -> None:
    """``slotmem VERB SLOT/KEY``: pin, unpin, protect or unprotect one fact."""

    def command(slot, key, as_json, database):
        fact = getattr(open_store(database), verb)(slot, key)
        if as_json:
            echo_json(done(action, fact))
        else:
            click.echo(f"{action}: {fact.slot}/{fact.key}")

    command.__doc__ = doc
    command = database_option(json_option(f"the {action} fact")(command))
    cli.command(name=verb)(fact_argument()(command))


_mark_command(
    "pin",
    "pinned",
    """Pin SLOT/KEY: it is in every context of its slot, first, and never pruned.

    \b
    slotmem pin user/name
    slotmem pin project rule.main-branch
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


class TagList(click.ParamType):
    """TAG[,TAG...]: one word, tags split at commas (a tag never holds one)."""

    name = "tags"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return validation.tags([part.strip() for part in str(value).split(",")])
        except InvalidInput as e:
            self.fail(str(e), param, ctx)


def _tag_command(verb: str, doc: str) -> None:
    """``slotmem tag|untag SLOT/KEY TAG[,TAG...]``."""

    def command(slot, key, tags, as_json, database):
        fact = getattr(open_store(database), verb)(slot, key, *tags)
        if as_json:
            echo_json(done(f"{verb}ged", fact))
        else:
            click.echo(f"{fact.slot}/{fact.key}: {', '.join(fact.tags) or '(no tags)'}")

    command.__doc__ = doc
    command = database_option(json_option("the fact with its tags")(command))
    cli.command(name=verb)(fact_argument(("tags", TAGS, TagList()))(command))


TAGS = "TAG[,TAG...]"
_tag_command(
    "tag",
    """Add TAGs to SLOT/KEY: lower case letters, digits, '_', '.', ':', '-' (at most 32 a fact).

    \b
    slotmem tag user/employer work,marta
    slotmem tag user employer work
    """,
)
_tag_command(
    "untag",
    """Remove TAGs from SLOT/KEY (a tag it does not have is no error).

    \b
    slotmem untag user/employer marta
    """,
)
