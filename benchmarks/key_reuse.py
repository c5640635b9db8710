"""Key reuse: when a conversation restates a stored fact with a new value, is the old fact in the
flusher's prompt (so that the model can reuse its key instead of writing a second one)?

    python benchmarks/key_reuse.py [--semantic] [--seeds 5]
    git archive fea20a1 | tar -x -C /tmp/before && python benchmarks/key_reuse.py --code /tmp/before

A scripted model cannot judge, so this measures what the prompt contains. The memory is
benchmarks/personal_memory.py's: 500 facts (307 about the person, their friends, relatives,
pets, places and subscriptions in ``user``; colleagues and projects in ``project``), read with
Zipf-distributed access counts (a few facts read often, most rarely). 100 of them are restated
with a new value in 50-odd conversations, 1 to 3 per conversation among small talk: every fact
about the person alone (``home_city``, ``employer``, ``diet``, ...: nothing but the topic ties
what is said to the fact), the rest drawn from the facts about a named entity.

Each conversation goes through ``slotmem.ingest.flush(..., dry_run=True)`` with a model that
records its prompt and proposes nothing; a restated fact counts as found when its line
(``- key: value``) is in the prompt. ``--code DIR`` runs the slotmem found in DIR instead (an
older checkout: what the flusher did before). Each seed is a new memory of 500 facts with 100
of them restated; the families are split in two, dev (what the constants were tuned on) and
test (held out), 50 restatements each; both are printed, summed over the seeds, and the test
figure is the one to quote.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
if "--code" in sys.argv:  # another checkout's slotmem, imported before this one's
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--code") + 1]).resolve()))

import llm
import personal_memory as pm

import slotmem
from slotmem import Store
from slotmem.ingest import flusher

RESTATED_PER_PART = 50


class Recorder(llm.Model):
    """Proposes nothing; keeps every prompt it is sent."""

    model_id = "recorder"

    def __init__(self):
        self.prompts: list[str] = []

    def execute(self, prompt, stream, response, conversation):
        self.prompts.append(prompt.prompt)
        yield '{"facts": []}'


def build(path: Path, memory: pm.Memory, rng: random.Random, semantic: bool) -> Store:
    store = Store(path, create=True)
    store.upsert_many(
        [{"slot": f.slot, "key": f.key, "value": f.value, "source": "seed"} for f in memory.facts]
    )
    order = list(range(len(memory.facts)))
    rng.shuffle(order)
    with store.transaction():  # Zipf reads: a few facts often, most rarely
        for rank, index in enumerate(order, 1):
            fact = memory.facts[index]
            store.conn.execute(
                "UPDATE memory_facts SET access_count = ? WHERE slot = ? AND key = ?",
                (int(200 / rank), fact.slot, fact.key),
            )
    if semantic:
        store.semantic.reindex()
    return store


def restated(rng: random.Random, memory: pm.Memory, part: str) -> list[pm.Restatement]:
    """Every fact about the person alone in ``part``, then entity facts up to the count."""
    alone = [f for f in memory.facts if f.entity is None and pm.split(f.family, part)]
    said = pm.restatements(rng, alone, len(alone), part)
    others = [f for f in memory.facts if f.entity is not None]
    return said + pm.restatements(rng, others, RESTATED_PER_PART - len(said), part)


def run(store: Store, conversations, found: dict[str, list[bool]]) -> None:
    model = Recorder()
    for turns, said in conversations:
        flusher.flush(store, json.dumps(turns), model, dry_run=True, source="bench")
        prompt = model.prompts[-1]
        for item in said:
            kind = "alone" if item.fact.entity is None else "entity"
            found[kind].append(f"- {item.fact.key}: {item.fact.value}" in prompt)


def share(values: list[bool]) -> str:
    return f"{sum(values)}/{len(values)} ({sum(values) / max(1, len(values)):.0%})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--semantic", action="store_true", help="Also with hybrid search")
    parser.add_argument("--seeds", type=int, default=5, help="Memories (seeds 14, 15, ...)")
    parser.add_argument("--code", metavar="DIR", help="Run the slotmem in DIR (a checkout)")
    args = parser.parse_args()
    code = Path(slotmem.__file__).resolve().parent.parent
    print(f"slotmem from {code}; {args.seeds} memories of 500 facts, 100 restated in each\n")
    print("| search | part | conversations | about the person | about an entity | all | seconds |")
    print("|---|---|---|---|---|---|---|")
    legs = ["lexical"] + (["hybrid"] if args.semantic else [])
    for leg in legs:
        found = {part: {"alone": [], "entity": []} for part in ("dev", "test")}
        seconds, conversations = 0.0, dict.fromkeys(found, 0)
        for seed in range(14, 14 + args.seeds):
            rng = random.Random(seed)
            memory = pm.memory(seed)
            with tempfile.TemporaryDirectory() as tmp:
                store = build(Path(tmp) / "m.db", memory, random.Random(seed), leg == "hybrid")
                for part, kinds in found.items():
                    said = pm.transcripts(rng, restated(rng, memory, part))
                    conversations[part] += len(said)
                    start = time.perf_counter()
                    run(store, said, kinds)
                    seconds += time.perf_counter() - start
                store.close()
        for part, kinds in found.items():
            print(
                f"| {leg} | {part} | {conversations[part]} | {share(kinds['alone'])} | "
                f"{share(kinds['entity'])} | {share(kinds['alone'] + kinds['entity'])} | "
                f"{seconds / 2:.1f} |"
            )


if __name__ == "__main__":
    main()
