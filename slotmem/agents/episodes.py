"""Episodes in an agent's context, and the record of what a context put into a prompt.

``build(store, message, episodes=True)`` (slotmem.agents.context) adds, after the facts'
sections, the episodes relevant to the message under their own heading and their own budget
(``episode_tokens``), each on one line:

    ## What happened before
    - **Context Engineering** (2026-05-30, score 8.7): Covered the top 5 techniques ...

Episodes are searched by both legs (``Store.search_episodes``), kept when at least as relevant
as their slot's floor, best first, one of each title (the same task run again), as many as fit
the budget (the others are in
``Context.cut``, with why); only those in the text count as accessed. ``record=True`` logs the
build (``log``): its message, session and run, each fact and episode in the order of the
prompt, then those cut, so that "which facts did you use for that answer?" is
``store.retrievals(run=...)``.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Iterable
from typing import Any

from .. import validation
from ..errors import InvalidInput
from .context import Context, Item, Section, estimate_tokens

EPISODE_TITLE = "What happened before"
DEFAULT_EPISODE_TOKENS = 400
CANDIDATES = 10  # episodes asked of the search


def plan(
    episodes: bool | str | Iterable[str] = False,
    episode_tokens: int | None = None,
    record: bool = False,
    session: str | None = None,
    run: str | None = None,
    semantic: bool = True,
    track_access: bool = True,
    explain: bool = False,
) -> Callable[[Any, Context], Context]:
    """What ``build`` does to its context once the facts are in (``finish(store, context)``):
    add its episodes (``episodes``: True for every slot that holds some, or the slots to ask)
    and record it in the retrieval log when ``record``. Checked before anything is read."""
    if (session is not None or run is not None) and not record:
        raise InvalidInput("session and run name a recorded context: pass record=True too")
    if not isinstance(record, bool):
        raise InvalidInput(f"record must be True or False, not {record!r}")
    budget = _tokens(DEFAULT_EPISODE_TOKENS if episode_tokens is None else episode_tokens)
    slots = None if episodes is True or episodes is False or episodes is None else episodes
    if slots is not None:
        slots = validation.slots(slots)
    wanted = episodes is not False and episodes is not None
    session = (
        None if session is None else validation.text(session, "session", 200, single_line=True)
    )
    run = None if run is None else validation.text(run, "run", 200, single_line=True)

    def finish(store, context: Context) -> Context:
        if wanted:
            context = _with_episodes(store, context, slots, budget, semantic, track_access, explain)
        if record:
            log(store, context, session=session, run=run)
        return context

    return finish


def log(store, context: Context, *, session: str | None = None, run: str | None = None):
    """Record ``context`` in the store's retrieval log: what its prompt got, in order, then
    what was cut. Returns the ``Retrieval``."""
    items = [(item, True) for item in context.facts()] + [(item, False) for item in context.cut]
    return store.record_retrieval(
        context.message,
        [
            {
                "id": item.id,
                "slot": item.slot,
                "key": item.key,
                "value": item.value,
                "relevance": item.relevance,
                "included": included,
                "reason": item.reason,
            }
            for item, included in items
        ],
        session=session,
        run=run,
        tokens=context.tokens,
    )


def _with_episodes(store, context, slots, budget, semantic, track_access, explain) -> Context:
    shown = {item.id for item in context.facts()}
    floors: dict[str, float] = {}
    chosen: list[Item] = []
    cut: list[Item] = []
    titles: set[str] = set()
    used = estimate_tokens(f"## {EPISODE_TITLE}") + 2
    with store.tracking(enabled=track_access) as track:
        hits = store.search_episodes(
            context.message,
            slots=slots,
            limit=CANDIDATES,
            semantic=semantic,
            track_access=False,
        )
        for hit in hits:
            episode = hit.episode
            if episode.id in shown:  # its slot was asked for as facts too
                continue
            if episode.slot not in floors:
                floors[episode.slot] = store.min_relevance(episode.slot)
            item = _item(episode, hit.relevance)
            if hit.relevance < floors[episode.slot]:
                if explain:
                    reason = f"below the floor {floors[episode.slot]:g}"
                    cut.append(dataclasses.replace(item, reason=reason))
            elif episode.title is not None and episode.title in titles:  # the task run again
                cut.append(dataclasses.replace(item, reason="a better match has its title"))
            elif used + item.tokens <= budget:
                chosen.append(item)
                used += item.tokens
                titles.add(episode.title or "")
            else:
                cut.append(dataclasses.replace(item, reason="over the episode budget"))
        present = track([item.id for item in chosen])
    chosen = [item for item in chosen if item.id in present]
    if not chosen:
        return dataclasses.replace(context, cut=(*context.cut, *cut))
    section = Section(chosen[0].slot, EPISODE_TITLE, tuple(chosen))
    return Context(
        context.message,
        (*context.sections, section),
        (*context.cut, *cut),
        context.budget_tokens,
    )


def _item(episode, relevance: float) -> Item:
    """The episode as its bullet: ``- **title** (day, score, outcome, feedback): text``."""
    details = [_day(episode.happened_at)]
    if episode.score is not None:
        details.append(f"score {episode.score:g}")
    if episode.outcome:
        details.append(episode.outcome)
    if episode.quality:
        details.append(f"rated {episode.quality:+d}")
    text = " ".join(episode.text.split())
    line = f"- **{episode.label}** ({', '.join(details)}): {text}"
    return Item(
        episode.id,
        episode.slot,
        episode.key,
        episode.text,
        relevance,
        False,
        episode.happened_at,
        line,
        estimate_tokens(line) + 1,
    )


def _day(ms: int) -> str:
    moment = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%d")


def _tokens(number) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise InvalidInput(f"episode_tokens must be a number of tokens >= 0, not {number!r}")
    return number


def describe(retrieval) -> str:
    """A recorded context as lines a person or an agent reads: the answer to "which facts did
    you use for that answer?" (each fact and episode the prompt had, in its order)."""
    when = datetime.datetime.fromtimestamp(retrieval.at / 1000, datetime.timezone.utc)
    about = [when.strftime("%Y-%m-%d %H:%M UTC")]
    about += [
        f"{name} {value}"
        for name, value in (("session", retrieval.session), ("run", retrieval.run))
        if value
    ]
    lines = [f'Used for "{retrieval.query}" ({", ".join(about)}):']
    lines += [
        f"- {item.kind} {item.slot}/{item.key}: {' '.join(item.value.split())}"
        for item in retrieval.used()
    ]
    return "\n".join(lines if len(lines) > 1 else [*lines, "- nothing from memory"])
