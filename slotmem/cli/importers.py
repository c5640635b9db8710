"""`slotmem import-from`: the memories people already have (ChatGPT and Claude exports, the MCP
memory server's memory.json, another slotmem file). `slotmem import` stays the command for
slotmem's own JSON Lines."""

from __future__ import annotations

import sys

import click

from ..errors import SlotmemError
from ..ingest.defaults import DEFAULT_MIN_CONFIDENCE, DEFAULT_SLOTS
from .app import cli, database_option, store_for
from .output import echo_json, note, table, width_option

FORMATS = ("chatgpt", "claude", "mcp-memory", "slotmem")
CHATS = ("chatgpt", "claude")
CHANGE_COLUMNS = ["action", "slot", "key", "value", "old_value"]


@cli.command(name="import-from")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(FORMATS))
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-m", "--model", help="chatgpt, claude: llm model id or alias  [default: llm's]")
@click.option(
    "-s",
    "--slot",
    "--slots",
    "slots",
    multiple=True,
    metavar="SLOT",
    help="chatgpt, claude: slots facts may go into [user, project, agent]; mcp-memory: the "
    "slot [user]; slotmem: the slots to copy [all]. Repeat it or give SLOT,SLOT",
)
@click.option(
    "--min-confidence",
    type=click.FloatRange(0, 1),
    help=f"chatgpt, claude: reject facts the model is less sure of  [{DEFAULT_MIN_CONFIDENCE}]",
)
@click.option(
    "-o",
    "--option",
    "options",
    type=(str, str),
    multiple=True,
    metavar="KEY VALUE",
    help="chatgpt, claude: a model option, as llm takes it: -o temperature 0.1",
)
@click.option(
    "--mode",
    type=click.Choice(["merge", "replace", "skip-existing"]),
    help="slotmem: as 'slotmem import --mode'  [merge]",
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="chatgpt, claude: a progress bar on stderr  [default: when stderr is a terminal]",
)
@click.option("--json", "as_json", is_flag=True, help="Output the report as JSON")
@width_option
@database_option
def import_from(
    fmt, file, model, slots, min_confidence, options, mode, dry_run, progress, as_json, database
):
    """Import FILE, in FORMAT, into the memory.

    \b
    chatgpt     ChatGPT's export (Settings > Data controls): the zip or its conversations.json
    claude      Claude's export (Settings > Privacy): the zip or its conversations.json
    mcp-memory  memory.json of the MCP reference memory server
    slotmem     another slotmem file (.db); --slots picks the slots

    ChatGPT and Claude conversations go through the flusher (see 'slotmem flush'), one at a
    time, each as its own source (chatgpt:ID, for 'slotmem undo-flush'). Interrupted, the
    same command resumes: conversations already read are not sent to the model again.
    memory.json maps to facts without a model: an entity's observations under its name, its
    type under NAME.type, a relation under FROM.RELATION. A malformed file is refused, naming
    the line or the conversation, and nothing is written.

    \b
        slotmem import-from chatgpt conversations.json -m gpt-4o-mini
        slotmem import-from mcp-memory memory.json --slot user
        slotmem import-from slotmem old.db --slots user,project
    """
    names = [s.strip() for given in slots for s in given.split(",") if s.strip()]
    _check_options(fmt, file, model, names, min_confidence, options, mode, progress)
    settings = {"options": dict(options)}
    if min_confidence is not None:
        settings["min_confidence"] = min_confidence
    try:
        if fmt in CHATS:
            _chats(fmt, file, model, names, settings, dry_run, progress, as_json, database)
        elif fmt == "mcp-memory":
            from ..ingest.importers import import_memory_json

            data, name = _read(file)
            with store_for(database, dry_run) as store:
                report = import_memory_json(
                    store, data, name, slot=names[0] if names else "user", dry_run=dry_run
                )
            _print_changes(report, as_json)
        else:
            from ..ingest.importers import import_slots

            with store_for(database, dry_run) as store:
                report = import_slots(
                    store, file, names or None, mode=mode or "merge", dry_run=dry_run
                )
            _print_changes(report, as_json)
    except SlotmemError as e:
        raise click.ClickException(str(e)) from e


def _check_options(fmt, file, model, names, min_confidence, options, mode, progress) -> None:
    chat_only = {
        "--model": model,
        "--min-confidence": min_confidence,
        "--option": options or None,
        "--progress": progress,
    }
    for flag, value in chat_only.items():
        if value is not None and fmt not in CHATS:
            raise click.UsageError(f"{flag} is for chatgpt and claude exports, not {fmt}")
    if mode is not None and fmt != "slotmem":
        raise click.UsageError(f"--mode is for slotmem files, not {fmt}")
    if fmt == "mcp-memory" and len(names) > 1:
        raise click.UsageError("mcp-memory imports into one slot: give --slot once")
    if fmt == "slotmem" and file == "-":
        raise click.UsageError("a slotmem file cannot be read from standard input")


def _read(file) -> tuple[bytes, str]:
    from ..ingest.importers.common import read_bytes

    if file == "-":
        with click.open_file("-", "rb") as stdin:
            return stdin.read(), "stdin"
    return read_bytes(file), click.format_filename(file, shorten=True)


def _read_export(file) -> tuple[bytes, str]:
    from ..ingest.importers.common import read_export

    return _read(file) if file == "-" else read_export(file)


def _chats(fmt, file, model, names, settings, dry_run, progress, as_json, database):
    from ..ingest.importers.conversations import (
        ImportInterrupted,
        import_conversations,
        read_conversations,
    )

    data, name = _read_export(file)
    conversations = read_conversations(fmt, data, name)  # a bad file creates no memory file
    if progress is None:
        progress = sys.stderr.isatty()
    with store_for(database, dry_run) as store:
        try:
            report = import_conversations(
                store,
                conversations,
                fmt,
                model,
                slots=names or DEFAULT_SLOTS,
                dry_run=dry_run,
                progress=progress,
                **settings,
            )
        except ImportInterrupted as e:
            if not as_json:
                _print_conversations(e.report)
            raise
    if as_json:
        echo_json(report.to_dict())
    else:
        _print_conversations(report)


def _print_conversations(report) -> None:
    counts = ", ".join(f"{n} {action}" for action, n in report.counts().items()) or "no facts"
    click.echo(
        f"{report.total} conversations with text: {len(report.flushed)} read by the model"
        + (f", {len(report.skipped)} already imported" if report.skipped else "")
        + f"; facts: {counts}"
    )
    if report.dry_run:
        note("Dry run: nothing was written.")
    elif report.flushed:
        note(f"To revert one: slotmem undo-flush {report.format}:ID")


def _print_changes(report, as_json: bool) -> None:
    if as_json:
        echo_json(report.to_dict())
        return
    rows = [change.to_dict() for change in report.changes]
    if rows:
        click.echo(table(rows, CHANGE_COLUMNS))
    else:
        note("the file holds no facts")
    summary = ", ".join(f"{n} {action}" for action, n in report.counts().items())
    extra = ", ".join(f"{n} {kind}" for kind, n in report.records.items() if n)
    if summary or extra:
        click.echo("\n" + "; ".join(filter(None, [summary, extra])))
    if report.dry_run:
        note("Dry run: nothing was written.")
