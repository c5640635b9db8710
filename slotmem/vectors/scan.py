"""The candidate scan in numpy: the vec0 index's signatures held in memory, searched by popcount.

sqlite-vec 0.1.9 scans every signature of the partitions it is asked for, one partition per
statement; the same scan over a contiguous numpy array of the signatures took about half the CPU
with the same candidates (docs/benchmarks.md, "Hybrid search at 100k"). ``Signatures`` is one
process's copy of the index, read from vec0's shadow tables (a 100k-fact index in tens of ms,
where reading it through the virtual table takes most of a second); ``VectorIndex`` keeps it
fresh (see ``VectorIndex.signatures``). The vec0 table stays the index on disk: writes go to it
as before, and a search inside a write transaction scans it (it sees the transaction's writes).

The rows are sorted by (slot, shard, seq), so that a slot is one contiguous block and a shard of
it a range within it: a one-slot search counts the bits of that slot's third alone. Each
partition gives its ``per_shard`` nearest signatures, as vec0's partition keys do.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import Any

# vec0 0.1.x's shadow tables: one row per chunk of up to chunk_size signatures of one partition
# (slot, shard), with a validity bitmap and the rowid (fact seq) of each position.
SHADOW_SQL = """
    SELECT c.size, c.partition00, c.partition01, c.validity, c.rowids, v.vectors
    FROM {table}_chunks c JOIN {table}_vector_chunks00 v ON v.rowid = c.chunk_id
"""
VIRTUAL_SQL = "SELECT fact_seq, slot, shard, {column} FROM {table}"


@dataclass
class Signatures:
    """The index's signatures in memory: ``words`` (rows x BITS/64, uint64), the ``seqs`` and
    ``shards`` of its rows, sorted by (slot, shard, seq), and where each slot's rows lie."""

    seqs: Any  # numpy arrays (numpy is imported when first used)
    shards: Any
    words: Any
    slots: dict[str, tuple[int, int]]  # slot -> (start, end) of its rows
    shard_rows: dict = field(default_factory=dict)  # shard -> its rows' indexes over all slots

    @property
    def nbytes(self) -> int:
        return int(
            self.seqs.nbytes
            + self.shards.nbytes
            + self.words.nbytes
            + sum(rows.nbytes for rows in self.shard_rows.values())
        )

    def __len__(self) -> int:
        return len(self.seqs)

    def candidates(
        self, signature: bytes, slots: list[str] | None, per_shard: int, shards: int
    ) -> list[int]:
        """The seqs of the ``per_shard`` nearest signatures of every partition searched: (slot,
        shard) for each of ``slots``, or each shard across the slots."""
        return self.scan(signature, slots, per_shard, shards).run()

    def scan(self, signature: bytes, slots: list[str] | None, per_shard: int, shards: int) -> Scan:
        """``candidates`` as tasks two threads can share (``Scan``)."""
        import numpy as np

        query = np.frombuffer(signature, dtype=np.uint64)
        if slots:
            tasks = []
            for slot in dict.fromkeys(slots):
                if slot not in self.slots:
                    continue
                start, end = self.slots[slot]
                bounds = np.searchsorted(self.shards[start:end], np.arange(shards + 1)) + start
                for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                    tasks.append(functools.partial(self._partition, query, lo, hi, per_shard))
            return Scan([tasks])
        out = np.empty(len(self.words), dtype=np.int32)
        counts = [
            functools.partial(
                _popcount, self.words[start : start + CHUNK], query, out[start : start + CHUNK]
            )
            for start in range(0, len(self.words), CHUNK)
        ]
        nearest = [  # the nearest rows of each shard, then their seqs
            functools.partial(self._shard, out, rows, per_shard)
            for rows in self.shard_rows.values()
        ]
        return Scan([counts, nearest])

    def _partition(self, query, lo: int, hi: int, per_shard: int) -> list[int]:
        distances = _popcount(self.words[lo:hi], query)
        return _nearest(distances, self.seqs[lo:hi], per_shard).tolist()

    def _shard(self, distances, rows, per_shard: int) -> list[int]:
        return self.seqs[_nearest(distances[rows], rows, per_shard)].tolist()


class Scan:
    """One search's scan as small tasks in phases (each phase's after the last's are all done),
    which any threads that call ``help`` share: each task writes only its own slot of the
    results (or its own rows of the distances), so the candidates are the same whichever thread
    ran which. A hybrid search's worker thread starts it and the calling thread joins in once
    its own part is done (``Semantic.ask``); numpy lets go of the GIL in each task's counting
    and partitioning."""

    def __init__(self, phases: list[list]):
        self._phases = phases
        self._lock = threading.Lock()
        self._taken = [0] * len(phases)
        self._left = [len(tasks) for tasks in phases]
        self._ended = [threading.Event() for _ in phases]
        self._results: list = [None] * len(phases[-1]) if phases else []
        self._error: BaseException | None = None
        for phase, left in enumerate(self._left):
            if not left:
                self._ended[phase].set()

    def help(self) -> None:
        """Run tasks until none is left, waiting for the other threads' at each phase's end;
        a task's exception is raised here (and in every thread that helps)."""
        last = len(self._phases) - 1
        for phase, tasks in enumerate(self._phases):
            while True:
                claimed = False
                try:  # the claim inside the try: an interrupt after it still counts it ended
                    with self._lock:
                        index = self._taken[phase]
                        if index >= len(tasks) or self._error is not None:
                            break
                        self._taken[phase] += 1
                        claimed = True
                    result = tasks[index]()
                    if phase == last:
                        self._results[index] = result
                except BaseException as e:  # noqa: BLE001 - raised again below, in every helper
                    with self._lock:
                        self._error = self._error or e
                finally:
                    if claimed:
                        with self._lock:
                            self._left[phase] -= 1
                            if not self._left[phase] or self._error is not None:
                                self._ended[phase].set()
            self._ended[phase].wait()
            if self._error is not None:
                raise self._error

    def run(self) -> list[int]:
        """The candidates, once every task has run (on this thread, or shared with others)."""
        self.help()
        return [seq for found in self._results for seq in found]


def _nearest(distances, seqs, k: int):
    """The ``seqs`` (or rows) of the ``k`` smallest distances; of equal ones at the boundary,
    the first (a slot's rows are in seq order); vec0 breaks such ties its own way."""
    import numpy as np

    if len(seqs) <= k:
        return seqs
    bound = np.partition(distances, k - 1)[k - 1]
    below = np.flatnonzero(distances < bound)
    tied = np.flatnonzero(distances == bound)[: k - len(below)]
    return seqs[np.concatenate((below, tied))]


CHUNK = 8192  # rows counted at a time: their XOR and bit counts stay in the CPU's cache


def _popcount(words, query=None, out=None):
    """Set bits per row of a uint64 matrix (of each row XOR ``query``), ``CHUNK`` rows at a
    time: one pass over a million rows made 128 MB of temporaries and took 1.4 times as long.
    ``out``: where to write them (its first rows)."""
    import numpy as np

    if out is None:
        out = np.empty(len(words), dtype=np.int32)
    for start in range(0, len(words), CHUNK):
        part = words[start : start + CHUNK]
        if query is not None:
            part = part ^ query
        if hasattr(np, "bitwise_count"):  # numpy 2 (einsum adds a row's 16 counts faster than sum)
            counts = np.bitwise_count(part)
        else:
            counts = _byte_bits()[part.view(np.uint8)]
        np.einsum("ij->i", counts, dtype=np.int32, out=out[start : start + CHUNK])
    return out


@functools.cache
def _byte_bits():
    """Set bits of each byte value (numpy 1 has no bitwise_count)."""
    import numpy as np

    return np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(
        axis=1, dtype=np.uint8
    )


def load(conn, table: str, column: str, bits: int, shards: int) -> Signatures:
    """The index's signatures, read from vec0's shadow tables (from the virtual table when they
    are not laid out as sqlite-vec 0.1.x lays them out)."""
    import numpy as np

    width = bits // 8
    try:
        seqs, slots, shard_of, words = _from_shadow(conn, table, width)
    except Exception:  # noqa: BLE001 - another sqlite-vec's layout: the slow, documented way
        rows = conn.execute(VIRTUAL_SQL.format(column=column, table=table)).fetchall()
        seqs = np.array([row[0] for row in rows], dtype=np.int64)
        slots = np.array([row[1] for row in rows], dtype=object)
        shard_of = np.array([row[2] for row in rows], dtype=np.int64)
        words = np.frombuffer(b"".join(row[3] for row in rows), dtype=np.uint8)
        words = words.reshape(len(rows), width)
    names = sorted(set(slots.tolist()))
    codes = np.searchsorted(np.array(names, dtype=object), slots) if names else slots
    order = np.lexsort((seqs, shard_of, codes))
    seqs, shard_of, codes = seqs[order], shard_of[order], np.asarray(codes)[order]
    words = np.ascontiguousarray(words[order]).view(np.uint64)
    bounds = np.searchsorted(codes, np.arange(len(names) + 1))
    found = Signatures(
        seqs=seqs,
        shards=shard_of,
        words=words,
        slots={name: (int(bounds[i]), int(bounds[i + 1])) for i, name in enumerate(names)},
    )
    found.shard_rows = {
        shard: np.flatnonzero(shard_of == shard).astype(np.int32) for shard in range(shards)
    }
    return found


def _from_shadow(conn, table: str, width: int):
    import numpy as np

    seqs, slots, shards, words = [], [], [], []
    for size, slot, shard, validity, rowids, vectors in conn.execute(
        SHADOW_SQL.format(table=table)
    ):
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[:size]
        keep = np.flatnonzero(valid)
        if not len(keep):
            continue
        seqs.append(np.frombuffer(rowids, dtype="<i8")[:size][keep])
        words.append(np.frombuffer(vectors, dtype=np.uint8).reshape(-1, width)[:size][keep])
        slots.append(np.full(len(keep), slot, dtype=object))
        shards.append(np.full(len(keep), shard, dtype=np.int64))
    if not seqs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, np.zeros(0, dtype=object), empty, np.zeros((0, width), dtype=np.uint8)
    return (
        np.concatenate(seqs).astype(np.int64),
        np.concatenate(slots),
        np.concatenate(shards),
        np.concatenate(words),
    )
