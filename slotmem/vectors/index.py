"""The vec0 index (``memory_vec``): SimHash signatures of the stored vectors, partitioned by
slot and by shard, searched by Hamming distance and re-ranked by exact cosine.

It is derived from ``memory_embeddings`` (the source of truth) and can always be rebuilt from
it without a model call. Each fact's signature (``simhash.py``) lives in the partition
(slot, seq modulo ``SHARDS``); a kNN takes the nearest signatures of every partition it scans
(vec0's partition keys apply before k) and re-ranks them by the cosine of the stored vectors (``codec.py``).
Most searches scan a copy of the signatures held in memory instead (``scan.py``, kept fresh by
``signatures``), the same partitions in two stages (the first 384 bits of every signature, then
all 1,024 of the nearest few hundred a partition): exactly vec0's nearest in partitions of up
to 768 rows, nearly always in larger ones; vec0 scans serve the first searches of a
process and the first few after a change (reading the copy costs about ten scans), and searches
inside a write transaction (the copy does not hold its writes).

Why shards and a helper thread: sqlite-vec 0.1.9 has no approximate index. A kNN scans every
vector of the partitions it is asked for, and its top-k costs grow with k times the vectors
scanned, so sixteen scans for 16 candidates each cost less than one scan for 256 (at 10k facts
as at 100k); and one scan uses one core, so a helper thread runs half of them on a second
connection (which pays once the scanned slots are large; at 10k it is neutral). Both can go when
sqlite-vec ships an index that does not scan (its planned IVF/DiskANN work) or a top-k whose cost
does not grow with k: ``benchmarks/bench_semantic.py --layouts`` measures whether they still pay
(docs/benchmarks.md has the last run).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

from ..storage import forks
from ..storage.workers import Worker
from . import codec, scan, simhash

VEC_TABLE = "memory_vec"
MAX_K = 4096  # sqlite-vec's limit on k
BATCH_SIZE = 2048  # rows read and indexed at a time when rebuilding
SHARDS = 16  # partitions per slot (fact seq modulo SHARDS): see the module docstring
READ_AFTER = 8  # searches that scan vec0 before the signatures are read into memory (again)
INDEX_COLUMNS = (
    "fact_seq integer primary key, slot text partition key, shard integer partition key, "
    f"{simhash.VERSION} bit[{simhash.BITS}], chunk_size=256"
)


class VectorIndex:
    """The vec0 table of one file, reached through ``connection()`` (this thread's).

    ``shards`` and ``helper`` exist for the benchmark that checks they still pay; a file's
    index must be read with the shard count it was built with (the default)."""

    def __init__(
        self,
        connection: Callable,
        *,
        shards: int = SHARDS,
        helper: bool = True,
        in_memory: bool = True,
    ):
        self.connection = connection
        self.shards = shards
        self.helper = helper
        self.in_memory = in_memory  # False: every search scans vec0 (the benchmark's "before")
        self._lock = threading.Lock()
        self._pool: tuple[int, Worker] | None = None  # (pid, pool): see _scan
        self._signatures: scan.Signatures | None = None
        self._waited = 0  # searches that scanned vec0 since the copy went stale: see signatures
        self._seen = threading.local()  # this thread's connection, and what it last saw
        forks.register(self._after_fork)

    def _after_fork(self) -> None:
        """In a forked child: a new lock, and no pool (its thread is the parent's)."""
        self._lock, self._pool = threading.Lock(), None

    def exists(self) -> bool:
        """Is there a vector index of this layout (older files indexed float vectors, or
        signatures without shards)?"""
        row = (
            self.connection()
            .execute("SELECT sql FROM sqlite_master WHERE name = ?", (VEC_TABLE,))
            .fetchone()
        )
        return row is not None and INDEX_COLUMNS in row[0]

    def rows(self) -> int:
        return self.connection().execute(f"SELECT count(*) FROM {VEC_TABLE}").fetchone()[0]

    def create(self, model_ref: int | None, dimensions: int) -> None:
        """Inside the caller's transaction: the index anew, filled from the stored vectors of
        the model (``memory_embedding_models.id``), read back as floats."""
        conn = self.connection()
        self._wrote()
        conn.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        conn.execute(f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0({INDEX_COLUMNS})")
        rows = conn.execute(
            """SELECT e.fact_seq, f.slot, e.embedding FROM memory_embeddings e
               JOIN memory_facts f ON f.seq = e.fact_seq
               WHERE e.model = ? AND length(e.embedding) = ?""",
            (model_ref, codec.stored_length(dimensions)),
        )
        while batch := rows.fetchmany(BATCH_SIZE):
            matrix = codec.decode_many([stored for *_, stored in batch], dimensions)
            floats = [row.astype("<f4").tobytes() for row in matrix]
            self.add([(seq, slot, blob) for (seq, slot, _), blob in zip(batch, floats)], dimensions)

    def add(self, rows: list[tuple[int, str, bytes]], dimensions: int) -> None:
        """(seq, slot, float blob) rows into the index, as signatures."""
        signatures = simhash.signatures([blob for *_, blob in rows], dimensions)
        self._wrote()
        self.connection().executemany(
            f"INSERT INTO {VEC_TABLE} (fact_seq, slot, shard, {simhash.VERSION}) "
            "VALUES (?, ?, ?, vec_bit(?))",
            [
                (seq, slot, seq % self.shards, signature)
                for (seq, slot, _), signature in zip(rows, signatures)
            ],
        )

    def remove(self, seqs: list[int]) -> None:
        if seqs:
            marks = ", ".join("?" * len(seqs))
            self._wrote()
            self.connection().execute(f"DELETE FROM {VEC_TABLE} WHERE fact_seq IN ({marks})", seqs)

    def candidates(self, blob: bytes, slots: list[str] | None, k: int) -> list[int]:
        """The seqs of the nearest signatures: at least ``simhash.CANDIDATES`` (or ``k``) per
        slot, spread evenly over the shards."""
        scanner = self.scanner(slots, k)
        if scanner is not None:
            return scanner(blob).run()
        return self.scanned(blob, slots, k)

    def _per_shard(self, k: int) -> int:
        k = max(1, min(int(k), MAX_K))
        return min(-(-max(k, simhash.CANDIDATES) // self.shards), MAX_K)

    def scanner(self, slots: list[str] | None, k: int) -> Callable[[bytes], scan.Scan] | None:
        """``candidates`` from the signatures in memory, as a function of the question's vector
        that reads no SQL and gives the scan to run (``scan.Scan``: any threads may share it,
        as it is numpy's work alone); None when this search must scan vec0 (``scanned``):
        inside a transaction, or while the copy is stale."""
        conn = self.connection()
        if not self.in_memory or conn.in_transaction:  # a transaction's writes are in vec0
            return None
        signatures = self.signatures(conn, patience=READ_AFTER)
        if signatures is None:
            return None
        per_shard, shards = self._per_shard(k), self.shards
        slots = list(slots) if slots else None

        def scanning(blob: bytes) -> scan.Scan:
            [signature] = simhash.signatures([blob], len(blob) // 4)
            return signatures.scan(signature, slots, per_shard, shards)

        return scanning

    def scanned(self, blob: bytes, slots: list[str] | None, k: int) -> list[int]:
        """``candidates`` from vec0's own scans, on this thread's connection."""
        [signature] = simhash.signatures([blob], len(blob) // 4)
        per_shard = self._per_shard(k)
        sql = (
            f"SELECT fact_seq FROM {VEC_TABLE} WHERE {simhash.VERSION} MATCH vec_bit(?) "
            "AND k = ? AND shard = ?"
        )
        partitions: list[tuple] = [(shard,) for shard in range(self.shards)]
        if slots:
            sql += " AND slot = ?"
            partitions = [(shard, slot) for slot in slots for shard in range(self.shards)]
        return self._scan([(sql, (signature, per_shard, *partition)) for partition in partitions])

    def _wrote(self) -> None:
        """This thread's connection changed the index: its next search reads it again (whether
        the transaction commits or not). Other connections learn of it by PRAGMA data_version."""
        self._seen.dirty = True

    def signatures(self, conn, *, patience: int = 0) -> scan.Signatures | None:
        """The index's signatures in memory, read again when they may have changed since this
        thread's connection last looked: another connection (of any process) committed since
        (``PRAGMA data_version``), this one wrote to the index, or this thread's connection is
        new. Each check leaves the copy as fresh as the file, so a copy another thread read
        meanwhile serves this one too. Outside a transaction only (see ``candidates``).

        None (scan vec0) while the copy is missing or stale and fewer than ``patience``
        searches have asked since: reading it costs about ten vec0 scans, so a process that
        searches a few times between writes scans vec0 as before."""
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        seen = self._seen
        with self._lock:
            if (
                self._signatures is None
                or getattr(seen, "conn", None) is not conn
                or seen.version != version
                or getattr(seen, "dirty", False)
            ):
                self._waited += 1
                if self._waited <= patience:
                    return None
                self._signatures = scan.load(conn, VEC_TABLE, simhash.VERSION, simhash.BITS)
            seen.conn, seen.version, seen.dirty = conn, version, False
            self._waited = 0
            return self._signatures

    def _scan(self, scans: list[tuple[str, tuple]]) -> list[int]:
        """The fact seqs the vec0 scans return, half of the scans run by a helper thread on its
        own connection (one scan uses one core). Serial on one core, and inside a transaction,
        whose writes another connection would not see."""

        def run(part):
            conn = self.connection()
            return [seq for query, params in part for (seq,) in conn.execute(query, params)]

        conn = self.connection()
        if not self.helper or len(scans) < 2 or (os.cpu_count() or 1) < 2 or conn.in_transaction:
            return run(scans)
        with self._lock:
            if self._pool is None or self._pool[0] != os.getpid():  # a fork has no threads
                self._pool = os.getpid(), Worker("slotmem-scan")
            pool = self._pool[1]
        other = pool.submit(lambda: run(scans[1::2]))
        assert other is not None
        return run(scans[::2]) + other.result()

    def close(self) -> None:
        """Stop the helper thread (its connection is closed with the others) and let the
        signatures in memory go (a reopened store reads them again)."""
        pool, self._pool = self._pool, None
        self._signatures = None
        if pool and pool[0] == os.getpid():
            pool[1].shutdown()
