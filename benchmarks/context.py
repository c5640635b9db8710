"""What reaches the prompt: the context builder on LoCoMo, lexical and hybrid side by side.

    python benchmarks/context.py                   # pip install 'slotmem[semantic]'; about 20 minutes
    python benchmarks/context.py --parts quality   # agents, probe, quality, grid, reach, retrieval,
                                                   # tracking, cold
    python benchmarks/context.py --parts quality,agents,probe --settings 30:1000,50:2000
    python benchmarks/context.py --parts grid --candidates 30,50,75,100 --budgets 1000,1500,2000,3000

``--settings``: the (candidates per slot, budget tokens) pairs that quality, agents and probe
build with, side by side (the library's defaults unless given).

- **agents**: what agents store (benchmarks/agent_memory.py: standing facts under telling keys,
  two slots, 5 to 5,000 facts), seed 3's memories (fitting used seeds 1 and 2): the share of
  keyed and paraphrased questions whose ``build`` context (defaults, shipped constants) holds
  their fact, lexical and hybrid, by part of the families (*test*: never fitted or tuned on, the
  figure to quote; *dev*: fitted on, in other memories), and the facts an off-topic message
  (benchmarks/data/offtopic.json) brings.
- **probe**: the paraphrase probe (benchmarks/data/paraphrase.json, never fitted on) as one slot
  of 46 facts: the share of questions whose context holds their fact.

On LoCoMo's development observations (benchmarks/observations.py: a file per conversation, a
slot per person, facts written at their session's time), four tables:

- **quality**: ``build(store, message, the conversation's slots)`` at its defaults, lexical
  (``semantic=False``) and hybrid. *off-topic*: mean facts per message of
  benchmarks/data/offtopic.json (52 messages, never fitted on) asked of each conversation's
  memory. *on-topic*: the share of category-4 questions whose context holds a fact citing one of
  the question's evidence turns, over the questions some observation answers (and over all).
  *tokens*: mean and p95 of the estimated tokens of those questions' contexts and of the
  off-topic messages'; *build time*: against the first setting's, built side by side. Rows: the
  context as it was before (10 hits per slot, no floor, 1,500 characters per slot), with the
  shipped constants (fitted on these conversations), and held out (each conversation's contexts
  built with the constants and floor benchmarks/fit_relevance.py fits on the other four and the
  agent memories' dev families).
- **grid**: candidates per slot x budget on the dev folds only (each fold's constants on the four
  conversations it was fitted on, never the one it holds out; seed 3's agent memories, dev
  families only): LoCoMo answers and off-topic facts, agent keyed and paraphrased questions,
  the tokens of what the user receives and the build time against the first cell's.
- **reach**: what limits *on-topic (answerable)*: the same held-out contexts (and the shipped
  constants' in-sample ones) for each of ``REACH_GRID``'s candidates per slot, token budget,
  semantic floor (``Calibration.semantic_floor``) and semantic margin
  (``Calibration.semantic_margin``), with the median milliseconds of a build.
- **retrieval**: ``query_facts(question, limit=10)`` over all slots, categories 1-4: R@10 (the
  share of a question's evidence turns cited by the top 10 facts) and MRR (1 / rank of the first
  fact citing one), beside benchmarks/locomo.py's turn-level figures (a fact per dialog turn).
- **tracking**: a file of all five conversations' observations, 4 writer processes upserting
  into it without pause; the main process asks questions with access tracking on and off in
  turn: p50 / p95 / p99 milliseconds of each, and whether every access reached the file.
- **cold**: the wall time of a fresh ``slotmem context MESSAGE`` process on a lexical file (and a
  hybrid one: the model loads), beside ``python -c pass`` and Python running one raw FTS5 query.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import agent_memory
import fit_relevance
import locomo
import observations

from slotmem import Ranking, Store
from slotmem.agents import context
from slotmem.agents.context import estimate_tokens

PARTS = ("agents", "probe", "quality", "grid", "reach", "retrieval", "tracking", "cold")
KEY = re.compile(r"^- \*\*(.+?)\*\*", re.MULTILINE)


# -- quality ----------------------------------------------------------------------------------
# (candidates per slot, budget in tokens) that quality, agents and probe build with, side by side
# (--settings 30:1000,100:3000); the library's defaults unless given
SETTINGS = [(context.CANDIDATES, context.DEFAULT_BUDGET_TOKENS)]


def label(setting: tuple[int, int]) -> str:
    return f"{setting[0]} x {setting[1]}"


@dataclass
class Tally:
    offtopic: list[int] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)  # answerable category-4 questions
    answered_all: list[bool] = field(default_factory=list)  # every category-4 question
    tokens: list[int] = field(default_factory=list)  # category-4 questions' contexts
    offtopic_tokens: list[int] = field(default_factory=list)
    facts: list[int] = field(default_factory=list)
    ms: list[float] = field(default_factory=list)  # every build

    def row(self, name: str, base: float) -> str:
        on, off = self.tokens, self.offtopic_tokens
        return (
            f"| {name} | {statistics.mean(self.offtopic):.2f} | {statistics.mean(self.answered):.3f} "
            f"| {statistics.mean(self.answered_all):.3f} | {statistics.mean(on):.0f} / "
            f"{_pct(on, 0.95):.0f} | {statistics.mean(off):.0f} / {_pct(off, 0.95):.0f} "
            f"| {statistics.mean(self.facts):.1f} | {sum(self.ms) / base:.2f} |"
        )


def _pct(values, q: float) -> float:
    values = sorted(values)
    return values[max(0, int(len(values) * q + 0.5) - 1)]


def before(store: Store, message: str, slots: list[str], semantic: bool) -> tuple[list[str], int]:
    """The context as slotmem built it before: 10 hits per slot, 1,500 characters per slot."""
    keys, sections = [], []
    for slot in slots:
        lines, used = [], 0
        for hit in store.query_facts(
            message, slots=[slot], limit=10, track_access=False, semantic=semantic
        ):
            bullet = f"- **{hit.fact.key}**: {' '.join(hit.fact.value.split())}"
            if used + len(bullet) > 1500 and lines:
                break
            lines.append(bullet)
            keys.append(hit.fact.key)
            used += len(bullet) + 1
        if lines:
            sections.append(f"## {slot.capitalize()}\n" + "\n".join(lines))
    return keys, estimate_tokens("\n\n".join(sections))


def tally(store, memory, offtopic, mode: str, tallies, floor=None, old=False) -> None:
    """``tallies``: setting -> Tally; each message is built at every setting in turn (so that
    their build times are measured side by side)."""
    semantic = mode == "hybrid"

    def ask(message: str, setting) -> tuple[list[str], int, float]:
        if semantic:  # each build embeds its message, as a new message would
            store.semantic.forget_query_vectors()
        start = time.perf_counter()
        if old:
            keys, tokens = before(store, message, memory.slots, semantic)
            return keys, tokens, (time.perf_counter() - start) * 1000
        built = context.build(
            store,
            message,
            memory.slots,
            candidates=setting[0],
            budget_tokens=setting[1],
            min_relevance=floor,
            semantic=semantic,
            track_access=False,
        )
        keys = [item.key for item in built.facts()]
        return keys, built.tokens, (time.perf_counter() - start) * 1000

    for message in offtopic:
        for setting, tallied in tallies.items():
            keys, tokens, ms = ask(message, setting)
            tallied.offtopic.append(len(keys))
            tallied.offtopic_tokens.append(tokens)
            tallied.ms.append(ms)
    for question in memory.questions:
        if question.category != 4:
            continue
        for setting, tallied in tallies.items():
            keys, tokens, ms = ask(question.text, setting)
            found = memory.relevant(keys, question)
            tallied.answered_all.append(found)
            if memory.answerable(question):
                tallied.answered.append(found)
            tallied.tokens.append(tokens)
            tallied.facts.append(len(keys))
            tallied.ms.append(ms)


def quality(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """The table of the docstring, a row per setting of SETTINGS (its build time against the
    first setting's, built side by side)."""
    offtopic = observations.offtopic()
    rows = fit_relevance.collect(memories, directory)  # builds directory/<sample_id>.db
    # each fold: four conversations and the agent memories' dev families (never the fifth)
    held_out = fit_relevance.folds(memories, rows + fit_relevance.agent_rows(directory, path))
    results = {
        mode: {
            "before": {None: Tally()},
            "shipped": {s: Tally() for s in SETTINGS},
            "held out": {s: Tally() for s in SETTINGS},
        }
        for mode in fit_relevance.MODES
    }
    for memory in memories:
        path = directory / f"{memory.sample_id}.db"
        calibration, floor = held_out[memory.sample_id]
        with Store(path) as store:
            for mode in fit_relevance.MODES:
                tally(store, memory, offtopic, mode, results[mode]["before"], old=True)
                tally(store, memory, offtopic, mode, results[mode]["shipped"])
        with Store(path, ranking=Ranking(calibration=calibration)) as store:
            for mode in fit_relevance.MODES:
                tally(store, memory, offtopic, mode, results[mode]["held out"], floor=floor)
    print(
        "| context | off-topic facts per message | on-topic (answerable) | on-topic (all) "
        "| tokens on-topic mean / p95 | tokens off-topic mean / p95 | facts per question "
        "| build time against the first setting |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for mode in fit_relevance.MODES:
        for name, tallies in results[mode].items():
            base = sum(tallies[SETTINGS[0]].ms) if SETTINGS[0] in tallies else sum(tallies[None].ms)
            for setting, tallied in tallies.items():
                named = f"{mode}, {name}" + (f", {label(setting)}" if setting else "")
                print(tallied.row(named, base))
    answerable = sum(
        1 for m in memories for q in m.questions if q.category == 4 and m.answerable(q)
    )
    total = sum(1 for m in memories for q in m.questions if q.category == 4)
    print(
        f"\n{answerable} of {total} category-4 questions have an observation citing their evidence;"
        f" {len(offtopic)} off-topic messages x {len(memories)} memories; settings are candidates"
        " per slot x budget tokens"
    )


# -- reach: candidates per slot x budget x semantic floor ------------------------------------------
# (candidates per slot, budget_tokens, semantic floor, semantic margin): the defaults first;
# a margin of None is the one fitted (Calibration.semantic_margin)
REACH_GRID = [
    (30, 1000, 1.0, None),
    (30, 1000, 1.0, 0.0),
    (30, 1000, 2.0, None),
    (60, 2000, 1.0, None),
    (100, 3000, 1.0, None),
    (100, 3000, 2.0, None),
]


def reach(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """Each setting of REACH_GRID, held out (each conversation with the constants and floor
    fitted without it) and in-sample (the constants and floor fitted on all five): the share
    of answerable category-4 questions whose context holds an answering fact, off-topic facts
    per message (offtopic.json), median milliseconds per build; lexical / hybrid."""
    offtopic = observations.offtopic()
    rows = fit_relevance.collect(memories, directory) + fit_relevance.agent_rows(directory, path)
    fitted = {"held out": fit_relevance.folds(memories, rows)}
    everything = fit_relevance.calibrate(rows, fit_relevance.answerable(memories))
    fitted["in-sample"] = {memory.sample_id: everything for memory in memories}
    print(
        "| constants | candidates per slot | budget | semantic floor | semantic margin "
        "| on-topic (answerable) | off-topic facts per message | ms per build (median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for which, constants in fitted.items():
        for candidates, budget, semantic_floor, margin in REACH_GRID:
            cells = {}
            for mode in fit_relevance.MODES:
                found, off, ms = [], [], []
                for memory in memories:
                    calibration, floor = constants[memory.sample_id]
                    changed = dataclasses.replace(calibration, semantic_floor=semantic_floor)
                    if margin is not None:
                        changed = dataclasses.replace(changed, semantic_margin=margin)
                    ranking = Ranking(calibration=changed)
                    asked = [(q.text, q) for q in memory.questions if q.category == 4]
                    asked = [(t, q) for t, q in asked if memory.answerable(q)]
                    asked += [(text, None) for text in offtopic]
                    with Store(directory / f"{memory.sample_id}.db", ranking=ranking) as store:
                        for text, question in asked:
                            start = time.perf_counter()
                            built = context.build(
                                store,
                                text,
                                memory.slots,
                                budget_tokens=budget,
                                min_relevance=floor,
                                candidates=candidates,
                                semantic=mode == "hybrid",
                                track_access=False,
                            )
                            ms.append((time.perf_counter() - start) * 1000)
                            keys = [item.key for item in built.facts()]
                            if question is None:
                                off.append(len(keys))
                            else:
                                found.append(memory.relevant(keys, question))
                cells[mode] = (statistics.mean(found), statistics.mean(off), statistics.median(ms))
            lex, hyb = cells["lexical"], cells["hybrid"]
            print(
                f"| {which} | {candidates} | {budget} | {semantic_floor:g} "
                f"| {'fitted' if margin is None else f'{margin:g}'} | {lex[0]:.3f} / {hyb[0]:.3f} "
                f"| {lex[1]:.2f} / {hyb[1]:.2f} | {lex[2]:.0f} / {hyb[2]:.0f} |",
                flush=True,
            )


# -- grid: candidates per slot x budget, on the dev folds only --------------------------------
GRID_CANDIDATES = (30, 50, 75, 100, 150, 200)
GRID_BUDGETS = (1000, 1500, 2000, 2500, 3000, 4000)
CANDIDATE_GRID, BUDGET_GRID = GRID_CANDIDATES, GRID_BUDGETS


class _Searched:
    """A store whose ``query_facts`` answers from searches already made (``hits``: slot ->
    hits), so that one search per candidates value serves every budget; the rest is the store."""

    def __init__(self, store: Store, hits: dict):
        self._store, self._hits = store, hits

    def query_facts(self, message, *, slots, **_options):
        return self._hits[slots[0]]

    def __getattr__(self, name):
        return getattr(self._store, name)


def _cells(store, text, slots, floor, semantic, candidates, budgets):
    """(candidates, budget) -> (keys, tokens, ms) for one message: each candidates value
    searched once (timed), each budget filled from those hits (timed); ms is both."""
    found = {}
    for slot in slots:  # untimed: the first search of a message also embeds it and reads pages
        store.query_facts(
            text, slots=[slot], limit=max(candidates), track_access=False, semantic=semantic
        )
    for wanted in candidates:
        hits, start = {}, time.perf_counter()
        for slot in slots:
            hits[slot] = store.query_facts(
                text,
                slots=[slot],
                limit=wanted,
                min_relevance=store.min_relevance(slot) if floor is None else floor,
                track_access=False,
                semantic=semantic,
            )
        searched = (time.perf_counter() - start) * 1000
        proxy = _Searched(store, hits)
        for budget in budgets:
            start = time.perf_counter()
            built = context.build(
                proxy,
                text,
                slots,
                budget_tokens=budget,
                min_relevance=floor,
                candidates=wanted,
                semantic=semantic,
                track_access=False,
            )
            ms = searched + (time.perf_counter() - start) * 1000
            found[wanted, budget] = ([item.key for item in built.facts()], built.tokens, ms)
    return found


def grid(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """Candidates per slot x budget (GRID_CANDIDATES x GRID_BUDGETS, or --candidates and
    --budgets) on the dev folds only: for each LoCoMo fold (fit_relevance.folds: the constants
    and floor fitted without one conversation), the contexts of the four conversations it was
    fitted on, never the one it holds out; and seed 3's agent memories, dev families only, at
    the shipped constants. Printed per cell: LoCoMo answers reached and off-topic facts per
    message (benchmarks/data/offtopic_dev.json: offtopic.json is kept for the held-out figures),
    lexical / hybrid; agent dev keyed / paraphrased questions reached; the tokens of the
    context (mean and p95, on-topic and off-topic, both modes pooled); the time of a build
    against the first cell's, measured side by side (each message searched and filled at every
    cell in turn). Raw results: GRID_DUMP, when set, a JSON file."""
    import json

    offtopic = observations.offtopic(dev=True)  # offtopic.json is for the held-out figures
    rows = fit_relevance.collect(memories, directory) + fit_relevance.agent_rows(directory, path)
    fitted = fit_relevance.folds(memories, rows)
    results = []  # one dict per message, mode and cell
    for held, (calibration, floor) in fitted.items():
        for memory in memories:
            if memory.sample_id == held:  # the fold's held-out conversation: never looked at
                continue
            asked = [(q.text, q) for q in memory.questions if q.category == 4]
            asked = [(t, q) for t, q in asked if memory.answerable(q)]
            asked += [(text, None) for text in offtopic]
            ranking = Ranking(calibration=calibration)
            with Store(directory / f"{memory.sample_id}.db", ranking=ranking) as store:
                for mode in fit_relevance.MODES:
                    for text, question in asked:
                        cells = _cells(
                            store,
                            text,
                            memory.slots,
                            floor,
                            mode == "hybrid",
                            CANDIDATE_GRID,
                            BUDGET_GRID,
                        )
                        for (wanted, budget), (keys, tokens, ms) in cells.items():
                            results.append(
                                {
                                    "set": "locomo",
                                    "fold": held,
                                    "memory": memory.sample_id,
                                    "mode": mode,
                                    "candidates": wanted,
                                    "budget": budget,
                                    "kind": "offtopic" if question is None else "question",
                                    "found": None
                                    if question is None
                                    else memory.relevant(keys, question),
                                    "facts": len(keys),
                                    "tokens": tokens,
                                    "ms": ms,
                                }
                            )
        print(f"(fold {held} done)", flush=True)
    pad = agent_memory.padding(path)
    for seed in REPORT_SEEDS:
        for size in agent_memory.SIZES:
            memory = agent_memory.memory(seed, size, pad)
            questions = [q for q in memory.questions if agent_memory.family_part(q.family) == "dev"]
            with agent_memory.build(memory, directory / f"grid-{memory.name}.db") as store:
                for mode in fit_relevance.MODES:
                    asked = [(q.text, q) for q in questions] + [(t, None) for t in offtopic]
                    for text, question in asked:
                        cells = _cells(
                            store,
                            text,
                            list(agent_memory.SLOTS),
                            None,
                            mode == "hybrid",
                            CANDIDATE_GRID,
                            BUDGET_GRID,
                        )
                        for (wanted, budget), (keys, tokens, ms) in cells.items():
                            results.append(
                                {
                                    "set": "agents",
                                    "fold": "",
                                    "memory": memory.name,
                                    "mode": mode,
                                    "candidates": wanted,
                                    "budget": budget,
                                    "kind": "offtopic" if question is None else question.kind,
                                    "found": None if question is None else question.answer in keys,
                                    "facts": len(keys),
                                    "tokens": tokens,
                                    "ms": ms,
                                }
                            )
    if os.environ.get("GRID_DUMP"):
        Path(os.environ["GRID_DUMP"]).write_text(json.dumps(results))
    grid_table(results)


def grid_table(results) -> None:
    def pick(**where):
        return [r for r in results if all(r[k] == v for k, v in where.items())]

    first = (CANDIDATE_GRID[0], BUDGET_GRID[0])
    base = sum(r["ms"] for r in pick(candidates=first[0], budget=first[1], set="locomo"))
    print(
        "| candidates per slot | budget | LoCoMo answers (dev) | LoCoMo off-topic facts per message "
        "| agents keyed (dev) | agents paraphrased (dev) | agents off-topic | tokens on-topic mean / p95 "
        "| tokens off-topic mean / p95 | build time against the first |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for wanted in CANDIDATE_GRID:
        for budget in BUDGET_GRID:
            cell = pick(candidates=wanted, budget=budget)
            loc = [r for r in cell if r["set"] == "locomo"]

            def mean(rows, field):
                return statistics.mean(r[field] for r in rows) if rows else float("nan")

            def both(rows, field, kind, fmt):
                return " / ".join(
                    format(
                        mean([r for r in rows if r["mode"] == m and r["kind"] == kind], field), fmt
                    )
                    for m in fit_relevance.MODES
                )

            agents_rows = [r for r in cell if r["set"] == "agents"]
            on = [r["tokens"] for r in loc if r["kind"] == "question"]
            off = [r["tokens"] for r in loc if r["kind"] == "offtopic"]
            ratio = sum(r["ms"] for r in loc) / base
            print(
                f"| {wanted} | {budget} | {both(loc, 'found', 'question', '.3f')} "
                f"| {both(loc, 'facts', 'offtopic', '.2f')} "
                f"| {both(agents_rows, 'found', 'keyed', '.3f')} "
                f"| {both(agents_rows, 'found', 'paraphrased', '.3f')} "
                f"| {both(agents_rows, 'facts', 'offtopic', '.2f')} "
                f"| {statistics.mean(on):.0f} / {_pct(on, 0.95):.0f} "
                f"| {statistics.mean(off):.0f} / {_pct(off, 0.95):.0f} | {ratio:.2f} |",
                flush=True,
            )


# -- agents: what agents store (benchmarks/agent_memory.py) ---------------------------------
REPORT_SEEDS = (3,)  # agent memories reported on (fitted on: fit_relevance.AGENT_FIT)


def agents(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """Each report seed's memory at each size: the share of keyed and paraphrased questions
    whose context holds their fact, by part (test: families never fitted or tuned on; dev:
    fitted on, other seeds), lexical and hybrid at the shipped constants and floor, at each
    setting of SETTINGS; facts per off-topic message; other facts per question."""
    offtopic = observations.offtopic()
    pad = agent_memory.padding(path)
    found: dict[tuple, list[bool]] = {}
    others: dict[tuple, list[int]] = {}
    off: dict[tuple, list[int]] = {}

    def ask(store, text, semantic, setting):
        built = context.build(
            store,
            text,
            agent_memory.SLOTS,
            candidates=setting[0],
            budget_tokens=setting[1],
            semantic=semantic,
            track_access=False,
        )
        return [item.key for item in built.facts()]

    for seed in REPORT_SEEDS:
        for size in agent_memory.SIZES:
            memory = agent_memory.memory(seed, size, pad)
            with agent_memory.build(memory, directory / f"{memory.name}.db") as store:
                for mode in fit_relevance.MODES:
                    semantic = mode == "hybrid"
                    for setting in SETTINGS:
                        named = label(setting)
                        for question in memory.questions:
                            keys = ask(store, question.text, semantic, setting)
                            part = agent_memory.family_part(question.family)
                            for row in (
                                (part, question.kind, mode, named, size),
                                (part, question.kind, mode, named),
                            ):
                                found.setdefault(row, []).append(question.answer in keys)
                                others.setdefault(row, []).append(
                                    sum(key != question.answer for key in keys)
                                )
                        for message in offtopic:
                            keys = ask(store, message, semantic, setting)
                            off.setdefault((mode, named, size), []).append(len(keys))
                            off.setdefault((mode, named), []).append(len(keys))
    print("| part | question | mode | setting | size | fact in context | other facts | questions |")
    print("|---|---|---|---|---|---|---|---|")
    for row in sorted(found, key=lambda r: (r[0] != "test", r[1], r[2], r[3], len(r), r[4:])):
        size = row[4] if len(row) == 5 else "all"
        bold = "**" if len(row) == 4 and row[0] == "test" else ""
        print(
            f"| {row[0]} | {row[1]} | {row[2]} | {row[3]} | {size} | {bold}"
            f"{statistics.mean(found[row]):.3f}{bold} | {statistics.mean(others[row]):.1f} "
            f"| {len(found[row])} |"
        )
    print(
        "\n| off-topic messages | mode | setting | size | facts per message |\n|---|---|---|---|---|"
    )
    for row in sorted(off, key=lambda r: (r[0], r[1], len(r), r[2:])):
        size = row[2] if len(row) == 3 else "all"
        print(f"| offtopic.json | {row[0]} | {row[1]} | {size} | {statistics.mean(off[row]):.2f} |")


def probe(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """benchmarks/data/paraphrase.json (46 facts and a question each that shares almost no word
    with its fact; never fitted or tuned on), all in one slot: the share of questions whose
    context holds their fact, and the other facts it holds, at each setting of SETTINGS."""
    import json

    pairs = json.loads((Path(__file__).resolve().parent / "data" / "paraphrase.json").read_text())
    with Store(directory / "probe.db", create=True) as store:
        store.upsert_many({"slot": "memory", "key": k, "value": v} for k, v, _ in pairs)
        store.semantic.reindex()
        print(
            "| paraphrase probe | setting | fact in context | other facts per question |\n"
            "|---|---|---|---|"
        )
        for mode in fit_relevance.MODES:
            for setting in SETTINGS:
                found, others = [], []
                for key, _, question in pairs:
                    built = context.build(
                        store,
                        question,
                        ["memory"],
                        candidates=setting[0],
                        budget_tokens=setting[1],
                        semantic=mode == "hybrid",
                        track_access=False,
                    )
                    keys = [item.key for item in built.facts()]
                    found.append(key in keys)
                    others.append(sum(k != key for k in keys))
                print(
                    f"| {mode} | {label(setting)} | {statistics.mean(found):.3f} "
                    f"| {statistics.mean(others):.2f} |"
                )


# -- retrieval --------------------------------------------------------------------------------
def retrieval(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    print("| retrieval | mode | R@10 | MRR |\n|---|---|---|---|")
    for mode in fit_relevance.MODES:
        recall, rr, n = 0.0, 0.0, 0
        for memory in memories:
            path = directory / f"{memory.sample_id}.db"
            with (
                Store(path)
                if path.exists()
                else observations.build(memory, path, embed=True) as store
            ):
                turns = memory.turns()
                for question in memory.questions:
                    hits = store.query_facts(
                        question.text, limit=10, track_access=False, semantic=mode == "hybrid"
                    )
                    cited = [turns[hit.fact.key] & question.gold for hit in hits]
                    recall += len(set().union(*cited)) / len(question.gold)
                    rank = next((i for i, c in enumerate(cited, 1) if c), None)
                    rr += 1 / rank if rank else 0.0
                    n += 1
        print(f"| observations, a fact each | {mode} | {recall / n:.3f} | {rr / n:.3f} |")
    conversations = locomo.load(path)
    legs = {"lexical": locomo.lexical, "hybrid": locomo.hybrid}
    for mode, totals in locomo.evaluate_many(conversations, legs, embed=True).items():
        n = sum(row[4] for row in totals.values())
        r10, mrr = (sum(row[i] for row in totals.values()) / n for i in (2, 3))
        print(f"| dialog turns, a fact each (locomo.py) | {mode} | {r10:.3f} | {mrr:.3f} |")


# -- tracking under writers -------------------------------------------------------------------
def _writer(path: str, number: int, stop) -> None:
    with Store(path) as store:
        i = 0
        while not stop.is_set():
            store.upsert("noise", f"w{number}.{i % 500}", f"writer {number} wrote line {i}")
            i += 1


def _old_tracking(store: Store, text: str) -> list:
    """How a search recorded its accesses before: a write transaction after the read, waiting
    for the write lock."""
    hits = store.query_facts(text, track_access=False, semantic=False)
    if hits:
        with store.transaction():
            marks = ", ".join("?" * len(hits))
            store.conn.execute(
                "UPDATE memory_facts SET access_count = access_count + 1, last_accessed = ? "
                f"WHERE id IN ({marks})",
                [store.clock(), *(hit.fact.id for hit in hits)],
            )
    return hits


def tracking(
    memories, directory: Path, path: Path = observations.DEFAULT_PATH, questions: int = 300
) -> None:
    writers = 4
    path = directory / "tracking.db"
    with Store(path, create=True) as store:
        for memory in memories:
            store.upsert_many(
                {"slot": f.slot, "key": f"{memory.sample_id}.{f.key}", "value": f.value}
                for f in memory.facts
            )
    texts = [q.text for m in memories for q in m.questions][:questions]
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(path), n, stop)) for n in range(writers)]
    for proc in procs:
        proc.start()
    time.sleep(2)  # the writers are running
    ways = {
        "tracking off": lambda store, text: store.query_facts(
            text, track_access=False, semantic=False
        ),
        "tracking on": lambda store, text: store.query_facts(text, semantic=False),
        "tracking on, as before (waits for the lock)": _old_tracking,
    }
    timings: dict[str, list[float]] = {name: [] for name in ways}
    returned = 0
    with Store(path) as store:
        total = "SELECT sum(access_count) FROM memory_facts"
        before_total = store.conn.execute(total).fetchone()[0]
        written = store.conn.execute("SELECT count(*) FROM memory_fact_history").fetchone()[0]
        for text in texts:
            for name, way in ways.items():  # in turn: none gets the quieter moments
                start = time.perf_counter()
                hits = way(store, text)
                timings[name].append(time.perf_counter() - start)
                returned += len(hits) if name != "tracking off" else 0
        stop.set()
        for proc in procs:
            proc.join()
        store.flush_accesses()
        after_total = store.conn.execute(total).fetchone()[0]
        written = (
            store.conn.execute("SELECT count(*) FROM memory_fact_history").fetchone()[0] - written
        )
    print(
        f"| {writers} writers, {len(texts)} questions each | p50 | p95 | p99 |\n|---|---|---|---|"
    )
    p99 = {}
    for name, values in timings.items():
        values = sorted(v * 1000 for v in values)
        cut = [values[min(len(values) - 1, int(len(values) * q))] for q in (0.5, 0.95, 0.99)]
        p99[name] = cut[2]
        print(f"| {name} | " + " | ".join(f"{c:.1f}" for c in cut) + " |")
    print(
        f"\np99 with tracking / without: {p99['tracking on'] / p99['tracking off']:.2f} "
        f"(as before: {p99['tracking on, as before (waits for the lock)'] / p99['tracking off']:.2f}); "
        f"accesses returned {returned}, recorded {after_total - before_total}; the writers "
        f"overwrote {written} facts meanwhile"
    )


# -- cold start -------------------------------------------------------------------------------
RAW = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
rows = conn.execute("SELECT m.key, m.value FROM memory_facts_fts f JOIN memory_facts m ON m.seq = f.rowid "
                    "WHERE memory_facts_fts MATCH ? ORDER BY bm25(memory_facts_fts) LIMIT 10",
                    ('"charity" OR "race"',)).fetchall()
print("\\n".join(f"- **{k}**: {v}" for k, v in rows))
"""


def cold(memories, directory: Path, path: Path = observations.DEFAULT_PATH, runs: int = 15) -> None:
    memory = memories[0]
    lexical = directory / "cold-lexical.db"
    observations.build(memory, lexical).close()
    hybrid = directory / "cold-hybrid.db"
    observations.build(memory, hybrid, embed=True).close()
    slotmem = shutil.which("slotmem", path=str(Path(sys.executable).parent)) or "slotmem"
    message = "What did the charity race raise awareness for?"
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "python + one raw FTS5 query": [sys.executable, "-c", RAW, str(lexical)],
        "slotmem context (lexical file)": [slotmem, "context", message, "-d", str(lexical)],
        "slotmem context (hybrid file)": [slotmem, "context", message, "-d", str(hybrid)],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for _ in range(runs):  # in turn, so that the machine's moods fall on all of them
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env)
            times[name].append((time.perf_counter() - start) * 1000)
    print("| cold start | median ms | p90 ms |\n|---|---|---|")
    for name, values in times.items():
        values.sort()
        print(
            f"| {name} | {statistics.median(values):.0f} | {values[int(len(values) * 0.9) - 1]:.0f} |"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=observations.DEFAULT_PATH)
    parser.add_argument("--parts", default=",".join(PARTS), help=f"any of {', '.join(PARTS)}")
    parser.add_argument(
        "--candidates", default=None, help="grid: candidates per slot, comma-separated"
    )
    parser.add_argument(
        "--settings",
        default=None,
        help="quality, agents, probe: candidates:budget pairs built side by side, comma-separated"
        " (default: the library's defaults)",
    )
    parser.add_argument("--budgets", default=None, help="grid: budgets in tokens, comma-separated")
    args = parser.parse_args(argv)
    global CANDIDATE_GRID, BUDGET_GRID, SETTINGS
    if args.settings:
        SETTINGS = [
            (int(c), int(b)) for c, b in (pair.split(":") for pair in args.settings.split(","))
        ]
    if args.candidates:
        CANDIDATE_GRID = tuple(int(n) for n in args.candidates.split(","))
    if args.budgets:
        BUDGET_GRID = tuple(int(n) for n in args.budgets.split(","))
    memories = observations.load(args.path)
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.parts.split(","):
            start = time.perf_counter()
            print(f"\n## {part}\n")
            globals()[part](memories, Path(tmp), args.path)
            print(f"\n({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
