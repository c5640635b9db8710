"""The slotmem command line: parse, call Store, print."""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

import click

from . import __version__, db, fusion
from .errors import SlotmemError
from .output import emit, format_options
from .ranking import EXPLAIN_COLUMNS

FACT_COLUMNS = ["slot", "key", "value", "confidence", "access_count", "last_accessed"]


class Group(click.Group):
    """Turns every SlotmemError (and driver error) into one clear line and exit status 1."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except SlotmemError as e:
            raise click.ClickException(str(e)) from e
        except db.driver.DatabaseError as e:
            raise click.ClickException(str(db.translate(e))) from e


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


def database_option(command):
    return click.option(
        "-d", "--database", type=click.Path(dir_okay=False, path_type=Path),
        envvar="SLOTMEM_DB", default=db.default_path, show_default="$SLOTMEM_DB or data dir",
        help="The memory file",
    )(command)  # fmt: skip


def open_store(database: Path):
    from .store import Store

    return Store(database)


def _when(ms: int | None) -> str:
    if not ms:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000).isoformat(sep=" ", timespec="seconds")


def _fact_rows(facts, fmt) -> list[dict]:
    rows = [fact.to_dict() for fact in facts]
    if fmt in (None, "table"):
        for row in rows:
            for name in ("created_at", "updated_at", "last_accessed", "changed_at"):
                if name in row:
                    row[name] = _when(row[name])
    return rows


@cli.command()
@database_option
def path(database):
    """Print the path of the memory file."""
    click.echo(str(database))


@cli.command()
@click.argument("slot")
@click.argument("key")
@click.argument("value")
@click.option("-c", "--confidence", type=float, default=1.0, show_default=True, help="0 to 1")
@click.option("--source", default="cli", show_default=True, help="Provenance to record")
@database_option
def remember(slot, key, value, confidence, source, database):
    """Store VALUE under SLOT/KEY (use - to read VALUE from stdin).

    \b
    slotmem remember user timezone "Europe/Stockholm" -c 0.9
    """
    if value == "-":
        value = sys.stdin.read()
    result = open_store(database).upsert(slot, key, value, confidence=confidence, source=source)
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
    click.echo(json.dumps(fact.to_dict(), indent=2, ensure_ascii=False) if as_json else fact.value)


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
@click.option("--order", type=click.Choice(["accessed", "used", "updated", "created", "key"]),
              default="accessed", show_default=True)  # fmt: skip
@format_options
@database_option
def list_(slot, limit, order, fmt, database):
    """List facts of SLOT (or all slots), most recently accessed first."""
    facts = open_store(database).list_facts(slot, limit=limit or None, order=order)
    emit(_fact_rows(facts, fmt), fmt, None if fmt else FACT_COLUMNS)


@cli.command()
@click.argument("text")
@click.option("-s", "--slot", "slots", multiple=True, help="Only these slots (repeatable)")
@click.option("-n", "--limit", type=int, default=10, show_default=True)
@click.option("--min-score", type=float, help="Drop hits scoring below this")
@click.option("--explain", is_flag=True, help="Show the parts of each hit's score")
@click.option("--no-track", is_flag=True, help="Do not count this search as an access")
@click.option("--lexical", is_flag=True, help="Full-text leg only, even when semantic is on")
@format_options
@database_option
def search(text, slots, limit, min_score, explain, no_track, lexical, fmt, database):
    """Search facts for TEXT, best first.

    \b
    slotmem search "what timezone am I in?" --slot user --explain
    """
    hits = open_store(database).query_facts(
        text, slots=list(slots) or None, limit=limit, min_score=min_score,
        track_access=not no_track, explain=explain, semantic=not lexical,
    )  # fmt: skip
    rows = [hit.to_dict() for hit in hits]
    columns = None
    if fmt in (None, "table"):
        for row in rows:
            row.update(row.pop("explanation", None) or {})
        columns = ["score", "slot", "key", "value"]
        if explain:
            hybrid = any("fused" in row for row in rows)
            columns += fusion.EXPLAIN_COLUMNS if hybrid else EXPLAIN_COLUMNS
    emit(rows, fmt, columns)


@cli.command()
@click.argument("message")
@click.option("-s", "--slot", "slots", multiple=True, help="Slots to ask, in order")
@click.option("-n", "--limit", type=int, default=10, show_default=True, help="Facts per slot")
@click.option("--budget", type=int, default=1500, show_default=True, help="Characters per slot")
@click.option("--no-track", is_flag=True, help="Do not count this as an access")
@database_option
def context(message, slots, limit, budget, no_track, database):
    """Print the markdown an agent's prompt would get for MESSAGE."""
    from .context import build_context

    text = build_context(
        open_store(database), message, slots or ("user", "project", "agent"),
        limit=limit, budget_chars=budget, track_access=not no_track,
    )  # fmt: skip
    click.echo(text or "(no relevant facts)")


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


@cli.command()
@click.argument("slot", required=False)
@click.option("--cap", type=int, help="Most facts to keep in the slot")
@click.option("--min-age-days", type=float, help="Only prune facts untouched this long")
@click.option("--min-access-count", type=int, help="Only prune facts accessed fewer times")
@click.option("--dry-run", is_flag=True, help="Show what would go, remove nothing")
@format_options
@database_option
def prune(slot, cap, min_age_days, min_access_count, dry_run, fmt, database):
    """Prune SLOT, or every slot with a policy (for cron).

    When a slot holds more than its cap, the excess goes among facts neither accessed nor
    updated for --min-age-days and accessed fewer than --min-access-count times, least used
    and oldest first. Removed facts stay in history.

    \b
    0 3 * * *  slotmem prune -d ~/agent.db
    """
    store = open_store(database)
    if slot:
        reports = [store.prune_slot(slot, cap=cap, min_age_days=min_age_days,
                                    min_access_count=min_access_count, dry_run=dry_run)]  # fmt: skip
    elif cap is not None or min_age_days is not None or min_access_count is not None:
        raise click.UsageError("--cap, --min-age-days and --min-access-count need a SLOT")
    else:
        reports = store.prune(dry_run=dry_run)
    rows = [report.to_dict() for report in reports]
    if fmt in (None, "table"):
        for row in rows:
            row["removed"] = len(row["removed"])
    emit(rows, fmt)


@cli.command()
@click.argument("slot", required=False)
@click.option("--cap", type=int, help="Most facts to keep")
@click.option("--min-age-days", type=float, default=30, show_default=True)
@click.option("--min-access-count", type=int, default=3, show_default=True)
@click.option("--description", help="What the slot is for")
@format_options
@database_option
def policy(slot, cap, min_age_days, min_access_count, description, fmt, database):
    """Show retention policies, or set SLOT's with --cap."""
    store = open_store(database)
    if cap is not None:
        if not slot:
            raise click.UsageError("--cap needs a SLOT")
        store.set_policy(slot, cap=cap, min_age_days=min_age_days,
                         min_access_count=min_access_count, description=description)  # fmt: skip
    policies = [p for p in store.policies() if not slot or p.slot == slot]
    emit([p.to_dict() for p in policies], fmt)


@cli.command()
@click.argument("slot")
@click.argument("key")
@format_options
@database_option
def history(slot, key, fmt, database):
    """Old values of SLOT/KEY, newest first (overwrites, deletes, prunes)."""
    entries = open_store(database).history(slot, key)
    emit(_fact_rows(entries, fmt), fmt,
         None if fmt else ["changed_at", "reason", "value", "confidence", "source"])  # fmt: skip


@cli.command()
@click.option("--json", "as_json", is_flag=True)
@database_option
def stats(as_json, database):
    """Counts per slot, file size, schema and driver."""
    data = open_store(database).stats()
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
@click.option("--list", "list_", is_flag=True, help="List migrations and whether applied")
@database_option
def migrate(list_, database):
    """Apply pending schema migrations (opening a file does this too)."""
    if list_:
        conn = db.connect(database)
        try:
            applied = set(db.applied_migrations(conn))
        finally:
            conn.close()
        for name in db.migration_names():
            click.echo(f"[{'x' if name in applied else ' '}] {name}")
        return
    applied = open_store(database).migrated
    click.echo(f"applied: {', '.join(applied)}" if applied else "up to date")


@cli.command()
@click.option("--repair", is_flag=True, help="Rebuild derived indexes (full-text, vector) from the facts and stored vectors")
@click.option("--json", "as_json", is_flag=True)
@database_option
def doctor(repair, as_json, database):
    """Check the file: integrity, full-text and vector indexes, schema, journal mode."""
    from . import doctor as checks

    store = open_store(database)
    if repair:
        for line in checks.repair(store):
            click.echo(line)
    results = checks.check(store)
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        for row in results:
            mark = "ok " if row["ok"] else "BAD"
            fix = f"  fix: {row['fix']}" if row["fix"] else ""
            click.echo(f"[{mark}] {row['check']}: {row['detail']}{fix}")
    if not all(row["ok"] for row in results):
        sys.exit(1)


@cli.command()
@click.option("-d", "--database", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to build the demo file [default: demo.db in the data directory]")  # fmt: skip
def demo(database):
    """Build a demo memory and show what an agent would get for a few messages.

    Needs no API key and no network.
    """
    from . import demo as demo_data
    from .context import build_context

    database = database or db.default_path().with_name("demo.db")
    store = open_store(database)
    foreign = store.conn.execute(
        "SELECT count(*) FROM memory_facts WHERE source IS NOT ?", (demo_data.DEMO_SOURCE,)
    ).fetchone()[0]
    if foreign:
        raise click.ClickException(f"{database} holds {foreign} facts that are not demo facts; "
                                   "pick another file with -d")  # fmt: skip
    results = store.upsert_many(demo_data.items())
    created = sum(r.action == "created" for r in results)
    click.echo(f"Demo memory: {database} ({len(results)} facts, {created} new)\n")
    for message in demo_data.MESSAGES:
        click.secho(f"> {message}", bold=True)
        click.echo(build_context(store, message, track_access=False) or "(no relevant facts)")
        click.echo()
    click.echo(f"Try: slotmem search -d {database} \"deploy on Friday\" --explain")


@cli.command()
@click.option("-m", "--model", help="llm embedding model id  [default: the file's, else all-minilm-l6-v2-int8]")
@click.option("--batch-size", type=click.IntRange(1, 4096), default=256, show_default=True)
@database_option
def reindex(model, batch_size, database):
    """Turn on semantic search, or bring its vectors up to date.

    Embeds every fact whose vector is missing or stale, in batches, with a progress bar;
    unchanged facts are skipped. A different --model re-embeds everything: the file never
    mixes two models' vectors, and full-text search keeps serving meanwhile. A vector index
    from an older slotmem is rebuilt from the stored vectors, without re-embedding. Needs
    pip install 'slotmem[semantic]'.
    """
    store = open_store(database)
    bar = None

    def start(total):
        nonlocal bar
        bar = click.progressbar(length=total, label="Embedding facts", file=sys.stderr)
        bar.__enter__()

    try:
        report = store.semantic.reindex(model, batch_size=batch_size, total=start,
                                        progress=lambda n: bar.update(n))  # fmt: skip
    finally:
        if bar is not None:
            bar.__exit__(None, None, None)
    note = " (model switched: every fact re-embedded)" if report["switched"] else ""
    click.echo(f"{report['embedded']} facts embedded with {report['model']} "
               f"({report['dimensions']} dimensions){note}")  # fmt: skip
    if report["unusable"]:
        click.echo(f"{report['unusable']} facts gave no usable vector: they are found by full-text search only")


@cli.command()
@database_option
def mcp(database):
    """Serve this memory over MCP on stdio: recall, remember, forget, context.

    Needs the mcp extra: pip install 'slotmem[mcp]'. In an MCP client's config:

    \b
    {"command": "slotmem", "args": ["mcp", "-d", "/home/maja/agent.db"]}
    """
    from .mcp_server import build_server

    build_server(open_store(database)).run("stdio")


def _attach_optional_commands():
    from .cli_flush import flush

    cli.add_command(flush)


_attach_optional_commands()
