"""`slotmem flush`: turn a conversation transcript into facts with an LLM."""

from __future__ import annotations

import shlex
import sys

import click

from ..errors import SlotmemError
from ..ingest.defaults import DEFAULT_CHUNK_CHARS, DEFAULT_MIN_CONFIDENCE, DEFAULT_SLOTS
from ..ingest.report import FlushReport
from .app import cli, database_option, store_for
from .output import echo_json, note, table, width_option

REPORT_COLUMNS = ["action", "slot", "key", "value", "confidence", "note"]


@cli.command()
@click.argument("file", required=False, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--conversation",
    "conversation_id",
    metavar="ID",
    help="Read this conversation from the llm tool's logs database instead of FILE",
)
@click.option("-m", "--model", help="llm model id or alias  [default: llm's default model]")
@click.option(
    "-s",
    "--slot",
    "slots",
    multiple=True,
    metavar="SLOT",
    help="A slot facts may go into (repeatable)  [default: user, project, agent]",
)
@click.option(
    "--min-confidence",
    type=click.FloatRange(0, 1),
    default=DEFAULT_MIN_CONFIDENCE,
    show_default=True,
    help="Reject facts the model is less sure of",
)
@click.option("--source", help="Provenance to record  [default: the file name, or llm:ID]")
@click.option(
    "--chunk-size",
    type=click.IntRange(min=1000),
    default=DEFAULT_CHUNK_CHARS,
    show_default=True,
    help="Characters of transcript per model call",
)
@click.option(
    "--now",
    metavar="WHEN",
    help="When the conversation took place (2026-10-15)  [default: its timestamps, else now]",
)
@click.option(
    "-o",
    "--option",
    "options",
    type=(str, str),
    multiple=True,
    metavar="KEY VALUE",
    help="A model option, as llm takes it: -o temperature 0.1 (repeatable)",
)
@click.option(
    "--all",
    "from_start",
    is_flag=True,
    help="Read the whole conversation again, not only what is new since its last flush",
)
@click.option(
    "--second-opinion",
    is_flag=True,
    help="Ask the model too about facts the write scan is unsure of (more model calls)",
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar on stderr  [default: when stderr is a terminal]",
)
@click.option("--json", "as_json", is_flag=True, help="Output the report as JSON")
@width_option
@database_option
def flush(
    file,
    conversation_id,
    model,
    slots,
    min_confidence,
    source,
    chunk_size,
    now,
    options,
    from_start,
    second_opinion,
    dry_run,
    progress,
    as_json,
    database,
):
    """Extract durable facts from a conversation with an LLM and store them.

    FILE is plain text, a JSON list of {role, content} messages, or JSON Lines of
    them; - reads standard input. --conversation ID reads a conversation logged by
    the llm tool ('llm logs list' shows the ids). Every proposed fact is reported
    as created, updated, unchanged or rejected (with the reason). The model is told the day
    the conversation took place and asked for absolute dates; 'slotmem undo-flush SOURCE'
    reverts what a flush wrote. Flushed again as it grows, a conversation (by its source:
    the file name, stdin or llm:ID) sends the model only its new messages; --all reads it all.

    \b
        slotmem flush chat.json -m gpt-4o-mini -o temperature 0.1
        slotmem flush --conversation 01jq3... --dry-run
        cat notes.txt | slotmem flush - --slot project --now 2026-10-15
    """
    from ..ingest.flusher import flush as run_flush

    try:
        transcript = _read_transcript(file, conversation_id)
        if progress is None:
            progress = sys.stderr.isatty()
        with store_for(database, dry_run) as store:
            report = run_flush(
                store,
                transcript,
                model,
                slots=slots or DEFAULT_SLOTS,
                source=source,
                dry_run=dry_run,
                min_confidence=min_confidence,
                chunk_chars=chunk_size,
                progress=progress,
                now=now,
                options=dict(options),
                from_start=from_start,
                second_opinion=second_opinion,
            )
    except SlotmemError as ex:
        raise click.ClickException(str(ex)) from ex
    if as_json:
        echo_json(report.to_dict())
    else:
        _print_report(report)


def _read_transcript(file, conversation_id):
    from ..ingest.llm_logs import from_llm_logs
    from ..ingest.transcripts import parse, read_path

    if file and conversation_id:
        raise click.UsageError("Give a FILE or --conversation ID, not both")
    if conversation_id:
        return from_llm_logs(conversation_id)
    if not file:
        raise click.UsageError("Give a transcript FILE (- for standard input) or --conversation ID")
    if file == "-":
        with click.open_file("-", "rb") as stdin:
            return parse(stdin.read(), source="stdin")
    return read_path(file)


def _note(item) -> str:
    note = f"was: {item.old_value}" if item.action == "updated" else ""
    if item.ttl and item.action != "rejected":
        note = "; ".join(filter(None, [note, f"for {item.ttl}"]))
    return note


def _print_report(report: FlushReport) -> None:
    rows = [
        {
            "action": item.action,
            "slot": item.slot,
            "key": item.key,
            "value": item.value,
            "confidence": item.confidence,
            "note": item.reason or _note(item),
        }
        for item in report.items
    ]
    if rows:
        click.echo(table(rows, REPORT_COLUMNS))
    elif report.chunks:
        note("The model proposed no facts.")
    for text in report.notes:
        note(f"Note: {text}")
    counts = ", ".join(f"{n} {action}" for action, n in report.counts().items())
    chunks = f" in {report.chunks} chunks" if report.chunks > 1 else ""
    if report.skipped:
        chunks += f"; {report.messages} new messages, {report.skipped} read before"
    if report.continuations:
        chunks += f"; asked {report.continuations} times for the rest of a cut-off reply"
    click.echo(f"\n{counts} (model {report.model}{chunks}, prompt {report.prompt_version})")
    if report.dry_run:
        note("Dry run: nothing was written.")
    elif report.created or report.updated:
        note(f"To revert it: slotmem undo-flush {shlex.quote(report.source)}")
