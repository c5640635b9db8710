"""Cold starts side by side: CPU time of fresh ``slotmem`` processes, this checkout against a git
revision, in interleaved rounds (so that a loaded machine's moods fall on both alike).

    python benchmarks/cold_start.py                       # against main, 20 rounds
    python benchmarks/cold_start.py --against f459aad --rounds 30 [path/to/locomo-dev.json]

Both trees run with this interpreter and its packages, from bytecode compiled beforehand (the
revision is unpacked with ``git archive`` into a temporary directory); each process's CPU time
(user + system) comes from ``wait4``. The lexical file holds the observations of LoCoMo's first
development conversation (benchmarks/observations.py); the message is one of its questions. Rows:
``python -c pass``, ``slotmem context MESSAGE`` and ``slotmem --help`` from each tree, and with
``--hybrid`` (needs the semantic extra) ``slotmem context`` on the same facts embedded by the
default model (a new process loads the model and embeds the question)."""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import observations

MESSAGE = "What did the charity race raise awareness for?"
RUN = "import sys\nfrom slotmem.cli import cli\nsys.exit(cli(sys.argv[1:], prog_name='slotmem'))"
# Each tree builds its own files (a file another tree migrated may be too new for it): its
# slotmem is imported first, so that observations.py's `from slotmem import Store` finds it.
BUILD = """import sys
from pathlib import Path
import slotmem
sys.path.insert(0, sys.argv[1])
import observations
memory = observations.load(Path(sys.argv[2]))[0]
observations.build(memory, Path(sys.argv[3])).close()
if sys.argv[4]:
    observations.build(memory, Path(sys.argv[4]), embed=True).close()
"""


def unpack(revision: str, directory: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "slotmem", "migrations"],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(directory)], input=archive, check=True)
    return directory


def measure(
    commands: dict[str, tuple[list[str], dict, Path]], rounds: int
) -> dict[str, list[float]]:
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, (command, env, cwd) in commands.items():
            process = subprocess.Popen(
                command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            _, status, usage = os.wait4(process.pid, 0)
            if status:
                raise SystemExit(f"{name} failed ({status})")
            cpu[name].append((usage.ru_utime + usage.ru_stime) * 1000)
    return cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=observations.DEFAULT_PATH)
    parser.add_argument("--against", default="main", help="a git revision (default: main)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--hybrid", action="store_true", help="also a file with vectors")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "tree").mkdir()
        other = unpack(args.against, Path(tmp) / "tree")
        trees = {args.against: other, "this tree": ROOT}
        for tree in trees.values():
            compileall.compile_dir(tree / "slotmem", quiet=1)
        base = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        # each tree's processes run in it: `python -c` puts the working directory first on sys.path
        commands = {"python -c pass": ([sys.executable, "-c", "pass"], base, Path(tmp))}
        outputs = {}
        for number, (name, tree) in enumerate(trees.items()):
            env = {**base, "PYTHONPATH": str(tree)}
            where = [sys.executable, "-c", "import slotmem; print(slotmem.__file__)"]
            loaded = subprocess.run(
                where, env=env, cwd=tree, capture_output=True, text=True, check=True
            )
            print(f"{name}: {loaded.stdout.strip()}")
            database = Path(tmp) / f"lexical-{number}.db"
            hybrid = Path(tmp) / f"hybrid-{number}.db"
            subprocess.run(
                [
                    sys.executable,
                    "-c",
                    BUILD,
                    str(ROOT / "benchmarks"),
                    str(args.path),
                    str(database),
                ]
                + [str(hybrid) if args.hybrid else ""],
                env=env,
                cwd=tree,
                check=True,
            )
            runs = [
                ("context", ["context", MESSAGE, "-d", str(database)]),
                ("--help", ["--help"]),
            ]
            if args.hybrid:
                runs.append(("context (hybrid)", ["context", MESSAGE, "-d", str(hybrid)]))
            for what, rest in runs:
                command = [sys.executable, "-c", RUN, *rest]
                commands[f"{name}: slotmem {what}"] = (command, env, tree)
                done = subprocess.run(
                    command, env=env, cwd=tree, capture_output=True, text=True, check=True
                )
                outputs.setdefault(what, set()).add(done.stdout)
        same = all(len(texts) == 1 for texts in outputs.values())
        start = time.perf_counter()
        cpu = measure(commands, args.rounds)
    print(
        f"{args.rounds} interleaved rounds in {time.perf_counter() - start:.0f} s, load average "
        f"{os.getloadavg()[0]:.1f}; both trees print the same: {same}\n"
    )
    print("| process | CPU ms, median | p10-p90 |\n|---|---|---|")
    for name, values in cpu.items():
        values.sort()
        low, high = values[len(values) // 10], values[max(0, (9 * len(values)) // 10 - 1)]
        print(f"| {name} | {statistics.median(values):.0f} | {low:.0f}-{high:.0f} |")
    print()
    for what in ("context", "--help", *(["context (hybrid)"] if args.hybrid else [])):
        ours = statistics.median(cpu[f"this tree: slotmem {what}"])
        theirs = statistics.median(cpu[f"{args.against}: slotmem {what}"])
        print(f"slotmem {what}: this tree / {args.against} = {ours / theirs:.2f}")


if __name__ == "__main__":
    main()
