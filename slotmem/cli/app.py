"""The ``slotmem`` command group, its error handling and the options every command shares."""

from __future__ import annotations

import contextlib
import importlib
import os
from pathlib import Path

import click
from click.core import ParameterSource

from .. import __version__
from ..errors import SlotmemError
from ..storage import db

# The modules of slotmem.cli and the commands each defines: a module is imported when one of its
# commands runs or a help lists them, so `slotmem context` imports recall.py and not the rest
# (tests/test_imports.py checks that this lists every command).
MODULES = {
    "demo": "demo",
    "episodes": "episodes retrievals",
    "facts": "forget get history list pin protect rate remember tag unpin unprotect untag",
    "flush": "flush",
    "importers": "import-from",
    "lifecycle": "dedupe export import restore undo-flush",
    "links": "about link links unlink",
    "recall": "context search",
    "replicate": "follow replicate restore-from",
    "serve": "mcp",
    "ui": "ui",
    "upkeep": "backup doctor migrate path policy prune reindex stats",
}
COMMANDS = {name: module for module, names in MODULES.items() for name in names.split()}


class Group(click.Group):
    """Turns every SlotmemError (and driver error) into one clear line and exit status 1;
    imports a command's module when it is first asked for (COMMANDS)."""

    def list_commands(self, ctx):
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(f"{__package__}.{COMMANDS[cmd_name]}")
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SlotmemError as e:
            raise click.ClickException(str(e)) from e
        except db.DatabaseError as e:
            path = ctx.meta.get(DATABASE_KEY, "the database")
            raise click.ClickException(str(db.translate(e, path))) from e


DATABASE_KEY = "slotmem.database"  # in click's ctx.meta (shared by the group and commands)
GIVEN_BEFORE = "slotmem.database-before"  # -d given before the command


SERVER_SCHEMES = ("postgresql://", "postgres://")  # slotmem.pg.SCHEMES: a memory on a server


class Database(click.Path):
    """-d/--database: a file's path (a Path), or a ``postgresql://`` URL kept as it is (a
    memory on PostgreSQL: docs/scaling.md)."""

    def __init__(self):
        super().__init__(dir_okay=False, path_type=Path)

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.startswith(SERVER_SCHEMES):
            return value
        return super().convert(value, param, ctx)


def on_server(database) -> bool:
    return isinstance(database, str) and database.startswith(SERVER_SCHEMES)


def exists(database) -> bool:
    """Is there a memory at ``database``? A server's memory is the server's to say (opening
    it without ``create`` says so when it is missing)."""
    return on_server(database) or Path(database).exists()


def _database_before(ctx, param, value):
    ctx.meta[GIVEN_BEFORE] = value


@click.group(cls=Group)
@click.version_option(__version__, prog_name="slotmem")
@click.option(
    "-d",
    "--database",
    type=Database(),
    expose_value=False,
    callback=_database_before,
    help="The memory file, or a postgresql:// URL (also accepted after the command)",
)
def cli():
    """Memory for AI agents in one SQLite file.

    Facts live in slots (user, project, agent, ...) under unique keys. Search them with
    full-text ranking weighted by confidence; prune what is old and unused; every overwrite
    and removal is kept in history.

    The database is -d/--database (before or after the command), else $SLOTMEM_DB, else a
    file in your data directory (see 'slotmem path'). Try 'slotmem demo' first.
    """
    # This process's numpy (a hybrid search's pooling and vector ranking: small arrays) needs
    # no OpenBLAS thread pool, whose start costs a cold hybrid command about 60 ms of CPU.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def database_option(command):
    def remember_path(ctx, param, value):
        before = ctx.meta.get(GIVEN_BEFORE)
        if before is not None:
            given_here = ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE
            if given_here and value != before:
                raise click.UsageError(f"-d is given twice ({before} and {value}): give it once")
            value = before
        ctx.meta[DATABASE_KEY] = value
        return value

    return click.option(
        "-d",
        "--database",
        type=Database(),
        envvar="SLOTMEM_DB",
        default=db.default_path,
        show_default="$SLOTMEM_DB or data dir",
        help="The memory file, or a postgresql://user@host/db?memory=NAME URL",
        callback=remember_path,
    )(command)


def open_store(database: Path, *, create: bool = False):
    """The Store of ``database``. Only commands that write pass ``create``: a read command on
    a missing file (a typo in -d) says so instead of answering from an empty new memory."""
    from ..store import Store

    return Store(database, create=create)


@contextlib.contextmanager
def store_for(database, dry_run: bool):
    """The file's Store, created if need be; a dry run on a file that does not exist runs
    against an empty memory in a temporary directory (a dry run writes nothing, no file)."""
    import tempfile

    from ..store import Store

    if dry_run and not exists(database):
        with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "empty.db", create=True) as s:
            yield s
    else:
        with Store(database, create=True) as store:
            yield store
