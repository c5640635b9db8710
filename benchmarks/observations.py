"""LoCoMo's observations as an agent's memory: the data that benchmarks/context.py and
benchmarks/fit_relevance.py share.

Each development conversation becomes one file; each person is a slot (``caroline``,
``melanie``); each observation (the short facts in ``observation`` of each conversation, with the
turns they cite) is a fact with key ``obs-NNNN`` (a token no question holds), written at its
session's date and time (so a fact's date means what it would mean in an agent's memory). The
questions are benchmarks/locomo.py's (categories 1-4, evidence repaired); a fact is relevant to
a question when the turns it cites hold one of the question's evidence turns.
"""

from __future__ import annotations

import datetime
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import DEFAULT_PATH, Question, conversation, evidence

from slotmem import Store

OFFTOPIC = Path(__file__).resolve().parent / "data" / "offtopic.json"  # held out: never fitted
OFFTOPIC_DEV = OFFTOPIC.with_name("offtopic_dev.json")  # fitted on as negatives
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Observation:
    slot: str
    key: str
    value: str
    turns: frozenset[str]
    at: int  # the session's time, epoch milliseconds


@dataclass
class Memory:
    sample_id: str
    slots: list[str]
    facts: list[Observation]
    questions: list[Question] = field(default_factory=list)

    def turns(self) -> dict[str, frozenset[str]]:
        return {fact.key: fact.turns for fact in self.facts}

    def relevant(self, keys, question: Question) -> bool:
        """Does any of these facts cite one of the question's evidence turns?"""
        turns = self.turns()
        return any(turns.get(key, frozenset()) & question.gold for key in keys)

    def answerable(self, question: Question) -> bool:
        return self.relevant(self.turns(), question)


class Clock:
    """The Store's clock, set to each session's time while its observations are written."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def load(path: Path = DEFAULT_PATH) -> list[Memory]:
    samples = json.loads(Path(path).read_text())
    return [_memory(sample) for sample in samples]


def _memory(sample: dict) -> Memory:
    talk = sample["conversation"]
    known = {turn["dia_id"] for n in range(1, 100) for turn in talk.get(f"session_{n}", [])}
    facts: list[Observation] = []
    sessions = sorted(sample["observation"], key=lambda name: int(name.split("_")[1]))
    for session in sessions:
        at = _when(talk[f"session_{session.split('_')[1]}_date_time"])
        for speaker, items in sample["observation"][session].items():
            for text, cited in items:
                turns = evidence(cited if isinstance(cited, list) else [cited], known)
                key = f"obs-{len(facts):04d}"
                facts.append(Observation(speaker.lower(), key, text, frozenset(turns), at))
    slots = sorted({fact.slot for fact in facts})
    return Memory(sample["sample_id"], slots, facts, conversation(sample).questions)


def _when(text: str) -> int:
    """'1:56 pm on 8 May, 2023' -> epoch milliseconds (UTC)."""
    moment = datetime.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y")
    return int(moment.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def build(memory: Memory, path: Path, *, embed: bool = False, **options) -> Store:
    """A Store holding the memory's observations, each written at its session's time; the clock
    then stays a day after the last session."""
    clock = Clock()
    store = Store(path, create=True, clock=clock, **options)
    by_time: dict[int, list[Observation]] = {}
    for fact in memory.facts:
        by_time.setdefault(fact.at, []).append(fact)
    for at in sorted(by_time):
        clock.now = at
        store.upsert_many(
            {"slot": f.slot, "key": f.key, "value": f.value, "source": "locomo"}
            for f in by_time[at]
        )
    clock.now = max(by_time) + DAY_MS
    if embed:
        store.semantic.reindex()
    return store


def offtopic(dev: bool = False) -> list[str]:
    """Messages that ask nothing of a memory: the held-out set, or (``dev``) the one to fit on."""
    data = json.loads((OFFTOPIC_DEV if dev else OFFTOPIC).read_text())
    return [message for kind, messages in data.items() if kind != "about" for message in messages]
