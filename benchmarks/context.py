"""What reaches the prompt: the context builder on LoCoMo, lexical and hybrid side by side.

    python benchmarks/context.py                   # pip install 'slotmem[semantic]'; about 20 minutes
    python benchmarks/context.py --parts quality   # agents, probe, quality, retrieval, tracking, cold

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
  *tokens*: median and p95 of the estimated tokens of those questions' contexts. Rows: the
  context as it was before (10 hits per slot, no floor, 1,500 characters per slot), with the
  shipped constants (fitted on these conversations), and held out (each conversation's contexts
  built with the constants and floor benchmarks/fit_relevance.py fits on the other four and the
  agent memories' dev families).
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

PARTS = ("agents", "probe", "quality", "reach", "retrieval", "tracking", "cold")
KEY = re.compile(r"^- \*\*(.+?)\*\*", re.MULTILINE)


# -- quality ----------------------------------------------------------------------------------
@dataclass
class Tally:
    offtopic: list[int] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)  # answerable category-4 questions
    answered_all: list[bool] = field(default_factory=list)  # every category-4 question
    tokens: list[int] = field(default_factory=list)
    facts: list[int] = field(default_factory=list)

    def row(self, name: str) -> str:
        tokens = sorted(self.tokens)
        p95 = tokens[max(0, int(len(tokens) * 0.95) - 1)]
        return (
            f"| {name} | {statistics.mean(self.offtopic):.2f} | {statistics.mean(self.answered):.3f} "
            f"| {statistics.mean(self.answered_all):.3f} | {statistics.median(tokens):.0f} / {p95} "
            f"| {statistics.mean(self.facts):.1f} |"
        )


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


def tally(store, memory, offtopic, mode: str, tallied: Tally, floor=None, old=False) -> None:
    semantic = mode == "hybrid"

    def ask(message: str) -> tuple[list[str], int]:
        if old:
            return before(store, message, memory.slots, semantic)
        built = context.build(
            store,
            message,
            memory.slots,
            min_relevance=floor,
            semantic=semantic,
            track_access=False,
        )
        return [item.key for item in built.facts()], built.tokens

    for message in offtopic:
        tallied.offtopic.append(len(ask(message)[0]))
    for question in memory.questions:
        if question.category != 4:
            continue
        keys, tokens = ask(question.text)
        found = memory.relevant(keys, question)
        tallied.answered_all.append(found)
        if memory.answerable(question):
            tallied.answered.append(found)
        tallied.tokens.append(tokens)
        tallied.facts.append(len(keys))


def quality(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    offtopic = observations.offtopic()
    rows = fit_relevance.collect(memories, directory)  # builds directory/<sample_id>.db
    # each fold: four conversations and the agent memories' dev families (never the fifth)
    held_out = fit_relevance.folds(memories, rows + fit_relevance.agent_rows(directory, path))
    names = ("before", "shipped", "held out")
    results = {mode: {name: Tally() for name in names} for mode in fit_relevance.MODES}
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
        "| tokens median / p95 | facts per question |"
    )
    print("|---|---|---|---|---|---|")
    for mode in fit_relevance.MODES:
        for name, tallied in results[mode].items():
            print(tallied.row(f"{mode}, {name}"))
    answerable = sum(
        1 for m in memories for q in m.questions if q.category == 4 and m.answerable(q)
    )
    total = sum(1 for m in memories for q in m.questions if q.category == 4)
    print(
        f"\n{answerable} of {total} category-4 questions have an observation citing their evidence;"
        f" {len(offtopic)} off-topic messages x {len(memories)} memories"
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


# -- agents: what agents store (benchmarks/agent_memory.py) ---------------------------------
REPORT_SEEDS = (3,)  # agent memories reported on (fitted on: fit_relevance.AGENT_FIT)


def agents(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """Each report seed's memory at each size: the share of keyed and paraphrased questions
    whose context holds their fact, by part (test: families never fitted or tuned on; dev:
    fitted on, other seeds), lexical and hybrid at the shipped constants and floor; facts per
    off-topic message; other facts per question."""
    offtopic = observations.offtopic()
    pad = agent_memory.padding(path)
    found: dict[tuple, list[bool]] = {}
    others: dict[tuple, list[int]] = {}
    off: dict[tuple, list[int]] = {}
    for seed in REPORT_SEEDS:
        for size in agent_memory.SIZES:
            memory = agent_memory.memory(seed, size, pad)
            with agent_memory.build(memory, directory / f"{memory.name}.db") as store:
                for mode in fit_relevance.MODES:
                    semantic = mode == "hybrid"
                    for question in memory.questions:
                        built = context.build(
                            store,
                            question.text,
                            agent_memory.SLOTS,
                            semantic=semantic,
                            track_access=False,
                        )
                        keys = [item.key for item in built.facts()]
                        part = agent_memory.family_part(question.family)
                        for row in ((part, question.kind, mode, size), (part, question.kind, mode)):
                            found.setdefault(row, []).append(question.answer in keys)
                            others.setdefault(row, []).append(
                                sum(key != question.answer for key in keys)
                            )
                    for message in offtopic:
                        built = context.build(
                            store,
                            message,
                            agent_memory.SLOTS,
                            semantic=semantic,
                            track_access=False,
                        )
                        off.setdefault((mode, size), []).append(len(built.facts()))
                        off.setdefault((mode,), []).append(len(built.facts()))
    print("| part | question | mode | size | fact in context | other facts | questions |")
    print("|---|---|---|---|---|---|---|")
    for row in sorted(found, key=lambda r: (r[0] != "test", r[1], r[2], len(r), r[3:])):
        size = row[3] if len(row) == 4 else "all"
        bold = "**" if len(row) == 3 and row[0] == "test" else ""
        print(
            f"| {row[0]} | {row[1]} | {row[2]} | {size} | {bold}{statistics.mean(found[row]):.3f}"
            f"{bold} | {statistics.mean(others[row]):.1f} | {len(found[row])} |"
        )
    print("\n| off-topic messages | mode | size | facts per message |\n|---|---|---|---|")
    for row in sorted(off, key=lambda r: (r[0], len(r), r[1:])):
        size = row[1] if len(row) == 2 else "all"
        print(f"| offtopic.json | {row[0]} | {size} | {statistics.mean(off[row]):.2f} |")


def probe(memories, directory: Path, path: Path = observations.DEFAULT_PATH) -> None:
    """benchmarks/data/paraphrase.json (46 facts and a question each that shares almost no word
    with its fact; never fitted or tuned on), all in one slot: the share of questions whose
    context holds their fact, and the other facts it holds."""
    import json

    pairs = json.loads((Path(__file__).resolve().parent / "data" / "paraphrase.json").read_text())
    with Store(directory / "probe.db", create=True) as store:
        store.upsert_many({"slot": "memory", "key": k, "value": v} for k, v, _ in pairs)
        store.semantic.reindex()
        print("| paraphrase probe | fact in context | other facts per question |\n|---|---|---|")
        for mode in fit_relevance.MODES:
            found, others = [], []
            for key, _, question in pairs:
                built = context.build(
                    store, question, ["memory"], semantic=mode == "hybrid", track_access=False
                )
                keys = [item.key for item in built.facts()]
                found.append(key in keys)
                others.append(sum(k != key for k in keys))
            print(f"| {mode} | {statistics.mean(found):.3f} | {statistics.mean(others):.2f} |")


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
    args = parser.parse_args(argv)
    memories = observations.load(args.path)
    with tempfile.TemporaryDirectory() as tmp:
        for part in args.parts.split(","):
            start = time.perf_counter()
            print(f"\n## {part}\n")
            globals()[part](memories, Path(tmp), args.path)
            print(f"\n({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
