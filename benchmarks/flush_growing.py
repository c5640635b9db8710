"""A growing conversation flushed again and again: does each message reach the model about once,
and are the facts those of one flush of the whole?

    python benchmarks/flush_growing.py [--messages 200] [--flushes 10]

A 200-message conversation (a user and an assistant; one message in six states a fact about the
user, ``my <topic> is <value>``: 34 statements of 20 topics, the last 14 restating an earlier
topic with a new value) is flushed ten times as it grows (after 20, 40, ..., 200 messages) under
one source, three ways:

- once, the whole conversation (the reference);
- ten times with the source's cursor (``flush(..., source="chat")``): what is new each time,
  with the last few messages already read as context;
- ten times from the start (``from_start=True``, the CLI's ``--all``: what every flush did
  before the cursor).

The model is scripted and deterministic: it reads the ``<transcript>`` of each prompt (never the
``<earlier>`` context) and proposes one fact per ``my <topic> is <value>``; it counts the
messages (each carries its number) and characters it is sent. Nothing is tuned here: the figures
are counts.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import llm

from slotmem import Store
from slotmem.ingest import flush

TOPICS = [
    "city", "employer", "editor", "drink", "sport", "pet", "language", "bank", "car", "band",
    "author", "dish", "airline", "shell", "browser", "phone", "gym", "dentist", "podcast", "team",
]  # fmt: skip
VALUES = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
_NUMBER = re.compile(r"\(#(\d+)\)")
_FACT = re.compile(r"my (\w+) is (\w+)\.")


class Scripted(llm.Model):
    """Proposes a fact for each 'my <topic> is <value>.' in the transcript it is sent; counts
    what it is sent: messages (by their numbers) and characters, new and as context."""

    model_id = "scripted"

    def __init__(self):
        self.calls = 0
        self.sent: dict[int, int] = {}  # message number -> times sent as new
        self.context: dict[int, int] = {}  # message number -> times shown as context
        self.chars = 0

    def execute(self, prompt, stream, response, conversation):
        self.calls += 1
        text = prompt.prompt
        new = text[text.index("<transcript>") : text.index("</transcript>")]
        earlier = (
            text[text.index("<earlier>") : text.index("</earlier>")] if "<earlier>" in text else ""
        )
        self.chars += len(new) + len(earlier)
        for number in _NUMBER.findall(new):
            self.sent[int(number)] = self.sent.get(int(number), 0) + 1
        for number in _NUMBER.findall(earlier):
            self.context[int(number)] = self.context.get(int(number), 0) + 1
        facts = [
            f'{{"slot": "user", "key": "{topic}", "value": "Their {topic} is {value}.", '
            '"confidence": 0.9}'
            for topic, value in _FACT.findall(new)
        ]
        yield '{"facts": [' + ", ".join(facts) + "]}"


def conversation(size: int) -> list[dict]:
    messages = []
    for n in range(size):
        if n % 2:
            text = f"(#{n}) Noted. " + "Anything else you want me to keep in mind? " * (n % 3)
        elif n % 6 == 0:
            topic = TOPICS[(n // 6) % len(TOPICS)]
            value = VALUES[(n // 6 // len(TOPICS) + n) % len(VALUES)]
            text = f"(#{n}) By the way, my {topic} is {value}. It has been for a while."
        else:
            text = f"(#{n}) Let us talk about the schedule for the week, nothing to remember."
        messages.append({"role": "assistant" if n % 2 else "user", "content": text})
    return messages


def facts(store: Store) -> dict[tuple[str, str], str]:
    return {(f.slot, f.key): f.value for f in store.list_facts(limit=None)}


def run(directory: Path, name: str, messages: list[dict], steps: list[int], **options):
    model = Scripted()
    with Store(directory / f"{name}.db", create=True) as store:
        for size in steps:
            flush(store, messages[:size], model, source="chat", **options)
        return model, facts(store)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--flushes", type=int, default=10)
    args = parser.parse_args()
    messages = conversation(args.messages)
    steps = [round(args.messages * (i + 1) / args.flushes) for i in range(args.flushes)]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        whole, reference = run(directory, "whole", messages, [args.messages])
        rows = [("one flush of the whole", whole, reference)]
        rows.append((f"{args.flushes} flushes, cursor", *run(directory, "cursor", messages, steps)))
        rows.append(
            (
                f"{args.flushes} flushes, --all",
                *run(directory, "all", messages, steps, from_start=True),
            )
        )
    stated = sum(bool(_FACT.search(m["content"])) for m in messages)
    print(f"{args.messages} messages, {stated} facts stated, {len(reference)} in the end\n")
    header = ("run", "model calls", "messages sent", "per message", "most sends", "as context")
    header += ("characters sent", "facts equal")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, model, found in rows:
        sent = sum(model.sent.values())
        cells = (
            label,
            model.calls,
            sent,
            f"{sent / args.messages:.2f}",
            max(model.sent.values()),
            sum(model.context.values()),
            f"{model.chars:,}",
            "yes" if found == reference else "NO",
        )
        print("| " + " | ".join(str(c) for c in cells) + " |")


if __name__ == "__main__":
    main()
