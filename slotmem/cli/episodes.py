"""Commands on episodes (record, list, search, show) and on the retrieval log (list, show,
prune): what happened, and what the agent knew when it answered."""

from __future__ import annotations

import json
import sys

import click

from ..records import iso_time, with_iso_times
from .app import cli, database_option, open_store
from .grammar import every, limit_option, split_one
from .output import echo_json, emit, format_options, json_option, since_options, when

EPISODE_COLUMNS = ["id", "happened_at", "session", "run", "label", "score", "outcome", "text"]
RETRIEVAL_COLUMNS = ["id", "at", "session", "run", "facts", "episodes", "cut", "query"]
TIMES = ("happened_at", "at")


def _rows(records, fmt) -> list[dict]:
    """Episodes, hits or retrievals as rows: local times in a table, ISO-8601 otherwise."""
    from ..storage.episodes import Episode, EpisodeHit  # not imported by `slotmem context`

    rows = []
    for record in records:
        row = record.to_dict()
        if isinstance(record, (Episode, EpisodeHit)):
            row["label"] = (record.episode if isinstance(record, EpisodeHit) else record).label
        for name in TIMES:
            if name in row:
                row[name] = when(row[name]) if fmt in (None, "table") else iso_time(row[name])
        rows.append(row)
    return rows


@cli.group()
def episodes():
    """Episodes: what happened (a run, an exchange), beside facts (what is true).

    \b
    slotmem episodes record "Q: capital of Australia? A: Canberra" --session s1 --run q7
    slotmem episodes search "Australian geography"
    slotmem episodes list --fact user/geography.capital    # which run did this come from?
    """


@episodes.command(name="record")
@click.argument("text")
@click.option("--title", help="One line naming what happened (its key's words)")
@click.option("--task", help="The task or question it answered")
@click.option("--session", help="The session it belongs to")
@click.option("--run", help="The run or query id")
@click.option("--outcome", help="How it ended: success, failure, ...")
@click.option("--score", type=float, help="Its quality score, on any scale (a judge's 0-10)")
@click.option("--at", "happened_at", metavar="WHEN", help="When it happened  [default: now]")
@click.option("--slot", default="episodes", show_default=True)
@click.option("--key", help="Its key  [default: a new one]; given again, updates it")
@click.option("--data", metavar="JSON", help="Other data, a JSON object")
@click.option(
    "--fact",
    "facts",
    metavar="SLOT/KEY=VALUE",
    multiple=True,
    help="A fact learned from it, written and linked (repeatable)",
)
@click.option("--json", "as_json", is_flag=True, help="Output the episode as JSON")
@database_option
def record(
    text,
    title,
    task,
    session,
    run,
    outcome,
    score,
    happened_at,
    slot,
    key,
    data,
    facts,
    as_json,
    database,
):
    """Record what happened: TEXT (use - to read it from stdin) is what searches find.

    \b
    slotmem episodes record "Covered RAG and context compression." \\
        --title "Context engineering" --run r-17 --score 8.7 \\
        --fact "project/rag.vs.static=RAG beats static context for changing knowledge"
    """
    if text == "-":
        text = sys.stdin.read()
    parsed = None
    if data is not None:
        try:
            parsed = json.loads(data)
        except ValueError as e:
            raise click.BadParameter(f"not JSON: {e}", param_hint="--data") from None
    items = [_fact_item(fact) for fact in facts]
    episode = open_store(database, create=True).record_episode(
        text,
        slot=slot,
        key=key,
        title=title,
        task=task,
        session=session,
        run=run,
        outcome=outcome,
        score=score,
        happened_at=happened_at,
        data=parsed,
        facts=items,
    )
    if as_json:
        echo_json(_rows([episode], "json")[0])
        return
    click.echo(f"recorded episode {episode.id}: {episode.slot}/{episode.key}")
    for item in items:
        click.echo(f"  fact {item['slot']}/{item['key']}")


def _fact_item(text: str) -> dict:
    pair, sep, value = text.partition("=")
    if not sep:
        raise click.UsageError(f"give --fact as SLOT/KEY=VALUE, not {text!r}")
    slot, key = split_one(pair, "--fact")
    return {"slot": slot, "key": key, "value": value}


@episodes.command(name="list")
@click.option("-s", "--slot", "slots", multiple=True, help="Only these slots (repeatable)")
@click.option("--session", help="Only this session's")
@click.option("--run", help="Only this run's")
@click.option("--fact", metavar="SLOT/KEY", help="Only those this fact was written from")
@limit_option(50)
@since_options("that happened")
@format_options
@database_option
def list_(slots, session, run, fact, limit, since, until, fmt, database):
    """List episodes, latest first.

    \b
    slotmem episodes list --session s1 --since 7d
    slotmem episodes list --fact project/rag.vs.static --json
    """
    store = open_store(database)
    if fact is not None:
        found = store.fact_episodes(*split_one(fact, "--fact"))
    else:
        found = store.list_episodes(
            list(slots) or None,
            session=session,
            run=run,
            since=since,
            until=until,
            limit=limit,
        )
    emit(_rows(found, fmt), fmt, None if fmt else EPISODE_COLUMNS)


@episodes.command(name="search")
@click.argument("text")
@click.option("-s", "--slot", "slots", multiple=True, help="Only these slots (repeatable)")
@click.option("--session", help="Only this session's")
@limit_option(5)
@click.option("--lexical", is_flag=True, help="Full-text leg only, even when semantic is on")
@click.option("--no-track", is_flag=True, help="Do not count this search as an access")
@format_options
@database_option
def search(text, slots, session, limit, lexical, no_track, fmt, database):
    """Search episodes for TEXT, by words and (when semantic search is on) by meaning."""
    store = open_store(database)
    hits = store.search_episodes(
        text,
        slots=list(slots) or None,
        session=session,
        limit=every(store, limit),
        semantic=not lexical,
        track_access=not no_track,
    )
    columns = ["relevance", *EPISODE_COLUMNS]
    emit(_rows(hits, fmt), fmt, None if fmt else columns)


@episodes.command()
@click.argument("episode_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Output it, its facts and prompts as JSON")
@database_option
def show(episode_id, as_json, database):
    """Show episode ID: what happened, the facts written from it, the prompts that had it."""
    store = open_store(database)
    episode = store.get_episode(episode_id)
    if episode is None:
        raise click.ClickException(f"no episode {episode_id}")
    facts = store.episode_facts(episode.id)
    used_by = store.retrievals(fact_id=episode.id, limit=None)
    if as_json:
        data = _rows([episode], "json")[0]
        data["facts"] = [with_iso_times(fact.to_dict()) for fact in facts]
        data["retrievals"] = [retrieval.id for retrieval in used_by]
        echo_json(data)
        return
    fields = ["slot", "key", "title", "task", "session", "run", "outcome", "score", "quality"]
    click.echo(f"episode {episode.id} ({when(episode.happened_at)})")
    for name in fields:
        value = getattr(episode, name)
        if value is not None:
            click.echo(f"  {name}: {value}")
    if episode.data:
        click.echo(f"  data: {json.dumps(episode.data, ensure_ascii=False)}")
    click.echo(f"\n{episode.text}\n")
    click.echo(f"facts from it ({len(facts)}):")
    for fact in facts:
        click.echo(f"  {fact.slot}/{fact.key}: {fact.value}")
    if used_by:
        click.echo(f"in the prompts of retrievals {', '.join(str(r.id) for r in used_by)}")


@cli.group()
def retrievals():
    """The retrieval log: what recorded contexts put into prompts.

    A context is recorded when built with record=True (Python) or 'slotmem context --record'.

    \b
    slotmem retrievals list --run turn-3
    slotmem retrievals show 12          # which facts did you use for that answer?
    """


@retrievals.command(name="list")
@click.option("--session", help="Only this session's")
@click.option("--run", help="Only this run's")
@click.option("--fact", metavar="SLOT/KEY", help="Only those whose prompt had this fact")
@click.option("--episode", metavar="ID", help="Only those whose prompt had this episode")
@limit_option(20)
@since_options("made")
@format_options
@database_option
def list_retrievals(session, run, fact, episode, limit, since, until, fmt, database):
    """List recorded contexts, latest first, with how many facts and episodes each gave."""
    if fact is not None and episode is not None:
        raise click.UsageError("give --fact or --episode, not both")
    store = open_store(database)
    fact_id = episode
    if fact is not None:
        found = store.get(*split_one(fact, "--fact"))
        if found is None:
            raise click.ClickException(f"no fact {fact}")
        fact_id = found.id
    listed = store.retrievals(
        session=session, run=run, fact_id=fact_id, since=since, until=until, limit=limit
    )
    rows = []
    for retrieval, row in zip(listed, _rows(listed, fmt)):
        row.update(
            facts=len(retrieval.used("fact")),
            episodes=len(retrieval.used("episode")),
            cut=len(retrieval.cut()),
        )
        if fmt in (None, "table"):
            del row["items"]
        rows.append(row)
    emit(rows, fmt, None if fmt else RETRIEVAL_COLUMNS)


@retrievals.command(name="show")
@click.argument("retrieval_id", metavar="ID", type=int)
@click.option("--json", "as_json", is_flag=True, help="Output it and every item as JSON")
@database_option
def show_retrieval(retrieval_id, as_json, database):
    """Show what recorded context ID gave the prompt, in order, then what it cut and why."""
    from ..agents.episodes import describe

    retrieval = open_store(database).get_retrieval(retrieval_id)
    if retrieval is None:
        raise click.ClickException(f"no retrieval {retrieval_id}")
    if as_json:
        echo_json(_rows([retrieval], "json")[0])
        return
    click.echo(describe(retrieval))
    cut = retrieval.cut()
    if cut:
        click.echo(f"\ncut ({len(cut)}):")
        for item in cut:
            click.echo(f"- {item.kind} {item.slot}/{item.key}: {item.reason}")


@retrievals.command(name="prune")
@click.option("--before", metavar="WHEN", required=True, help="A date, or a duration ago: 30d")
@json_option("how many were forgotten")
@database_option
def prune_retrievals(before, as_json, database):
    """Forget recorded contexts made before WHEN (the facts and episodes stay)."""
    count = open_store(database).prune_retrievals(before)
    if as_json:
        echo_json({"action": "pruned", "forgotten": count})
        return
    click.echo(f"forgot {count} recorded context{'s' if count != 1 else ''}")
