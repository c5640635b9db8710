"""Commands that look after the file: path, stats, policy, prune, migrate, doctor, reindex."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import CorruptDatabase, StorageError
from .app import cli, database_option, open_store
from .output import echo_json, emit, format_options, json_option, note, print_doctor


@cli.command()
@database_option
def path(database):
    """Print the path of the memory file."""
    click.echo(str(database))


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@database_option
def stats(as_json, database):
    """Counts per slot, file size, schema and driver."""
    store = open_store(database)
    data = store.stats()
    if store.semantic.model_id() is None and store.semantic.vec_error():
        # 'slotmem reindex' cannot turn semantic search on here: say what to install (as doctor)
        data["semantic"] = f"off (full-text only): {store.semantic.vec_error()}"
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for name, value in data.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items()) or "(empty)"
        elif isinstance(value, list):
            value = ", ".join(value)
        click.echo(f"{name}: {value}")


@cli.command()
@click.argument("slot", required=False)
@click.option("--default", "default", is_flag=True, help="The policy of slots without one")
@click.option("--cap", type=int, help="Most facts to keep")
@click.option(
    "--min-age-days", type=float, help="Prune only facts untouched this long  [default: 30]"
)
@click.option(
    "--min-access-count", type=int, help="Prune only facts accessed fewer times  [default: 3]"
)
@click.option("--description", help="What the slot is for")
@click.option(
    "--min-relevance",
    metavar="P|default",
    help="The slot's floor for what reaches a prompt, 0 to 1 ('default': slotmem's)",
)
@format_options(json_help="Output a JSON array (when setting one: an object of what was set)")
@database_option
def policy(
    slot, default, cap, min_age_days, min_access_count, description, min_relevance, fmt, database
):
    """Show the slots' policies, or set SLOT's (retention and relevance floor).

    A slot without a policy is pruned by the default policy (slot '*'), which --default sets.
    Setting one with --json prints what was set (the policy, and the one it replaced).

    \b
    slotmem policy episodic --cap 200 --min-age-days 7
    slotmem policy --default --cap 1000
    """
    settings = (cap, min_age_days, min_access_count, description, min_relevance)
    setting = any(value is not None for value in settings)
    if default and slot:
        raise click.UsageError("give a SLOT or --default, not both")
    store = open_store(database, create=setting)
    if setting:
        if not slot and not default:
            raise click.UsageError("setting a policy needs a SLOT (or --default)")
        old = store.default_policy() if default else store.policy(slot)
        previous = old
        given = {"cap": cap, "min_age_days": min_age_days, "min_access_count": min_access_count}
        # what is not given stays as it was; a new slot's policy takes the Store's defaults
        kept = {} if old is None else {name: getattr(old, name) for name in given}
        kept.update((name, value) for name, value in given.items() if value is not None)
        if default:
            if description is not None or min_relevance is not None:
                raise click.UsageError("the default policy has no --description or --min-relevance")
            store.set_default_policy(**kept)
        elif "cap" not in kept:
            raise click.UsageError(f"{slot} has no policy yet: give it a --cap")
        else:
            store.set_policy(
                slot, **kept, description=description, min_relevance=_floor(min_relevance)
            )
        if fmt == "json":
            now = store.default_policy() if default else store.policy(slot)
            echo_json(
                {
                    "action": "set",
                    "policy": now.to_dict(),
                    "previous": None if previous is None else previous.to_dict(),
                }
            )
            return
    policies = [p for p in store.policies() if not slot or p.slot == slot]
    if not slot:
        policies.append(store.default_policy())
    emit([p.to_dict() for p in policies], fmt)


def _floor(text: str | None):
    if text is None or text == "default":
        return text
    try:
        return float(text)
    except ValueError:
        raise click.BadParameter(f"a number from 0 to 1, or 'default', not {text!r}") from None


@cli.command()
@click.argument("slot", required=False)
@click.option("--cap", type=int, help="Most facts to keep in the slot")
@click.option("--min-age-days", type=float, help="Only prune facts untouched this long")
@click.option("--min-access-count", type=int, help="Only prune facts accessed fewer times")
@click.option("--dry-run", is_flag=True, help="Show what would go, remove nothing")
@click.option(
    "--include-protected",
    is_flag=True,
    help="Prune protected facts too (a person's, kept by default)",
)
@format_options
@database_option
def prune(slot, cap, min_age_days, min_access_count, dry_run, include_protected, fmt, database):
    """Prune SLOT, or every slot (for cron): each by its policy, or the default policy.

    Expired facts go first. When a slot holds more than its cap, the excess goes among facts
    neither accessed nor updated for --min-age-days and accessed fewer than --min-access-count
    times (and facts rated -2 or worse, whatever their use), least used and oldest first.
    Pinned facts stay, and so do protected ones (a person's: agents' ratings cannot get them
    pruned) unless --include-protected. Removed facts stay in history
    ('slotmem history --all --since 1d').

    \b
    0 3 * * *  slotmem prune -d ~/agent.db
    """
    store = open_store(database)
    if slot:
        reports = [
            store.prune_slot(
                slot,
                cap=cap,
                min_age_days=min_age_days,
                min_access_count=min_access_count,
                dry_run=dry_run,
                include_protected=include_protected,
            )
        ]
    elif cap is not None or min_age_days is not None or min_access_count is not None:
        raise click.UsageError("--cap, --min-age-days and --min-access-count need a SLOT")
    else:
        reports = store.prune(dry_run=dry_run, include_protected=include_protected)
    rows = [report.to_dict() for report in reports]
    if fmt in (None, "table"):
        for row in rows:
            row["removed"], row["expired"] = len(row["removed"]), len(row["expired"])
    emit(rows, fmt)


@cli.command()
@click.option("--list", "list_", is_flag=True, help="List migrations and whether applied")
@json_option("the migrations applied (with --list: every migration)")
@database_option
def migrate(list_, as_json, database):
    """Apply pending schema migrations (opening a file does this too)."""
    if list_:
        from ..storage import db
        from ..storage import migrate as schema

        path = db.checked_path(database)
        if not path.exists():
            raise db.not_found(path)
        readonly = not db.writable(path)  # a read-write connection leaves no -wal behind
        connections = db.Connections(path, readonly=readonly, check=schema.check_owner)
        try:
            applied = set(schema.applied_migrations(connections.get()))
        finally:
            connections.close()
        names = schema.migration_names()
        if as_json:
            echo_json([{"migration": name, "applied": name in applied} for name in names])
            return
        for name in names:
            click.echo(f"[{'x' if name in applied else ' '}] {name}")
        return
    with contextlib.ExitStack() as stack:
        bars: dict[str, Any] = {}

        def progress(name: str, done: int, total: int) -> None:
            if name not in bars:
                label = f"Converting rows ({name})"
                bars[name] = stack.enter_context(
                    click.progressbar(length=total, label=label, file=sys.stderr)
                )
            bars[name].update(done - bars[name].pos)

        from ..store import Store

        with Store(database, migration_progress=progress) as store:
            applied = store.migrated
    if as_json:
        echo_json({"action": "migrated", "applied": list(applied)})
        return
    click.echo(f"applied: {', '.join(applied)}" if applied else "up to date")


@cli.command()
@click.argument("dest", type=click.Path(dir_okay=False, path_type=Path))
@json_option("the copy's path, size and facts")
@database_option
def backup(dest, as_json, database):
    """Copy the memory file to DEST, a new file, while other processes keep writing.

    The copy is one consistent moment of the file, checked before it takes its name. To
    restore it, stop every process using the file, delete the file's -wal and -shm files,
    and copy the backup over it: never copy a -wal file without its own database.

    \b
    0 4 * * *  slotmem backup -d ~/agent.db ~/backups/agent-$(date +%F).db
    """
    report = open_store(database).backup(dest)
    if as_json:
        echo_json({"action": "backed up", **report})
        return
    click.echo(f"backed up {report['facts']} facts to {report['path']} ({report['bytes']:,} bytes)")


@cli.command()
@click.option(
    "--repair",
    is_flag=True,
    help="Rebuild derived indexes (full-text, vector) from the facts and stored vectors",
)
@click.option("--json", "as_json", is_flag=True)
@database_option
def doctor(repair, as_json, database):
    """Check the file: integrity, full-text and vector indexes, schema, journal mode."""
    try:
        store = open_store(database)
    except (CorruptDatabase, StorageError) as e:  # their own advice may be to run doctor
        raise click.ClickException(
            f"{database} cannot be opened, so it cannot be checked ({e.__cause__ or e}): "
            "restore it from a backup"
        ) from e
    if repair:
        for line in store.repair():  # with --json, standard output is one JSON document
            click.echo(line, err=as_json)
    print_doctor(store.doctor(), as_json)


@cli.command()
@click.option(
    "-m",
    "--model",
    help="llm embedding model id  [default: the file's, else all-minilm-l6-v2-int8]",
)
@click.option("--batch-size", type=click.IntRange(1, 4096), default=256, show_default=True)
@json_option("the report (facts embedded, model, dimensions)")
@database_option
def reindex(model, batch_size, as_json, database):
    """Turn on semantic search, or bring its vectors up to date.

    Embeds every fact whose vector is missing or stale, in batches, with a progress bar;
    unchanged facts are skipped. A different --model re-embeds everything: the file never
    mixes two models' vectors, and full-text search keeps serving meanwhile. A vector index
    from an older slotmem is rebuilt from the stored vectors, without re-embedding. Needs
    pip install 'slotmem[semantic]'.
    """
    store = open_store(database)
    with contextlib.ExitStack() as stack:
        bars = []

        def start(total):
            bar = click.progressbar(length=total, label="Embedding facts", file=sys.stderr)
            bars.append(stack.enter_context(bar))

        report = store.semantic.reindex(
            model, batch_size=batch_size, total=start, progress=lambda n: bars[0].update(n)
        )
    if as_json:
        echo_json({"action": "reindexed", **report})
    else:
        switched = " (model switched: every fact re-embedded)" if report["switched"] else ""
        click.echo(
            f"{report['embedded']} facts embedded with {report['model']} "
            f"({report['dimensions']} dimensions){switched}"
        )
    if report["unusable"]:
        note(
            f"{report['unusable']} facts gave no usable vector: they are found by full-text search only"
        )
