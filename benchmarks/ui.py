"""slotmem ui on a big memory: how long until the first page, and each page after.

    python benchmarks/ui.py [--facts 100000] [--repeat 5] [--no-datasette]

Builds a synthetic memory (benchmarks/synthetic.py: Zipf words, three slots, keys fact.N), then:
- cold start: `slotmem ui` started as a new process until its first page (the facts, newest
  first) has arrived, the way a person opens it; beside it `datasette FILE` until its
  memory_facts table page has arrived (the raw browsing the UI replaces), when datasette is
  installed;
- each page on the running server: median and worst of --repeat loads, in milliseconds.
Ratios are what to read: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import Corpus

from slotmem import Store

PAGES = [
    ("facts, newest first", "/"),
    ("facts of one slot, by key", "/?slot=user&order=key"),
    ("facts, last used first", "/?order=accessed"),
    ("facts, page 100", "/?offset=5000"),
    ("facts whose source contains", "/?source=bench&slot=agent"),
    ("one fact and its history", "/fact?slot=user&key=fact.3"),
    ("search, common words", "/search?q=the+of+and+to+a"),
    ("context preview", "/context?message=what+do+we+know+about+the+deploy"),
    ("use per slot", "/map"),
]


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=120) as answer:
        return answer.read()


def cold_start(command: list[str], first_line: str, page: str) -> tuple[float, int]:
    """Seconds from starting ``command`` until ``page`` of the address it prints has arrived."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            found = re.search(first_line, line)
            if found:
                body = fetch(found.group(1).rstrip("/") + page)
                return time.perf_counter() - start, len(body)
        raise RuntimeError(f"{command[0]} stopped before serving")
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-datasette", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.db"
        with Store(path, create=True) as store:
            items = Corpus().facts(args.facts)
            for i in range(0, len(items), 50_000):
                store.upsert_many(items[i : i + 50_000])
            store.upsert("user", "fact.3", "changed once, so it has a history")
            store.checkpoint()
        print(f"# {args.facts:,} facts, {path.stat().st_size / 1e6:.0f} MB\n")
        print("| cold start, until the first page has arrived | seconds | page bytes |")
        print("|---|---|---|")
        ui = [sys.executable, "-m", "slotmem", "ui", "-d", str(path), "--port", "0"]
        seconds, size = cold_start(ui, r"(http://127\.0\.0\.1:\d+/)", "/")
        print(f"| `slotmem ui` | {seconds:.2f} | {size:,} |")
        datasette = shutil.which("datasette") or str(Path(sys.executable).parent / "datasette")
        if not args.no_datasette and Path(datasette).exists():
            command = [datasette, "serve", str(path), "--port", "0"]
            seconds, size = cold_start(
                command, r"Uvicorn running on (http://127\.0\.0\.1:\d+)", "/big/memory_facts"
            )
            print(f"| `datasette FILE`, its memory_facts page | {seconds:.2f} | {size:,} |")

        from slotmem.ui import UI

        server = UI(path, port=0)
        import threading

        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            print("\n| page, server running | median ms | worst ms |")
            print("|---|---|---|")
            for label, page in PAGES:
                times = []
                for _ in range(args.repeat):
                    start = time.perf_counter()
                    fetch(server.url.rstrip("/") + page)
                    times.append(time.perf_counter() - start)
                print(
                    f"| {label} | {statistics.median(times) * 1000:.0f} | {max(times) * 1000:.0f} |"
                )
        finally:
            server.shutdown()
            server.close()


if __name__ == "__main__":
    main()
