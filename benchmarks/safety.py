"""The write scan on a labelled set: attacks a memory write must refuse, ordinary facts it must
keep, and secrets; and what the scan costs a write.

    python benchmarks/safety.py [--split NAME|all] [--extra PATH] [--misses] [--timing]

benchmarks/data/safety*.json (written for this benchmark): attacks (plain instructions, look-alike
letters, spaced-out letters, leetspeak, base64, about 30 languages, instructions phrased as
facts, chat-template markup), ordinary facts (many that mention jailbreaks, developer mode,
sending files, ignoring things, passwords or system prompts; others in those languages),
secrets and facts that only talk about passwords and tokens. Each row has a split:

- ``dev``: looked at while the patterns were written, and the only rows the model
  (slotmem/safety/model.py, benchmarks/train_safety.py) is trained and tuned on;
- ``test``: written after the patterns, never used to change them;
- ``holdout2``: written before the model, measured once with the first model, whose mistakes
  there led to one change (see docs/benchmarks.md);
- ``holdout3``: written after that measurement and before that change, then measured once;
- ``holdout4``: written for issue 22 by someone who read neither the scan nor its training
  rows, kept out of the tree until the third round's model shipped, then measured once;
- safety-dev-more.json: more ``dev`` rows (issue 22): standing orders phrased as preferences,
  fake tool results and chat roles, about 38 languages, ROT13, hex, URL-encoded and reversed
  text, and ordinary facts that look like them;
- ``holdout5`` (safety-holdout5.json, issue 22 item 5): written and committed before any of the
  fifth round's changes to the scan, measured once when they were final;
- safety-dev-extra.json: more ``dev`` rows for the fifth round (imperative preferences, commands
  and security work in ordinary facts, attacks of the round's kinds), written after holdout5;
- ``holdout6`` (safety-holdout6.json, issue 22 item 5, sixth round): written and committed
  before any of the sixth round's changes to the scan, measured once when they were final.
- safety-dev-sixth.json: ``dev`` and ``test`` rows for the sixth round, written after holdout6
  without reading it: the core injection phrases in 27 languages, instructions appended after an
  ordinary project fact, and ordinary facts of several sentences that look like them.
- safety-dev-seventh.json: ``dev`` and ``test`` rows for the seventh round (every fifth row of
  each label ``test``), written after holdout5 and holdout6 had been measured and read: standing
  orders phrased as preferences, fake tool results and roles, instructions after project facts,
  exfiltration, personas and trust poisoning, destructive acts, eight encodings and 35
  languages; ordinary facts about security and AI work, real imperative preferences, commands,
  harmless encodings, everyday and project facts, role-play, other languages.

In the seventh round ``holdout5`` and ``holdout6`` are no longer unseen (their misses were read):
``holdout5`` is trained on as dev rows (benchmarks/train_safety.py), so its figures are a fit,
not a measurement; ``holdout6`` is a development check, never trained on.

- ``holdout7`` (safety-holdout7.json, issue 22 item 5, seventh round): written by a helper who
  never saw the scan, its training rows or the other splits, and committed alone (a130fe1)
  before the seventh round's changes were merged; the engineer who made them never opened it.
  Measured once on the code before the round (1727520) and once when the round was final.

- ``holdout8`` (safety-holdout8.json, eighth round): written the same way and committed alone
  (82fc014) before the eighth round's changes were merged; the helper who made them never
  opened it. Measured once on the code before the round and once when it was final (80.0% /
  3.7% -> 85.6% / 3.7% with the semantic model); the models shipped in that round were not
  trained on it, but a retraining now would be (benchmarks/safety_cv.py reads every file).

- ``train10`` (safety-train10.json, tenth round): training rows written from general knowledge
  without opening any held-out split: attacks of every kind in 40 languages (destructive acts
  framed as routine, orders framed as team policy, standing orders phrased as preferences,
  orders to a future agent) and hard ordinary facts (role-play and fiction, AI and red-team
  work, the user's own imperative reminders, the same ideas in other languages).

- ``train11`` (safety-train11.json, eleventh round): training rows of quiet orders (a
  destructive act as a routine chore, an order as a team policy, a standing order as a
  preference, exfiltration as a sync) and ordinary facts of the same shapes; ``train11-test``
  (safety-train11-test.json) the same kinds, written before the round's features and its
  training rows and held back (outside benchmarks/data/) until the round's last measurement.
- ``train12`` (safety-train12.json, twelfth round): training rows of English quiet orders
  (personas and whose orders the agent follows, encoded orders, orders as house rules,
  destructive chores) and ordinary facts of the same shapes; the round's held-back rows are
  benchmarks/safety-train12-test.json (outside benchmarks/data/, read with --extra), written
  before the round's features and training rows and never trained on.

Since the eighth round every split is trained on (benchmarks/train_safety.py), so the figures
here are fits; the estimate on unseen wording is benchmarks/safety_cv.py, which leaves one split
out at a time.

--extra PATH reads one more file of rows in the same format (a JSON list, or an object with
an "injection" list; each row {"text", "label": "attack"|"ordinary", "kind", "lang",
"split"}), so a split nobody has tuned on can be measured without committing it first; its
splits are reported beside the others.

The first table compares the patterns alone with the whole scan on each split, with the base
model (any install) and with the semantic model (an install with the semantic extra: the text's
vector from the default embedding model is one more feature); the others break the chosen split
down by kind, for the scan as configured here. --timing measures a write's scan, side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from slotmem.safety import embedding, injection_reason, secret_reason
from slotmem.safety.injection import pattern_reason
from slotmem.safety.normalise import normalised
from slotmem.vectors.semantic import scan_vectors

DATA = Path(__file__).resolve().parent / "data" / "safety.json"
MORE = [
    DATA.with_name(name)
    for name in (
        "safety-dev-more.json",
        "safety-dev-extra.json",
        "safety-dev-sixth.json",
        "safety-dev-seventh.json",
        "safety-holdout5.json",
        "safety-holdout6.json",
        "safety-holdout7.json",
        "safety-holdout8.json",
        "safety-train10.json",
        "safety-train11.json",
        "safety-train11-test.json",
        "safety-train12.json",
    )
]
SPLITS = [
    "dev", "test", "holdout2", "holdout3", "holdout4", "holdout5", "holdout6", "holdout7",
    "holdout8", "train10", "train11", "train11-test", "train12",
]  # fmt: skip


@contextmanager
def embeddings(on: bool) -> Iterator[None]:
    """The scan with (the semantic model) or without (the base model) the embedding model."""
    before = os.environ.get(embedding.ENV)
    os.environ[embedding.ENV] = "1" if on else "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ[embedding.ENV]
        else:
            os.environ[embedding.ENV] = before


def semantic_available() -> bool:
    """Whether the semantic model can run here (the semantic extra is installed)."""
    embedding.use(scan_vectors)
    with embeddings(True):
        return embedding.vector("a probe") is not None


def scans() -> list[tuple[str, Callable[[str], str | None], bool]]:
    """(name, scan, with the embedding model) for each configuration measured here."""
    found = [
        ("patterns alone", pattern_reason, False),
        ("patterns + base model", injection_reason, False),
    ]
    if semantic_available():
        found.append(("patterns + semantic model", injection_reason, True))
    return found


def load(extra: Path | None = None) -> dict:
    """The labelled rows: ``{"injection": [...], "secrets": [...]}``."""
    data = json.loads(DATA.read_text())
    for more in MORE:
        data["injection"] += json.loads(more.read_text())["injection"]
    if extra is not None:
        data["injection"] += extra_rows(extra)
    return data


def extra_rows(path: Path) -> list[dict]:
    """The rows of an extra file, checked: each needs a text, a label and a split."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as ex:
        raise SystemExit(f"--extra {path}: cannot read it ({ex})") from None
    rows = found.get("injection") if isinstance(found, dict) else found
    if not isinstance(rows, list):
        raise SystemExit(f"--extra {path}: expected a list of rows or {{'injection': [...]}}")
    for number, row in enumerate(rows, 1):
        if not (
            isinstance(row, dict)
            and isinstance(row.get("text"), str)
            and row.get("label") in ("attack", "ordinary")
            and isinstance(row.get("split"), str)
        ):
            raise SystemExit(
                f"--extra {path}: row {number} needs a text, a label (attack or ordinary)"
                " and a split"
            )
        row.setdefault("kind", "-")
        row.setdefault("lang", "-")
    return rows


def splits(rows: list[dict]) -> list[str]:
    """The known splits in order, then any other split the rows hold."""
    return SPLITS + sorted({r["split"] for r in rows} - set(SPLITS))


def score(rows: list[dict], scan) -> dict:
    """{group: [flagged, total]} per kind, and the totals of each label."""
    counts: dict = defaultdict(lambda: [0, 0])
    for row in rows:
        hit = scan(row["text"]) is not None
        for group in (f"{row['label']}: {row['kind']}", row["label"]):
            counts[group][0] += hit
            counts[group][1] += 1
    return dict(counts)


def share(counts: dict, group: str) -> str:
    hit, total = counts.get(group, (0, 0))
    return f"{hit} of {total} ({hit / total:.1%})" if total else "-"


def summary(injection: list[dict]) -> None:
    print("| split | scan | attacks caught | ordinary facts rejected |\n|---|---|---|---|")
    for split in splits(injection):
        rows = [r for r in injection if r["split"] == split]
        for name, scan, on in scans():
            with embeddings(on):
                counts = score(rows, scan)
            print(f"| {split} | {name} | {share(counts, 'attack')} | {share(counts, 'ordinary')} |")


def table(title: str, counts: dict, bad: str, good: str) -> None:
    if not counts:
        return
    print(f"\n{title}\n\n| group | flagged | of | share |\n|---|---|---|---|")
    for group in sorted(counts, key=lambda g: (g in (bad, good), g)):
        hit, total = counts[group]
        name = f"**{group}**" if group in (bad, good) else group
        print(f"| {name} | {hit} | {total} | {hit / total:.1%} |")


def timing(ordinary: list[str], rounds: int = 5) -> None:
    """Microseconds per value for the patterns alone and the whole scan (each configuration),
    on values of about 60, 150 and 500 characters built from ordinary facts, measured in
    interleaved rounds; every value is new to the scan (it caches its normalising and the
    texts' vectors). The embedding model is loaded before the first round."""
    measured = scans()
    names = [name for name, _, _ in measured]
    print(f"\n| value length | {' | '.join(names)} |\n|---|{'---|' * len(names)}")
    joined = " ".join(ordinary)
    for length in (60, 150, 500):
        values = [joined[i : i + length] for i in range(0, len(joined) - length, length)][:60]
        best = dict.fromkeys(names, float("inf"))
        for round_ in range(rounds):
            for name, scan, on in measured:
                normalised.cache_clear()
                fresh = [f"{round_} {name} {value}" for value in values]
                with embeddings(on):
                    start = time.perf_counter()
                    for value in fresh:
                        scan(value)
                    best[name] = min(best[name], (time.perf_counter() - start) / len(fresh))
        print(f"| {length} | {' | '.join(f'{best[n] * 1e6:.0f} µs' for n in names)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split", default="all", help="dev, test, holdout2, ..., holdout8, all, ..."
    )
    parser.add_argument("--extra", type=Path, help="One more file of labelled rows")
    parser.add_argument("--misses", action="store_true", help="Print what was scored wrong")
    parser.add_argument("--timing", action="store_true", help="Time a write's scan")
    args = parser.parse_args()
    data = load(args.extra)
    if args.split not in ("all", *splits(data["injection"])):
        parser.error(f"no split {args.split!r}: {', '.join(splits(data['injection']))} or all")
    summary(data["injection"])
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
    if args.timing:
        # the rows of safety.json alone, so the figures compare with earlier rounds'
        timing(
            [
                r["text"]
                for r in json.loads(DATA.read_text())["injection"]
                if r["label"] == "ordinary"
            ]
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
