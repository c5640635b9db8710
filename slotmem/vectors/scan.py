"""The candidate scan in numpy: the vec0 index's signatures held in memory, searched by popcount.

sqlite-vec 0.1.9 scans every signature of the partitions it is asked for, one partition per
statement; the same scan over a contiguous numpy array of the signatures took about half the CPU
with the same candidates (docs/benchmarks.md, "Hybrid search at 100k"). ``Signatures`` is one
process's copy of the index, read from vec0's shadow tables (a 100k-fact index in tens of ms,
where reading it through the virtual table takes most of a second); ``VectorIndex`` keeps it
fresh (see ``VectorIndex.signatures``). The vec0 table stays the index on disk: writes go to it
as before, and a search inside a write transaction scans it (it sees the transaction's writes).

The rows are sorted by (shard, slot, seq), so that a partition (slot, shard) is one contiguous
range and so is a shard across every slot (an all-slot search's partition). Each partition gives
its ``per_shard`` nearest signatures, as vec0's partition keys do, found in two stages: the
distance of the first ``SCREEN_WORDS`` words (384 of the 1,024 bits, held as columns: numpy
counts a column's bits in one call) to every row, then the whole distance of the ``SCREEN`` ×
``per_shard`` rows nearest by it (768 for the usual 16; every row at the boundary's distance
kept), read from the rest of the words (``tail``). The first stage reads 48 of each row's 128
bytes and the second a few percent of the rows: at a million facts the scan took 0.24 of the
CPU across slots and 0.35-0.38 in one slot, and its candidates held the exact 10 nearest as
often (docs/benchmarks.md, "The signature scan in two stages"). A partition of no more rows
than are kept is counted whole: its candidates are exactly the nearest, as vec0's are; a larger
one's may now and then miss one whose first 384 bits are far for its distance.
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
SCREEN_WORDS = 6  # 64-bit words of each signature the first stage counts (docs/benchmarks.md)
SCREEN = 48  # rows the first stage keeps per partition, per candidate asked of it (per_shard)


@dataclass
class Signatures:
    """The index's signatures in memory, their rows sorted by (shard, slot, seq): the ``seqs``,
    the first ``SCREEN_WORDS`` words of each as columns (``head``: words × rows, uint64), the
    rest as rows (``tail``), and where each partition's rows lie: (slot, shard) in ``partitions``,
    a shard over every slot in ``shards``."""

    seqs: Any  # numpy arrays (numpy is imported when first used)
    head: Any
    tail: Any
    partitions: dict[tuple[str, int], tuple[int, int]] = field(default_factory=dict)
    shards: dict[int, tuple[int, int]] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return int(self.seqs.nbytes + self.head.nbytes + self.tail.nbytes)

    @property
    def words(self):
        """Every row's whole signature (rows × words, uint64): a copy, for checks."""
        import numpy as np

        return np.concatenate((self.head.T, self.tail), axis=1)

    def __len__(self) -> int:
        return len(self.seqs)

    def candidates(
        self, signature: bytes, slots: list[str] | None, per_shard: int, shards: int
    ) -> list[int]:
        """The seqs of the ``per_shard`` nearest signatures of every partition searched: (slot,
        shard) for each of ``slots``, or each shard across the slots."""
        return self.scan(signature, slots, per_shard, shards).run()

    def scan(self, signature: bytes, slots: list[str] | None, per_shard: int, shards: int) -> Scan:
        """``candidates`` as tasks two threads can share (``Scan``), one a partition."""
        import numpy as np

        query = np.frombuffer(signature, dtype=np.uint64)
        if slots:
            found = self.partitions
            ranges = [
                found[slot, shard]
                for slot in dict.fromkeys(slots)
                for shard in range(shards)
                if (slot, shard) in found
            ]
        else:
            ranges = [self.shards[shard] for shard in range(shards) if shard in self.shards]
        keep = SCREEN * per_shard
        return Scan(
            [
                [
                    functools.partial(self._partition, query, lo, hi, keep, per_shard)
                    for lo, hi in ranges
                ]
            ],
            rows=sum(hi - lo for lo, hi in ranges),
        )

    def _partition(self, query, lo: int, hi: int, keep: int, per_shard: int) -> list[int]:
        """The seqs of the ``per_shard`` nearest rows of ``lo:hi``, in two stages."""
        import numpy as np

        width = len(self.head)
        screened = _distances(self.head[:, lo:hi], query[:width])
        if hi - lo > keep:
            bound = np.partition(screened, keep - 1)[keep - 1]
            rows = np.flatnonzero(screened <= bound)
            tail = np.take(self.tail, rows + lo, axis=0)
            screened = screened[rows]
        else:
            rows = np.arange(hi - lo)
            tail = self.tail[lo:hi]
        distances = _distances(tail.T, query[width:])
        distances += screened
        return self.seqs[_nearest(distances, rows, per_shard) + lo].tolist()


class Scan:
    """One search's scan as small tasks in phases (each phase's after the last's are all done),
    which any threads that call ``help`` share: each task writes only its own slot of the
    results (or its own rows of the distances), so the candidates are the same whichever thread
    ran which. A hybrid search's worker thread starts it and the calling thread joins in once
    its own part is done (``Semantic.ask``) when the scan is large (``semantic.SHARE_ROWS``);
    numpy lets go of the GIL in each task's counting and partitioning."""

    def __init__(self, phases: list[list], rows: int = 0):
        self.rows = rows  # signatures it counts (a help's worth depends on it: ``semantic``)
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
    the first (a partition's rows are in (slot, seq) order); vec0 breaks such ties its own way."""
    import numpy as np

    if len(seqs) <= k:
        return seqs
    bound = np.partition(distances, k - 1)[k - 1]
    below = np.flatnonzero(distances < bound)
    tied = np.flatnonzero(distances == bound)[: k - len(below)]
    return seqs[np.concatenate((below, tied))]


CHUNK = 8192  # a partition of at most this many rows is counted in one call a step


def _distances(columns, query):
    """The set bits of each row XOR ``query`` (uint16), of a words × rows matrix (a view of
    rows × words transposed is fine). Up to ``CHUNK`` rows, in one call a step for every
    column; beyond, a column at a time, three columns' counts (at most 192) added up in bytes
    before the total: a million facts' first stage read one stream at a time from memory in
    0.85 of the time of every column at once, where a few thousand rows in the cache are
    counted in 0.65 of the time in one call a step (numpy's cost per call)."""
    import numpy as np

    words, rows = columns.shape
    if rows <= CHUNK:
        counts = _bits(np.bitwise_xor(columns, query[:, None], order="C"))
        return np.add.reduce(counts, axis=0, dtype=np.uint16)
    total = np.zeros(rows, dtype=np.uint16)
    xor = np.empty(rows, dtype=np.uint64)
    group = np.empty(rows, dtype=np.uint8)
    counts = np.empty(rows, dtype=np.uint8)
    for start in range(0, words, 3):
        for i in range(start, min(start + 3, words)):
            np.bitwise_xor(columns[i], query[i], out=xor)
            _bits(xor, group if i == start else counts)
            if i != start:
                np.add(group, counts, out=group)
        np.add(total, group, out=total)
    return total


def _bits(words, out=None):
    """The set bits of each uint64 of ``words`` (uint8, the same shape; into ``out``)."""
    import numpy as np

    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words, out=out)
    counted = _byte_bits()[words.view(np.uint8)].reshape(*words.shape, 8)  # numpy 1
    return np.sum(counted, axis=-1, dtype=np.uint8, out=out)


@functools.cache
def _byte_bits():
    """Set bits of each byte value (numpy 1 has no bitwise_count)."""
    import numpy as np

    return np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(
        axis=1, dtype=np.uint8
    )


def arrange(seqs, slots, shards, words) -> Signatures:
    """``Signatures`` of unsorted rows: their seqs, slot names (an object array), shards and
    signatures (rows × bytes, uint8, or rows × words, uint64)."""
    import numpy as np

    names = sorted(set(slots.tolist()))
    codes = np.searchsorted(np.array(names, dtype=object), slots) if names else slots
    codes = np.asarray(codes, dtype=np.int64)
    order = np.lexsort((seqs, codes, shards))
    seqs, shards, codes = seqs[order], np.asarray(shards)[order], codes[order]
    words = np.ascontiguousarray(words[order]).view(np.uint64)
    words = words.reshape(len(seqs), words.shape[-1])  # (rows x words; no rows: 0 x words)
    width = min(SCREEN_WORDS, words.shape[1])
    found = Signatures(
        seqs=seqs,
        head=np.ascontiguousarray(words[:, :width].T),
        tail=np.ascontiguousarray(words[:, width:]),
    )
    starts = np.flatnonzero(np.diff(shards, prepend=-1) | np.diff(codes, prepend=-1))
    ends = [*starts[1:].tolist(), len(seqs)]
    for start, end in zip(starts.tolist(), ends):
        slot, shard = names[codes[start]], int(shards[start])
        found.partitions[slot, shard] = (start, end)
        found.shards[shard] = (found.shards.get(shard, (start, end))[0], end)
    return found


def load(conn, table: str, column: str, bits: int) -> Signatures:
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
    return arrange(seqs, slots, shard_of, words)


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
