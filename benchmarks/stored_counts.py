"""What a sentence's search by words alone would cost if each word's count in each fact were kept:
an estimate for issue 24's next step, against today's lexical search on the same file.

    python benchmarks/stored_counts.py --db KEPT [--facts 100000] [--queries 60]

On a file ``bench_semantic.py --db KEPT`` built, for its sentence questions whose plan keeps
every word (the pruned FTS5 path, not ``common.py``'s), in one slot and across slots:

- *today*: ``query_facts(text, semantic=False)``, wall time (plan, pruned bm25 in FTS5, hits);
- *from counts*: the same question's rows computed in numpy from what a stored form would hold,
  held in memory,
  built here beforehand and not timed: each fact's length in tokens (FTS5's ``_docsize``), its
  confidence x feedback, its slot, and, per word, the facts in which the word's bm25 count is
  not 1 (``common.py``'s tokenizer: twice in the key, once in the value). Timed: each word's
  postings (in memory already, as the pruned search has them) looked up in those, bm25 as
  ``lexical.py`` scores it, summed per fact, weighed, the best ``--limit`` chosen. Not timed
  (would be added): reading the plan, making the hits.

Prints both medians and how often the two give the same set of facts (ties and the Python
tokenizer's reading of a rare text can part them). Nothing here is a shipped code path.
"""

from __future__ import annotations

import argparse
import collections
import shutil
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from bench_semantic import english_words
from synthetic import Corpus

from slotmem import Store
from slotmem.search import common, terms
from slotmem.search import plan as planning


class Kept:
    """What a stored form of the counts would give a search (built by reading every fact)."""

    def __init__(self, conn):
        rows = conn.execute(
            "SELECT f.seq, f.key, f.value, d.sz, f.confidence, f.quality, f.slot, "
            f"length(f.key) + length(f.value) FROM memory_facts f "
            f"JOIN {planning.WORDS}_docsize d ON d.id = f.seq"
        ).fetchall()
        top = max(row[0] for row in rows) + 1
        self.length, self.weight, self.size = np.zeros(top), np.zeros(top), np.zeros(top)
        self.slot = np.zeros(top, dtype=np.int32)  # a code per slot name (``codes``)
        self.codes: dict[str, int] = {}
        counts: dict[str, dict[int, int]] = collections.defaultdict(dict)
        for seq, key, value, size, confidence, quality, fact_slot, chars in rows:
            self.length[seq] = common._varints_sum(bytes(size))
            self.weight[seq] = confidence * max(0.2, 1 + 0.15 * quality)
            self.slot[seq] = self.codes.setdefault(fact_slot, len(self.codes))
            self.size[seq] = chars
            found: collections.Counter = collections.Counter()
            for word in common._stems(key):
                found[word] += 2
            for word in common._stems(value):
                found[word] += 1
            for word, count in found.items():
                if count != 1:
                    counts[word][seq] = count
        self.counts = {
            word: (np.array(sorted(held)), np.array([held[s] for s in sorted(held)], dtype=float))
            for word, held in counts.items()
        }
        self.average = common._average_length(conn)
        self.exceptions = sum(len(held) for held in counts.values())

    def best(self, chosen, lists, ranking, limit: int, slot: str | None) -> list[int]:
        seqs, parts = [], []
        for arm, postings in zip(chosen.arms, lists):
            if slot is not None:
                postings = postings[self.slot[postings] == self.codes.get(slot, -1)]
            count = np.ones(len(postings))
            stored = self.counts.get(planning.stem(arm.term))
            if stored is not None and len(postings):
                where = np.searchsorted(stored[0], postings)
                found = where < len(stored[0])
                found[found] = stored[0][where[found]] == postings[found]
                count[found] = stored[1][where[found]]
            norm = common.K1 * (1 - common.B + common.B * self.length[postings] / self.average)
            share = count * (common.K1 + 1) / (count + norm)
            parts.append(ranking.idf(chosen.facts, arm.df) * share + ranking.coordination)
            seqs.append(postings)
        every, at = np.unique(np.concatenate(seqs), return_inverse=True)
        score = np.bincount(at, weights=np.concatenate(parts)) * self.weight[every]
        k = min(limit, len(every))
        if not k:
            return []
        top = np.argpartition(-score, k - 1)[:k]
        order = sorted(top, key=lambda i: (-score[i], self.size[every[i]], -every[i]))
        return [int(every[i]) for i in order]


def _hash(stem: str) -> int:
    """A 24-bit hash of a word's stem (zlib.crc32: the same in every process)."""
    return zlib.crc32(stem.encode()) & 0xFFFFFF


class Table:
    """The counts other than 1 in a table beside the facts, read per search (see the docstring)."""

    def __init__(self, conn):
        conn.execute("DROP TABLE IF EXISTS bench_counts")
        conn.execute(
            "CREATE TABLE bench_counts (seq INTEGER PRIMARY KEY, length INTEGER, counts BLOB)"
        )
        rows = conn.execute(
            f"SELECT f.seq, f.key, f.value, d.sz FROM memory_facts f "
            f"JOIN {planning.WORDS}_docsize d ON d.id = f.seq"
        ).fetchall()
        packed = []
        for seq, key, value, size in rows:
            keyed, valued = (
                collections.Counter(common._stems(key)),
                collections.Counter(common._stems(value)),
            )
            words = []
            for word in keyed.keys() | valued.keys():
                k, v = min(keyed[word], 15), min(valued[word], 15)
                if (k, v) != (0, 1):
                    words.append(_hash(word) << 8 | k << 4 | v)
            blob = np.array(sorted(words), dtype="<u4").tobytes()
            packed.append((seq, common._varints_sum(bytes(size)), blob))
        conn.executemany("INSERT INTO bench_counts VALUES (?, ?, ?)", packed)
        conn.commit()
        self.bytes = self._bytes(conn) / max(1, len(rows))

    @staticmethod
    def _bytes(conn) -> float:
        try:
            row = conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'bench_counts'")
            return float(row.fetchone()[0] or 0)
        except conn.OperationalError:  # no dbstat in this SQLite: the payload alone
            row = conn.execute("SELECT sum(length(counts) + 6) FROM bench_counts").fetchone()
            return float(row[0] or 0)

    def best(self, conn, chosen, lists, tags, ranking, limit: int, average: float) -> list[int]:
        seqs, bits = common.held(lists, tags)
        if not len(seqs):
            return []
        feedback, _ = ranking.factors()
        rows = conn.execute(
            f"""SELECT c.length, c.counts, f.confidence * {feedback}
                FROM json_each(:seqs) j CROSS JOIN memory_facts f ON f.seq = j.value
                CROSS JOIN bench_counts c ON c.seq = j.value
                WHERE f.expires_at IS NULL OR f.expires_at > :now""",
            {"seqs": "[" + ",".join(map(str, seqs.tolist())) + "]", "now": 2**62},
        ).fetchall()  # every held fact is live here: the rows keep the seqs' order
        length = np.fromiter((row[0] for row in rows), float, len(rows))
        weight = np.fromiter((row[2] for row in rows), float, len(rows))
        blobs = [row[1] for row in rows]
        packed = np.frombuffer(b"".join(blobs), dtype="<u4")
        owner = np.repeat(np.arange(len(rows)), [len(blob) // 4 for blob in blobs])
        norm = common.K1 * (1 - common.B + common.B * length / average)
        match = np.zeros(len(rows))
        for i, arm in enumerate(chosen.arms):
            holds = (bits >> i) & 1 == 1
            count = np.full(len(rows), float(ranking.value_weight))
            mine = (packed >> 8) == _hash(planning.stem(arm.term))
            counts = packed[mine]
            count[owner[mine]] = ranking.key_weight * (
                (counts >> 4) & 15
            ) + ranking.value_weight * (counts & 15)
            share = count * (common.K1 + 1) / (count + norm)
            idf = ranking.idf(chosen.facts, arm.df)
            match += np.where(holds, idf * share + ranking.coordination, 0.0)
        score = match * weight
        k = min(limit, len(score))
        top = np.argpartition(-score, k - 1)[:k]
        return [int(seqs[i]) for i in top[np.argsort(-score[top], kind="stable")]]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a file bench_semantic.py built")
    parser.add_argument("--facts", type=int, default=100_000, help="its --facts")
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--limit", type=int, default=10)
    args = parser.parse_args(argv)
    corpus = Corpus(words=english_words())
    corpus.facts(args.facts)  # the same draws as bench_semantic.py: then its questions
    for _ in range(args.queries):
        corpus.common_query()
    for _ in range(args.queries):
        corpus.rare_query()
    questions = [corpus.sentence(5, 12) for _ in range(args.queries)]
    print(
        "| slots | sentences | today ms | from counts ms | ratio | same facts "
        "| read per search ms | ratio | same facts |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.db"
        shutil.copy(args.db, copy)
        with Store(copy) as store:
            conn, postings = store.conn, common.postings_of(store._doc_freqs)
            kept, table = Kept(conn), Table(conn)
            for slot in ("user", None):
                today, counted, same, asked = [], [], 0, 0
                read, same_read = [], 0
                for text in questions:
                    chosen = planning.plan(conn, terms.parse(text), None, store._doc_freqs)
                    if not chosen or common.applies(chosen):
                        continue  # common.py's path: not this estimate's
                    asked += 1
                    start = time.perf_counter()
                    hits = store.query_facts(
                        text,
                        slots=[slot] if slot else None,
                        semantic=False,
                        track_access=False,
                        limit=args.limit,
                    )
                    today.append(time.perf_counter() - start)
                    state = common.structure(conn)
                    lists = [postings.get(conn, arm.match, state) for arm in chosen.arms]
                    start = time.perf_counter()
                    mine = kept.best(chosen, lists, store.ranking, args.limit, slot)
                    counted.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    tags = [postings.get(conn, planning.slot_tag(slot), state)] if slot else None
                    lists = [postings.get(conn, arm.match, state) for arm in chosen.arms]
                    average = common._average_length(conn)
                    theirs = table.best(
                        conn, chosen, lists, tags, store.ranking, args.limit, average
                    )
                    read.append(time.perf_counter() - start)
                    ids = [hit.fact.id for hit in hits]
                    marks = ",".join("?" * len(ids))
                    sql = f"SELECT seq FROM memory_facts WHERE id IN ({marks})"
                    found = {seq for (seq,) in conn.execute(sql, ids)}
                    same += found == set(mine)
                    same_read += found == set(theirs)
                a, b = statistics.median(today) * 1000, statistics.median(counted) * 1000
                c = statistics.median(read) * 1000
                print(
                    f"| {slot or 'all'} | {asked} | {a:.2f} | {b:.2f} | {b / a:.2f} | "
                    f"{same} of {asked} | {c:.2f} | {c / a:.2f} | {same_read} of {asked} |"
                )
        print(f"\nword counts other than 1 kept: {kept.exceptions:,} (stopwords included)")
        print(f"the table of counts read per search: {table.bytes:.1f} bytes a fact")


if __name__ == "__main__":
    main()
