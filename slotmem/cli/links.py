"""Commands on links between facts: link, unlink, links, and about ("what do we know about
Marta": the facts that name it and the facts linked to those)."""

from __future__ import annotations

import click

from .. import validation
from ..errors import InvalidInput
from ..records import with_iso_times
from .app import cli, database_option, open_store
from .grammar import fact_argument, split_one
from .output import echo_json, json_option, note


class Rel(click.ParamType):
    """REL: a link's type, the syntax of a tag (lives_in, works_at)."""

    name = "rel"

    def convert(self, value, param, ctx):
        try:
            return validation.rel(value)
        except InvalidInput as e:
            self.fail(str(e), param, ctx)


class OtherFact(click.ParamType):
    """TO: the fact at the other end, SLOT/KEY in one word."""

    name = "fact"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return split_one(value, "TO")
        except click.UsageError as e:
            self.fail(e.message, param, ctx)


def _shown(link) -> str:
    start, end = link.from_fact, link.to_fact
    return f"{start.slot}/{start.key} -{link.rel}-> {end.slot}/{end.key}"


def _link_command(verb: str, doc: str) -> None:
    """``slotmem link|unlink FROM REL TO``."""

    def command(slot, key, rel, to, source, as_json, database):
        store = open_store(database)
        if verb == "link":
            made = store.link(slot, key, rel, *to, source=source)
            if as_json:
                echo_json({"action": "linked", "link": _link_json(made)})
            else:
                click.echo(f"linked: {_shown(made)}")
            return
        gone = store.unlink(slot, key, rel, *to, source=source)
        shown = f"{slot}/{key} -{rel}-> {to[0]}/{to[1]}"
        if as_json:
            echo_json({"action": "unlinked" if gone else "unchanged", "link": shown})
        elif gone:
            click.echo(f"unlinked: {shown}")
        else:
            note(f"no link {shown}: nothing to remove")

    command.__doc__ = doc
    command = click.option(
        "--source", default="cli", show_default=True, help="Who made (or removes) the link"
    )(json_option(f"what was {verb}ed")(database_option(command)))
    cli.command(name=verb)(fact_argument(("rel", "REL", Rel()), ("to", "TO", OtherFact()))(command))


_link_command(
    "link",
    """Link the fact SLOT/KEY to the fact TO (SLOT/KEY, one word) with the type REL: lower
    case letters, digits, '_', '.', ':', '-'. Linking again is no error.

    \b
    slotmem link person/marta lives_in place/porto
    slotmem link person marta works_at org/acme
    """,
)
_link_command(
    "unlink",
    """Remove the link SLOT/KEY -REL-> TO; it stays in the links' history. A link that is not
    there is no error.

    \b
    slotmem unlink person/marta lives_in place/porto
    """,
)


def _link_json(link) -> dict:
    return with_iso_times(link.to_dict())


@cli.command(name="links")
@fact_argument()
@click.option("--json", "as_json", is_flag=True, help="Output the links as a JSON list")
@database_option
def links_(slot, key, as_json, database):
    """The links of SLOT/KEY, outgoing then incoming, each with the fact at the other end.

    \b
    slotmem links person/marta --json
    """
    store = open_store(database)
    found = store.links(slot, key)
    if as_json:
        echo_json([_link_json(link) for link in found])
        return
    if not found:
        note(f"no links of {slot}/{key}")
    me = store.get(slot, key)
    for link in found:
        other = link.to_fact if me is not None and link.from_fact.id == me.id else link.from_fact
        click.echo(f"{_shown(link)}: {other.value}")


@cli.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Output facts and links as a JSON object")
@database_option
def about(name, as_json, database):
    """What the memory holds about NAME: the facts whose key or value names it, and the facts
    linked to those (one hop).

    \b
    slotmem about Marta
    """
    found = open_store(database).about(name)
    if as_json:
        data = found.to_dict()
        data["facts"] = [with_iso_times(f) for f in data["facts"]]
        data["linked"] = [with_iso_times(f) for f in data["linked"]]
        data["links"] = [with_iso_times(link) for link in data["links"]]
        echo_json(data)
        return
    if not found.facts:
        note(f"nothing about {name!r}")
        return
    for fact in found.facts:
        click.echo(f"{fact.slot}/{fact.key}: {fact.value}")
    if found.links:
        click.echo("linked:")
    named = {fact.id for fact in found.facts}
    for link in found.links:
        other = link.to_fact if link.from_fact.id in named else link.from_fact
        click.echo(f"  {_shown(link)}: {other.value}")
