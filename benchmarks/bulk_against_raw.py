"""Bulk upsert against raw SQL, two trees alternated in one process.

    python benchmarks/bulk_against_raw.py [--facts 100000] [--rounds 3] [--before DIR]

``bench_store.py``'s load (``upsert_many`` of synthetic facts into a new file, against one
``executemany`` of the same UPSERT into the same schema with the ids and key forms computed
beforehand: ``raw``, issue 24's baseline), and ``raw multi``: the same rows written raw as
slotmem writes them (``storage.rows.upsert_rows``, multi-row statements; ``--no-multi`` leaves
it out), each setting into its own new file, the settings' order reversed each round so that a
loaded machine slows them alike. ``--before DIR``: a directory holding another tree's package
renamed ``slotmem_before`` (and its ``migrations``), loaded beside this tree's. Prints each
setting's facts per second of CPU time (median of the rounds) and its ratio to raw's (issue 24:
>= 0.9x) and to raw multi's (slotmem's own cost over the same statements).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import load_raw
from synthetic import Corpus

from slotmem import Store


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="a directory holding the package slotmem_before")
    parser.add_argument("--no-multi", action="store_true", help="leave out raw multi")
    args = parser.parse_args(argv)
    items = Corpus().facts(args.facts)
    stores = {"now": Store}
    if args.before:
        sys.path.insert(0, args.before)
        import slotmem_before

        stores["before"] = slotmem_before.Store
    names = ["raw", *([] if args.no_multi else ["raw multi"]), *stores]
    rates: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            for name in names if i % 2 else names[::-1]:
                path = Path(tmp) / f"{name}{i}.db"
                if name.startswith("raw"):
                    rates[name].append(load_raw(path, items, multi=name == "raw multi")[1])
                    continue
                store = stores[name](path, create=True)
                cpu = time.process_time()
                store.upsert_many(items)
                rates[name].append(len(items) / (time.process_time() - cpu))
                store.close()
                path.unlink()
    base = statistics.median(rates["raw"])
    multi = statistics.median(rates["raw multi"]) if "raw multi" in rates else None
    print("| setting | facts/s of CPU (median) | range | against raw | against raw multi |")
    print("|---|---|---|---|---|")
    for name in names:
        rate = statistics.median(rates[name])
        low, high = min(rates[name]), max(rates[name])
        against = f"{rate / multi:.2f}" if multi else "-"
        print(f"| {name} | {rate:,.0f} | {low:,.0f}-{high:,.0f} | {rate / base:.2f} | {against} |")


if __name__ == "__main__":
    main()
