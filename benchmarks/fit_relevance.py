"""Fit the constants of Hit.relevance and the default floor, leaving one conversation out.

    python benchmarks/fit_relevance.py          # pip install 'slotmem[semantic]'; about 2 minutes

On LoCoMo's development observations (benchmarks/observations.py: one file per conversation, a
slot per person), every question of categories 1-4 is asked of each slot, lexical and hybrid,
and the best ``PER_SLOT`` candidates of each slot are kept with what relevance reads of them
(coverage, terms matched, key match, specificity, similarity, excess) and whether they are
relevant (the turns they cite hold the question's evidence); likewise the agent memories'
(benchmarks/agent_memory.py) keyed, paraphrased and mention questions about their dev families.
benchmarks/data/offtopic_dev.json's messages, asked of both, are negatives: every candidate they
bring is irrelevant. Then, for each mode, a logistic regression (Newton's method, a little L2)
gives slotmem/search/relevance.py's constants.

The floor: the highest value of ``FLOORS`` at which, on the conversations fitted, the candidates
at or above it still hold a relevant fact for ``TARGET`` of the answerable category-4 questions
(those some observation answers) in each mode: as little noise as keeps the answers.

The semantic floor (relevance.SEMANTIC_FLOOR: what the hybrid estimate alone lets in must clear
the floor times it): the highest of ``SEMANTIC_FLOORS`` that meets the hybrid targets and costs
at most ``SEMANTIC_LOSS`` of any hybrid share kept, on the rows fitted. The semantic margin
(relevance.SEMANTIC_MARGIN: the excess a hit by meaning alone needs where the slot's words find
nothing above the floor): the highest of ``SEMANTIC_MARGINS`` that costs at most
``SEMANTIC_LOSS`` of LoCoMo's answers and the keyed and paraphrased questions, and keeps the
mentions at their target. A hybrid context holds what the lexical one holds (search.monotone),
so hybrid figures count both legs' candidates.

Printed: the constants and floor fitted on all five conversations (what slotmem ships), then for
each conversation held out, what was fitted on the other four and how it does on the one left
out (log-loss of the relevance, answers kept at the floor, candidates per question at the floor,
off-topic candidates per message at the floor: benchmarks/data/offtopic.json, never fitted on),
each dev family held out, and what each semantic floor keeps and lets in on all that is fitted.
benchmarks/context.py runs the whole context builder with these held-out fits (``--parts quality``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import observations

from slotmem.search.query import Query
from slotmem.search.relevance import MATCHED_CAP, Calibration

PER_SLOT = 30  # candidates fitted on per slot (a context asks for context.CANDIDATES, 100)
FLOORS = (0.001, 0.0015, 0.002, 0.0025, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.01, 0.015)
TARGET = {"lexical": 0.85, "hybrid": 0.93}  # LoCoMo's answerable category-4 questions kept
# agent memories' dev questions kept: (mode, kind) -> share
AGENT_TARGET = {
    ("lexical", "keyed"): 0.95,
    ("hybrid", "keyed"): 0.95,
    ("hybrid", "paraphrased"): 0.90,
    # below 0.9: a mention of one common word ("I was just thinking about November") is weak
    # evidence, and keeping more of them lets small talk in (docs/context.md)
    ("lexical", "mention"): 0.80,
    ("hybrid", "mention"): 0.90,
}
# Agent memories fitted on (benchmarks/agent_memory.py): (seed, size); their dev families only.
AGENT_FIT = [(1, 5), (1, 50), (1, 500), (1, 5000), (2, 5), (2, 50), (2, 500)]
MODES = ("lexical", "hybrid")
L2 = 1e-3
DEV_OFFTOPIC = -1  # the category of benchmarks/data/offtopic_dev.json's messages
DEV_OFFTOPIC_CAP = 1.0  # of its candidates per message and LoCoMo memory, at most, at the floor


def fitted_on(row: Candidate) -> bool:
    """Questions and the dev off-topic messages (negatives); offtopic.json is only measured."""
    return row.category > 0 or row.category == DEV_OFFTOPIC


@dataclass(frozen=True)
class Candidate:
    conversation: str
    mode: str
    message: int  # index into the memory's questions; negative: an off-topic message
    category: int  # 0: a held-out off-topic message; DEV_OFFTOPIC: one fitted on as a negative
    coverage: float
    matched: int
    similarity: float | None
    relevant: bool
    rank: int = 1  # in its slot's hits
    terms: int = 1  # the query's terms
    key: float = 0.0  # the share of the fact's key words the query holds
    excess: float = 0.0  # similarity above the slot's typical one (hybrid)
    specific: float = 0.0  # the specificity of the most specific query word it holds
    kind: str = ""  # agent memories' questions: "keyed", "paraphrased" or "mention"
    fact: str = ""  # its slot and key (a hybrid context holds the lexical one's too)


def candidates(store, memory: observations.Memory, offtopic: list[str]) -> list[Candidate]:
    """Every question's and off-topic message's best PER_SLOT candidates of each slot."""
    turns = memory.turns()
    messages = [(i, q.text, q.gold, q.category) for i, q in enumerate(memory.questions)]
    messages += [(-1 - i, text, frozenset(), 0) for i, text in enumerate(offtopic)]
    messages += [
        (-10_001 - i, text, frozenset(), DEV_OFFTOPIC)
        for i, text in enumerate(observations.offtopic(dev=True))
    ]
    found = []
    for mode in MODES:
        for number, text, gold, category in messages:
            for slot in memory.slots:
                for rank, hit in ranked(store, text, slot, mode):
                    relevant = bool(turns[hit.fact.key] & gold)
                    found.append(
                        candidate(
                            memory.sample_id, mode, number, category, text, hit, rank, relevant
                        )
                    )
    return found


def ranked(store, text: str, slot: str, mode: str) -> list[tuple[int, object]]:
    """(rank, hit) of the slot's best PER_SLOT hits for ``text``, with their explanations."""
    hits = store.query_facts(
        text,
        slots=[slot],
        limit=PER_SLOT,
        explain=True,
        track_access=False,
        semantic=mode == "hybrid",
    )
    return list(enumerate(hits, 1))


def candidate(
    conversation, mode, number, category, text, hit, rank, relevant, kind=""
) -> Candidate:
    """What relevance reads of one hit (its explanation), and whether it is relevant."""
    parts = hit.explanation or {}
    terms = Query.parse(text).terms
    return Candidate(
        conversation,
        mode,
        number,
        category,
        parts.get("coverage") or 0.0,
        parts.get("matched") or 0,
        parts.get("similarity") if mode == "hybrid" else None,
        relevant,
        rank,
        len(terms.words) + len(terms.grams),
        parts.get("key_match") or 0.0,
        parts.get("excess") or 0.0,
        specific=parts.get("specific") or 0.0,
        kind=kind,
        fact=f"{hit.fact.slot}/{hit.fact.key}",
    )


NAMES = ("coverage", "matched", "similarity", "key", "excess", "specific")


def features(rows: list[Candidate]) -> np.ndarray:
    return np.array(
        [
            [
                r.coverage,
                min(r.matched, MATCHED_CAP),
                r.similarity or 0.0,
                r.key,
                r.excess,
                r.specific,
            ]
            for r in rows
        ]
    ).reshape(-1, 6)


def agent_candidates(store, memory) -> list[Candidate]:
    """Each question's best PER_SLOT candidates of each slot of an agent memory
    (benchmarks/agent_memory.py); ``conversation`` is the question's family."""
    import agent_memory

    found = []
    asked = [(q.text, q.family, q.answer, q.kind, 4) for q in memory.questions]
    asked += [(text, "", None, "", DEV_OFFTOPIC) for text in observations.offtopic(dev=True)]
    for mode in MODES:
        for number, (text, family, answer, kind, category) in enumerate(asked):
            for slot in agent_memory.SLOTS:
                for rank, hit in ranked(store, text, slot, mode):
                    relevant = hit.fact.key == answer
                    name = f"{memory.name}:{family}"
                    found.append(
                        candidate(name, mode, number, category, text, hit, rank, relevant, kind)
                    )
    return found


def logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """Weights (intercept first) maximising the L2-penalised (weighted) log-likelihood."""
    x = np.column_stack([np.ones(len(x)), x])
    w = np.zeros(x.shape[1])
    s = np.ones(len(x)) if weight is None else weight
    for _ in range(100):
        p = 1 / (1 + np.exp(-x @ w))
        gradient = x.T @ (s * (p - y)) + L2 * w
        hessian = (x.T * (s * p * (1 - p))) @ x + L2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


# Specificity is for the lexical leg: with vectors, similarity tells a mention from small talk
# (fitted there, its weight came out negative).
USED = {"lexical": (0, 1, 3, 5), "hybrid": (0, 1, 2, 3, 4)}  # the features each mode reads (NAMES)
AGENT_WEIGHT = 1.0  # weight of an agent-memory question against a LoCoMo one, set by count


def fit(rows: list[Candidate]) -> Calibration:
    """Each mode's constants; LoCoMo's questions and the agent memories' weigh the same in all
    (each candidate weighted by its data set's share of the candidates)."""
    constants = {}
    for mode in MODES:
        train = [r for r in rows if r.mode == mode and fitted_on(r)]
        x = features(train)[:, USED[mode]]
        agents = np.array([":" in r.conversation for r in train])
        weight = np.ones(len(train))
        if agents.any() and (~agents).any():
            weight[agents] = AGENT_WEIGHT * (~agents).sum() / agents.sum()
        w = logistic(x, np.array([r.relevant for r in train], dtype=float), weight)
        full = [0.0] * 7
        full[0] = float(w[0])
        for column, value in zip(USED[mode], w[1:]):
            full[column + 1] = float(value)
        constants[mode] = tuple(round(v, 3) for v in full)
    # choose_semantic_floor, then choose_semantic_margin, set the rest
    return Calibration(**constants, semantic_floor=1.0, semantic_margin=0.0)


def relevance(calibration: Calibration, rows: list[Candidate]) -> np.ndarray:
    return np.array(
        [
            calibration.relevance(r.coverage, r.matched, r.similarity, r.key, r.excess, r.specific)
            for r in rows
        ]
    )


def answers_kept(rows, likely, floor, answerable) -> float:
    """The share of answerable category-4 questions with a relevant candidate at the floor."""
    kept = {(r.conversation, r.message) for r, p in zip(rows, likely) if r.relevant and p >= floor}
    return len(kept & answerable) / max(1, len(answerable))


def agent_kept(
    calibration: Calibration, rows, floor: float, mode: str, kind: str, monotone: bool = True
) -> float:
    """The share of agent-memory questions of this kind with their fact at the floor (hybrid:
    its hybrid estimate at ``calibration.hybrid_floor(floor)``, or, ``monotone``, its lexical
    one at the floor, as search.monotone adds it back)."""
    part = [r for r in rows if r.kind == kind and (r.mode == mode or monotone)]
    asked = {(r.conversation, r.message) for r in part if r.mode == mode}
    found = held_relevant(calibration, part, floor, mode)
    return len(found & asked) / len(asked) if asked else 1.0


def held_facts(calibration: Calibration, rows, floor: float, mode: str) -> dict:
    """(conversation, message) -> the candidates a context at the floor holds, in this mode."""
    if mode == "hybrid":
        return hybrid_kept(calibration, rows, floor)
    held: dict[tuple[str, int], set[str]] = {}
    part = [r for r in rows if r.mode == mode]
    for r, likely in zip(part, relevance(calibration, part)):
        if likely >= floor:
            held.setdefault((r.conversation, r.message), set()).add(r.fact)
    return held


def held_relevant(calibration: Calibration, rows, floor: float, mode: str) -> set:
    """(conversation, message) of the questions whose context at the floor holds a relevant
    candidate, in this mode."""
    held = held_facts(calibration, rows, floor, mode)
    relevant = {(r.conversation, r.message, r.fact) for r in rows if r.relevant}
    return {q for q, facts in held.items() if any((*q, f) in relevant for f in facts)}


def choose_floor(calibration: Calibration, rows, answerable) -> float:
    """The highest of FLOORS at which the rows fitted meet every target (LoCoMo's and, when
    there are agent memories among them, theirs), among the floors quiet enough for small talk
    (``quiet``); when none meets the targets, the lowest quiet one."""
    locomo = [r for r in rows if ":" not in r.conversation]
    agents = [r for r in rows if ":" in r.conversation]
    floors = [floor for floor in FLOORS if quiet(calibration, locomo, floor)] or [FLOORS[-1]]
    best = floors[0]
    for floor in floors:
        ok = True
        for mode in MODES:
            part = [r for r in locomo if r.mode == mode]
            kept = answers_kept(part, relevance(calibration, part), floor, answerable)
            ok = ok and kept >= TARGET[mode]
        for (mode, kind), target in AGENT_TARGET.items():
            # each leg on its own, as the floor was always chosen (the union only adds)
            kept = agent_kept(calibration, agents, floor, mode, kind, monotone=False)
            ok = ok and (not agents or kept >= target)
        if ok:
            best = floor
    return best


SEMANTIC_FLOORS = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)  # relevance.SEMANTIC_FLOOR's grid
SEMANTIC_LOSS = 0.0  # of a hybrid share kept at semantic floor 1, at most, on what is fitted


def hybrid_kept(calibration: Calibration, rows, floor: float) -> dict[tuple[str, int], set[str]]:
    """(conversation, message) -> the facts a hybrid context at this floor holds among the
    candidates: those whose hybrid estimate clears ``calibration.hybrid_floor(floor)`` (and,
    where the slot's lexical candidates hold none above the floor, whose excess is at least
    ``calibration.semantic_margin``) and those whose lexical one clears the floor
    (search.monotone adds them back)."""
    held: dict[tuple[str, int], set[str]] = {}
    bars = {"lexical": floor, "hybrid": calibration.hybrid_floor(floor)}
    likely = relevance(calibration, rows)
    strong = {group(r) for r, p in zip(rows, likely) if r.mode == "lexical" and p >= floor}
    margin = calibration.semantic_margin
    for r, p in zip(rows, likely):
        if p < bars[r.mode]:
            continue
        if r.mode == "hybrid" and r.excess < margin and group(r) not in strong:
            continue  # by meaning alone where the words find nothing, and not standing out
        held.setdefault((r.conversation, r.message), set()).add(r.fact)
    return held


def group(r: Candidate) -> tuple[str, int, str]:
    """The search a candidate came from: its message and slot."""
    return (r.conversation, r.message, r.fact.split("/", 1)[0])


def hybrid_shares(rows, answerable) -> dict[tuple[str, float], set]:
    """(name, target) -> the questions of each hybrid share: LoCoMo's answerable ones and the
    agent memories' keyed, paraphrased and mention ones."""
    kinds = {(r.conversation, r.message): r.kind for r in rows if r.kind}
    sets = {("locomo", TARGET["hybrid"]): answerable}
    for (mode, kind), target in AGENT_TARGET.items():
        asked = {q for q, k in kinds.items() if k == kind}
        if mode == "hybrid" and asked:
            sets[(kind, target)] = asked
    return sets


def shares_kept(calibration: Calibration, rows, floor: float, sets) -> dict:
    found = held_relevant(calibration, rows, floor, "hybrid")
    return {name: len(found & asked) / max(1, len(asked)) for name, asked in sets.items()}


# relevance.SEMANTIC_MARGIN's grid (excess: similarity above the 10th nearest fact's)
SEMANTIC_MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)


# Shares a margin may cost down to their target (not to SEMANTIC_LOSS): a mention whose word
# is too common for the words alone to clear the floor ("I was just thinking about November")
# is the boundary with small talk, as AGENT_TARGET's lexical mention target says.
MARGIN_TO_TARGET = ("mention",)


def choose_semantic_margin(calibration: Calibration, rows, floor: float, answerable) -> Calibration:
    """The calibration with the highest of SEMANTIC_MARGINS at which hybrid contexts, on the
    rows fitted, keep LoCoMo's answers and the keyed and paraphrased questions within
    SEMANTIC_LOSS of what they keep without one, and the mentions at their target. It bears
    on searches whose words find nothing above the floor (small talk, general questions,
    paraphrases): benchmarks/data/offtopic_dev.json's are what it keeps out."""
    sets = hybrid_shares(rows, answerable)
    base = shares_kept(calibration, rows, floor, sets)
    best = calibration
    for margin in SEMANTIC_MARGINS[1:]:
        fold = dataclasses.replace(calibration, semantic_margin=margin)
        kept = shares_kept(fold, rows, floor, sets)
        if not all(
            kept[n] >= (n[1] if n[0] in MARGIN_TO_TARGET else base[n] - SEMANTIC_LOSS) for n in sets
        ):
            break
        best = fold
    return best


def choose_semantic_floor(calibration: Calibration, rows, floor: float, answerable) -> Calibration:
    """The calibration with the highest of SEMANTIC_FLOORS at which hybrid contexts, on the
    rows fitted, still meet the hybrid targets and keep each hybrid share (LoCoMo's answers,
    the agent memories' keyed, paraphrased and mention questions) within SEMANTIC_LOSS of what
    they keep at 1 (the targets alone chose 3 to 4, which let LoCoMo's off-topic facts fall to
    0.28 but cost the agent memories' paraphrased questions 2 to 3 points)."""
    sets = hybrid_shares(rows, answerable)

    def shares(ratio: float) -> dict:
        fold = dataclasses.replace(calibration, semantic_floor=ratio)
        return shares_kept(fold, rows, floor, sets)

    base = shares(SEMANTIC_FLOORS[0])
    best = SEMANTIC_FLOORS[0]
    for ratio in SEMANTIC_FLOORS[1:]:
        kept = shares(ratio)
        if all(kept[n] >= n[1] and kept[n] >= base[n] - SEMANTIC_LOSS for n in sets):
            best = ratio
    return dataclasses.replace(calibration, semantic_floor=best)


def quiet(calibration: Calibration, locomo, floor: float) -> bool:
    """Does the floor let at most DEV_OFFTOPIC_CAP candidates of each offtopic_dev.json
    message through, per LoCoMo memory, in each mode? (A floor chosen on recall targets alone
    moved by a grid step when a fold's answers fell a question short, and doubled the small
    talk let in.)"""
    memories = len({r.conversation for r in locomo}) or 1
    messages = len(observations.offtopic(dev=True)) * memories
    for mode in MODES:
        dev = [r for r in locomo if r.mode == mode and r.category == DEV_OFFTOPIC]
        if dev and sum(relevance(calibration, dev) >= floor) / messages > DEV_OFFTOPIC_CAP:
            return False
    return True


def answerable(memories) -> set[tuple[str, int]]:
    return {
        (m.sample_id, i)
        for m in memories
        for i, q in enumerate(m.questions)
        if q.category == 4 and m.answerable(q)
    }


def collect(memories, directory: Path) -> list[Candidate]:
    offtopic = observations.offtopic()
    rows = []
    for memory in memories:
        with observations.build(memory, directory / f"{memory.sample_id}.db", embed=True) as store:
            rows += candidates(store, memory, offtopic)
    return rows


def agent_rows(directory: Path, path: Path | None = None) -> list[Candidate]:
    """The candidates of the AGENT_FIT memories' questions about dev families."""
    import agent_memory

    pad = agent_memory.padding(path)
    rows = []
    for seed, size in AGENT_FIT:
        memory = agent_memory.memory(seed, size, pad)
        memory.questions = [
            q for q in memory.questions if agent_memory.family_part(q.family) == "dev"
        ]
        with agent_memory.build(memory, directory / f"fit-{memory.name}.db") as store:
            rows += agent_candidates(store, memory)
    return rows


def calibrate(rows, answerable) -> tuple[Calibration, float]:
    """The constants, the floor, then the semantic floor, each chosen on ``rows``."""
    calibration = fit(rows)
    floor = choose_floor(calibration, rows, answerable)
    calibration = choose_semantic_floor(calibration, rows, floor, answerable)
    return choose_semantic_margin(calibration, rows, floor, answerable), floor


def folds(memories, rows) -> dict[str, tuple[Calibration, float]]:
    """conversation -> (the calibration and floor fitted without it)."""
    fitted = {}
    for memory in memories:
        rest = [r for r in rows if r.conversation != memory.sample_id]
        others = [m for m in memories if m.sample_id != memory.sample_id]
        fitted[memory.sample_id] = calibrate(rest, answerable(others))
    return fitted


# -- alternatives: other features, the same protocol ---------------------------------------------
FEATURES = {
    "coverage": lambda r: r.coverage,
    "matched": lambda r: min(r.matched, MATCHED_CAP),
    "similarity": lambda r: r.similarity or 0.0,
    "query length": lambda r: min(r.terms, 4),
    "coverage x query length": lambda r: r.coverage * min(r.terms, 4),
    "log rank": lambda r: float(np.log(r.rank)),
    "coverage x similarity": lambda r: r.coverage * (r.similarity or 0.0),
}
ALTERNATIVES = [
    ("lexical", ("coverage",)),
    ("lexical", ("coverage", "matched")),  # shipped
    ("lexical", ("coverage x query length",)),
    ("lexical", ("coverage", "matched", "log rank")),
    ("hybrid", ("similarity",)),
    ("hybrid", ("coverage", "similarity")),
    ("hybrid", ("coverage", "matched", "similarity")),  # shipped
    ("hybrid", ("coverage", "matched", "similarity", "coverage x similarity")),
    ("hybrid", ("coverage", "matched", "similarity", "log rank")),
]


def alternatives(memories, rows) -> None:
    """Each feature set fitted and its floor chosen (for its own mode's target) on four
    conversations, measured on the fifth, pooled over the five."""
    print("| mode | features | log-loss | answers kept | off-topic candidates per message |")
    print("|---|---|---|---|---|")
    for mode, names in ALTERNATIVES:
        part = [r for r in rows if r.mode == mode]
        x = np.array([[FEATURES[name](r) for name in names] for r in part])
        y = np.array([r.relevant for r in part], dtype=float)
        asked = np.array([r.category > 0 for r in part])
        losses, kept, off = [], set(), 0
        for memory in memories:
            held = np.array([r.conversation == memory.sample_id for r in part])
            train = asked & ~held
            w = logistic(x[train], y[train])
            p = 1 / (1 + np.exp(-(np.column_stack([np.ones(len(x)), x]) @ w)))
            others = answerable([m for m in memories if m is not memory])
            floor = FLOORS[0]
            for candidate in FLOORS:
                found = {
                    (r.conversation, r.message)
                    for r, q, t in zip(part, p, train)
                    if t and r.relevant and q >= candidate
                }
                if len(found & others) / len(others) >= TARGET[mode]:
                    floor = candidate
            test = asked & held
            losses.append(
                -np.mean(
                    y[test] * np.log(p[test] + 1e-12) + (1 - y[test]) * np.log(1 - p[test] + 1e-12)
                )
            )
            kept |= {
                (r.conversation, r.message)
                for r, q, h in zip(part, p, held)
                if h and r.relevant and q >= floor
            }
            off += sum(1 for r, q, h in zip(part, p, held) if h and r.category == 0 and q >= floor)
        share = len(kept & answerable(memories)) / len(answerable(memories))
        per_message = off / (len(observations.offtopic()) * len(memories))
        print(
            f"| {mode} | {', '.join(names)} | {np.mean(losses):.4f} | {share:.3f} | {per_message:.2f} |"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=observations.DEFAULT_PATH)
    parser.add_argument(
        "--alternatives", action="store_true", help="also measure other feature sets the same way"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    memories = observations.load(args.path)
    with tempfile.TemporaryDirectory() as tmp:
        rows = collect(memories, Path(tmp))
        agents = agent_rows(Path(tmp), args.path)
    fitted(memories, rows, agents, start)
    if args.alternatives:
        print("\nOther features, each with its own floor per mode, held out and pooled:\n")
        alternatives(memories, rows)


HELD_OUT_COLUMNS = (
    ("lexical", "keyed"),
    ("hybrid", "keyed"),
    ("hybrid", "paraphrased"),
    ("lexical", "mention"),
    ("hybrid", "mention"),
)


def families_held_out(memories, rows, agents) -> None:
    """Each dev family's agent questions, with the constants and floor fitted without them."""
    print(
        "\n| family held out | keyed, lexical | keyed, hybrid | paraphrased, hybrid "
        "| mention, lexical | mention, hybrid |"
    )
    print("|---|---|---|---|---|---|")
    names = sorted({r.conversation.split(":", 1)[1] for r in agents} - {""})
    totals = []
    for name in names:
        held = [r for r in agents if r.conversation.endswith(":" + name)]
        rest = rows + [r for r in agents if not r.conversation.endswith(":" + name)]
        calibration, floor = calibrate(rest, answerable(memories))
        kept = [agent_kept(calibration, held, floor, mode, kind) for mode, kind in HELD_OUT_COLUMNS]
        totals.append(kept)
        print(
            f"| {name} (floor {floor}, x{calibration.semantic_floor:g}) | "
            + " | ".join(f"{k:.2f}" for k in kept)
            + " |"
        )
    mean = np.mean(totals, axis=0)
    print("| **mean** | " + " | ".join(f"**{k:.3f}**" for k in mean) + " |")


def fitted(memories, locomo_rows, agents, start) -> None:
    """What slotmem ships, then each conversation and each dev family held out."""
    rows = locomo_rows + agents
    calibration, floor = calibrate(rows, answerable(memories))
    print(
        f"All five conversations and the agent memories' dev families ({len(rows)} candidates, "
        f"{time.perf_counter() - start:.0f} s):"
    )
    print(
        f"LEXICAL = {calibration.lexical}\nHYBRID = {calibration.hybrid}\nDEFAULT_FLOOR = {floor}"
        f"\nSEMANTIC_FLOOR = {calibration.semantic_floor}"
        f"\nSEMANTIC_MARGIN = {calibration.semantic_margin}\n"
    )
    print(
        "| held out | mode | a, b, c, d | floor | log-loss | answers kept | per question | off-topic |"
    )
    print("|---|---|---|---|---|---|---|---|")
    totals: dict[str, list[float]] = {mode: [0.0] * 5 for mode in MODES}
    for name, (fold, fold_floor) in folds(memories, rows).items():
        held = [m for m in memories if m.sample_id == name]
        both = [r for r in rows if r.conversation == name]
        category = {r.message: r.category for r in both}
        for mode in MODES:
            asked = [r for r in both if r.mode == mode and r.category > 0]
            likely = relevance(fold, asked)
            y = np.array([r.relevant for r in asked], dtype=float)
            loss = float(
                -np.mean(y * np.log(likely + 1e-12) + (1 - y) * np.log(1 - likely + 1e-12))
            )
            # what a context at the fold's floor holds (hybrid: search.monotone's union)
            found = {message for _, message in held_relevant(fold, both, fold_floor, mode)}
            kept = len(found & {i for _, i in answerable(held)}) / max(1, len(answerable(held)))
            facts = held_facts(fold, both, fold_floor, mode)
            count = {
                c: sum(len(f) for (_, i), f in facts.items() if category[i] == c) for c in (0, 4)
            }
            per_question = count[4] / max(1, sum(1 for c in set(category.items()) if c[1] == 4))
            off_topic = count[0] / len(observations.offtopic())
            constants = ", ".join(f"{v:g}" for v in getattr(fold, mode))
            semantic = (
                f" x{fold.semantic_floor:g}, margin {fold.semantic_margin:g}"
                if mode == "hybrid"
                else ""
            )
            print(
                f"| {name} | {mode} | {constants} | {fold_floor}{semantic} | {loss:.4f} | "
                f"{kept:.3f} | {per_question:.1f} | {off_topic:.2f} |"
            )
            for i, value in enumerate((loss, kept, per_question, off_topic, 1)):
                totals[mode][i] += value
    for mode, (loss, kept, per_question, off_topic, n) in totals.items():
        print(
            f"| **mean** | {mode} | | | {loss / n:.4f} | {kept / n:.3f} | {per_question / n:.1f} "
            f"| {off_topic / n:.2f} |"
        )
    families_held_out(memories, locomo_rows, agents)
    hybrid_trade_off(memories, calibration, floor, rows, "semantic_floor")
    hybrid_trade_off(memories, calibration, floor, rows, "semantic_margin")


def hybrid_trade_off(memories, calibration: Calibration, floor: float, rows, field: str) -> None:
    """What each value of a hybrid calibration ``field`` (``semantic_floor``, with the grid
    SEMANTIC_FLOORS, or ``semantic_margin``, SEMANTIC_MARGINS) keeps and lets in, on everything
    fitted: the trade-off choose_semantic_floor and choose_semantic_margin read."""
    name = field.replace("_", " ")
    print(
        f"\n| {name} | LoCoMo answers kept (hybrid) | agent keyed / paraphrased / mention "
        "(hybrid) | offtopic_dev.json candidates per message and memory (hybrid) |"
    )
    print("|---|---|---|---|")
    locomo = [r for r in rows if ":" not in r.conversation]
    agents = [r for r in rows if ":" in r.conversation]
    messages = len(observations.offtopic(dev=True)) * len(memories)
    dev = [r for r in locomo if r.category == DEV_OFFTOPIC]
    grid = SEMANTIC_FLOORS if field == "semantic_floor" else SEMANTIC_MARGINS
    for value in grid:
        fold = dataclasses.replace(calibration, **{field: value})
        found = held_relevant(fold, locomo, floor, "hybrid")
        kept = len(found & answerable(memories)) / len(answerable(memories))
        kinds = " / ".join(
            f"{agent_kept(fold, agents, floor, 'hybrid', kind):.3f}"
            for kind in ("keyed", "paraphrased", "mention")
        )
        off = sum(len(facts) for facts in held_facts(fold, dev, floor, "hybrid").values())
        print(f"| {value:g} | {kept:.3f} | {kinds} | {off / messages:.2f} |")


if __name__ == "__main__":
    main()
