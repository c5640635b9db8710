"""Commands that bring facts back, move them and fold them: restore, undo-flush, export, import,
dedupe."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..reports import ChangeReport
from ..search.duplicates import THRESHOLDS
from .app import cli, database_option, exists, open_store, store_for
from .grammar import fact_argument, stored_key
from .output import done, echo_json, emit, format_options, json_option, note, table

CHANGE_COLUMNS = ["action", "slot", "key", "value", "old_value", "note"]


@cli.command()
@fact_argument()
@click.option(
    "--version", type=click.IntRange(min=1), help="The version to bring back  [default: the newest]"
)
@json_option("what was restored")
@database_option
def restore(slot, key, version, as_json, database):
    """Bring back an old value of SLOT/KEY from history (a deleted, pruned, expired or
    overwritten one). The value it replaces goes to history: a restore can be restored.

    \b
    slotmem history user home_city        # the versions
    slotmem restore user/home_city --version 2
    """
    store = open_store(database)
    result = store.restore(slot, stored_key(store, slot, key), version=version, by="cli")
    if as_json:
        echo_json(done("restored", result.fact, version=version, previous=result.previous))
        return
    click.echo(f"restored: {result.fact.slot}/{result.fact.key}: {result.fact.value}")
    if result.previous is not None:
        click.echo(f"  was: {result.previous.value}")


@cli.command(name="undo-flush")
@click.argument("source")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing")
@format_options(json_help="Output the report (changes and counts) as a JSON object")
@database_option
def undo_flush(source, dry_run, fmt, database):
    """Revert what flushes of SOURCE wrote (the transcript name the flush reported, e.g.
    chat.json or llm:ID): each fact goes back to its value before, or away when the flush
    created it. Facts changed since are kept. Every value replaced stays in history.

    \b
    slotmem undo-flush chat.json --dry-run
    """
    report = open_store(database).undo_flush(source, dry_run=dry_run)
    _print_changes(report, fmt, f"no fact holds a value from a flush of {source!r}")


@cli.command()
@click.option("-s", "--slot", help="Only this slot")
@click.option("--markdown", is_flag=True, help="A Markdown page a person can read (facts only)")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path, allow_dash=True),
    default="-",
    help="Write to this file  [default: standard output]",
)
@database_option
def export(slot, markdown, output, database):
    """Write the memory as JSON Lines: every fact with every column, its history, feedback
    and the policies, then an end marker (count and checksum) that import checks (vectors are
    not exported: import embeds again). A file given with -o appears only once complete.

    \b
    slotmem export > memory.jsonl
    slotmem export --slot user --markdown -o user.md
    """
    from ..storage import transfer

    records = open_store(database).export(slot)
    text = transfer.markdown(records, f"Memory: {Path(database).name}") if markdown else None
    if str(output) != "-":
        transfer.write(records, output, text)
        return
    if text is not None:
        click.echo(text, nl=False)
    else:
        for record in records:
            click.echo(json.dumps(record, ensure_ascii=False))


@cli.command(name="import")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path))
@click.option(
    "--mode",
    type=click.Choice(["merge", "replace", "skip-existing"]),
    default="merge",
    show_default=True,
    help="merge: the newer value of a key wins; replace: the file wins, and facts of its "
    "slots it lacks go; skip-existing: only new keys",
)
@click.option("--dry-run", is_flag=True, help="Check the file and show what would change")
@click.option(
    "--partial",
    is_flag=True,
    help="Accept an export without its end marker, or not matching it (cut short, edited, or "
    "from a slotmem before format 2)",
)
@click.option(
    "--trusted",
    is_flag=True,
    help="The file is your own data (e.g. an export of another of your memory files): take it "
    "as you would write it, without the write scan",
)
@format_options(json_help="Output the report (changes and counts) as a JSON object")
@database_option
def import_(file, mode, dry_run, partial, trusted, fmt, database):
    """Import FILE (JSON Lines, as export writes; - for standard input). Every line is checked
    as any write is: a bad line is an error naming it, and nothing is written. An export must
    end with its end marker. An unchanged export of this memory is taken as you wrote it; any
    other file is scanned for instructions and secrets in every text an agent can read. Values
    replaced stay in history.

    \b
    slotmem import memory.jsonl --dry-run
    slotmem export -d old.db | slotmem import - -d new.db --trusted --mode skip-existing
    """
    from ..storage import transfer

    name = "stdin" if str(file) == "-" else str(file)
    try:
        with click.open_file(str(file), "r", encoding="utf-8") as stream:
            lines = stream.readlines()
    except UnicodeDecodeError as e:
        raise click.ClickException(
            f"{name} is not UTF-8 text ({e.reason}); nothing was imported"
        ) from None
    except OSError as e:
        raise click.ClickException(f"cannot read {name}: {e.strerror or e}") from None
    if not exists(database):  # a bad line creates no file
        transfer.read(lines, name, 0, partial=partial, trusted=trusted)
    with store_for(database, dry_run) as store:
        report = store.import_records(
            lines, mode=mode, dry_run=dry_run, name=name, partial=partial, trusted=trusted
        )
    extra = ", ".join(f"{n} {name}" for name, n in report.records.items() if n)
    _print_changes(report, fmt, "the file holds no facts", extra)


@cli.command()
@click.option("-s", "--slot", help="Only this slot  [default: every slot]")
@click.option(
    "--threshold",
    type=click.FloatRange(0, 1),
    help="Least score of a pair, 0 to 1: the estimated chance that it is one fact said twice  "
    f"[default: {THRESHOLDS['vector']} by vectors, {THRESHOLDS['lexical']} by words]",
)
@click.option("--lexical", is_flag=True, help="Compare words, even when semantic search is on")
@click.option("--dry-run", is_flag=True, help="List the pairs; merge nothing")
@format_options(json_help="Output the report as a JSON object (--dry-run: the pairs, an array)")
@database_option
def dedupe(slot, threshold, lexical, dry_run, fmt, database):
    """Find near-duplicate facts (by vectors when semantic search is on, else by the words
    they share) and merge each pair: the newer fact stays, with both access counts and the
    other's history; the other goes to history (reason merge). A pair's score, 0 to 1, weighs
    how alike the two are against what one says that the other does not ("Marta lives in
    Porto", "Jonas lives in Porto": two people, not a pair).

    \b
    slotmem dedupe --dry-run
    slotmem dedupe --slot user --threshold 0.5
    """
    store = open_store(database)
    if dry_run:
        pairs = store.duplicates(slot, threshold=threshold, semantic=not lexical)
        rows = [pair.to_dict() for pair in pairs]
        columns = ["slot", "similarity", "method", "keep", "keep_value", "drop", "drop_value"]
        if not rows and not fmt:
            note("no near-duplicate pairs")
            return
        emit(rows, fmt, None if fmt else columns)
        if not fmt:
            note(f"\n{len(rows)} pairs. Dry run: nothing was merged.")
        return
    report = store.dedupe(slot, threshold=threshold, semantic=not lexical)
    _print_changes(report, fmt, "no near-duplicate pairs")


def _print_changes(report: ChangeReport, fmt, empty: str, extra: str = "") -> None:
    if fmt:
        if fmt == "json":
            echo_json(report.to_dict())
        else:
            emit([change.to_dict() for change in report.changes], fmt, CHANGE_COLUMNS)
        return
    if report.changes:
        click.echo(table([c.to_dict() for c in report.changes], CHANGE_COLUMNS))
    else:
        note(empty)
    counts = ", ".join(f"{n} {action}" for action, n in report.counts().items())
    summary = "; ".join(filter(None, [counts, extra]))
    if summary:
        click.echo(f"\n{summary}")
    if report.dry_run:
        note("Dry run: nothing was written.")
