"""The write scan on a labelled set: attacks a memory write must refuse, ordinary facts it must
keep, and secrets.

    python benchmarks/safety.py [--split dev|test|all] [--misses]

benchmarks/data/safety.json (written for this benchmark): 284 attacks (plain English,
look-alike letters, spaced-out letters, leetspeak, base64, 24 other languages, instructions
phrased as facts, chat-template markup) and 248 ordinary facts (many that mention jailbreaks,
developer mode, sending files, ignoring things or system prompts; others in those languages),
plus 36 secrets and 22 facts that only talk about passwords and tokens. Every row is ``dev``
(looked at while the patterns of slotmem/safety.py were written) or ``test`` (written after
them and never used to change them): quote the test split.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from slotmem.safety import injection_reason, secret_reason

DATA = Path(__file__).resolve().parent / "data" / "safety.json"


def load() -> dict:
    return json.loads(DATA.read_text())


def score(rows: list[dict], scan) -> dict:
    """{group: [flagged, total]} per kind, and the totals of each label."""
    counts: dict = defaultdict(lambda: [0, 0])
    for row in rows:
        hit = scan(row["text"]) is not None
        for group in (f"{row['label']}: {row['kind']}", row["label"]):
            counts[group][0] += hit
            counts[group][1] += 1
    return dict(counts)


def table(title: str, counts: dict, bad: str, good: str) -> None:
    print(f"\n{title}\n\n| group | flagged | of | share |\n|---|---|---|---|")
    for group in sorted(counts, key=lambda g: (g in (bad, good), g)):
        hit, total = counts[group]
        name = f"**{group}**" if group in (bad, good) else group
        print(f"| {name} | {hit} | {total} | {hit / total:.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split", choices=["dev", "test", "holdout2", "holdout3", "all"], default="all"
    )
    parser.add_argument("--misses", action="store_true", help="Print what was scored wrong")
    args = parser.parse_args()
    data = load()
    injection, secrets = (
        [r for r in data[part] if args.split in ("all", r["split"])]
        for part in ("injection", "secrets")
    )
    table(
        f"Injection scan ({args.split}): attacks should be flagged, ordinary facts not",
        score(injection, injection_reason),
        "attack",
        "ordinary",
    )
    table(
        f"Secret scan ({args.split}): secrets should be flagged, ordinary facts not",
        score(secrets, secret_reason),
        "secret",
        "ordinary",
    )
    if args.misses:
        print()
        for rows, scan, bad in (
            (injection, injection_reason, "attack"),
            (secrets, secret_reason, "secret"),
        ):
            for row in rows:
                if (scan(row["text"]) is not None) != (row["label"] == bad):
                    print(f"{row['label']:8} {row['kind']:9} {row['lang']} {row['text'][:90]!r}")


if __name__ == "__main__":
    main()
