"""The ``slotmem`` command group, its error handling and the options every command shares."""

from __future__ import annotations

from pathlib import Path

import click

from .. import __version__
from ..errors import SlotmemError
from ..storage import db


class Group(click.Group):
    """Turns every SlotmemError (and driver error) into one clear line and exit status 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SlotmemError as e:
            raise click.ClickException(str(e)) from e
        except db.DatabaseError as e:
            path = ctx.meta.get(DATABASE_KEY, "the database")
            raise click.ClickException(str(db.translate(e, path))) from e


@click.group(cls=Group)
@click.version_option(__version__, prog_name="slotmem")
def cli():
    """Memory for AI agents in one SQLite file.

    Facts live in slots (user, project, agent, ...) under unique keys. Search them with
    full-text ranking weighted by confidence; prune what is old and unused; every overwrite
    and removal is kept in history.

    The database is -d/--database, else $SLOTMEM_DB, else a file in your data directory
    (see 'slotmem path'). Try 'slotmem demo' first.
    """


DATABASE_KEY = "slotmem.database"  # in click's ctx.meta: the file errors name


def database_option(command):
    def remember_path(ctx, param, value):
        ctx.meta[DATABASE_KEY] = value
        return value

    return click.option(
        "-d",
        "--database",
        type=click.Path(dir_okay=False, path_type=Path),
        envvar="SLOTMEM_DB",
        default=db.default_path,
        show_default="$SLOTMEM_DB or data dir",
        help="The memory file",
        callback=remember_path,
    )(command)


def open_store(database: Path, *, create: bool = False):
    """The Store of ``database``. Only commands that write pass ``create``: a read command on
    a missing file (a typo in -d) says so instead of answering from an empty new memory."""
    from ..store import Store

    return Store(database, create=create)
