"""The optional semantic leg: embeddings through llm, a sqlite-vec index in the same file.

``memory_embeddings`` (fact seq, model, dimensions, content hash, float32 blob) is the source of
truth; ``memory_vec``, a ``vec0`` table, is derived from it and rebuilt by ``reindex``. Vectors
of two models are never mixed: the file names one model (``memory_settings``), and switching
models is an explicit ``reindex --model``.

The index holds a signature of each vector (``simhash.py``: 1,024 sign bits of random
projections, 128 bytes instead of 1,536), partitioned by slot and by shard (the fact's seq
modulo ``SHARDS``). A kNN takes the nearest signatures of each partition it scans,
``simhash.CANDIDATES`` (or k, when more are asked for) per slot spread evenly over the shards,
and the exact cosine distance, from the float vectors in ``memory_embeddings``, re-ranks them.
sqlite-vec 0.1.9 scans every vector of the partitions it is asked for, at a cost that grows
with k times the facts scanned: sixteen scans for 16 candidates each cost less than one for
256 and find as many of the true neighbours. With ``_scan``'s helper thread, hybrid search over
all 100k facts of bench_semantic.py took 0.44-0.75 times as long as with the previous index
(2,048-bit signatures, one scan per slot for 64) and found more of the true 10 nearest.
Scanning float vectors instead took 90-110 ms at 100k facts of 384 dimensions.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from . import simhash
from .errors import SlotmemError

log = logging.getLogger("slotmem")

VEC_TABLE = "memory_vec"
MAX_K = 4096  # sqlite-vec's limit on k
BATCH_SIZE = 256
RECENT_QUERIES = 64  # query vectors remembered (oldest out first)
SHARDS = 16  # index partitions per slot (fact seq modulo SHARDS): see the module docstring
INDEX_COLUMNS = (f"fact_seq integer primary key, slot text partition key, shard integer partition key, "
                 f"{simhash.VERSION} bit[{simhash.BITS}], chunk_size=256")  # fmt: skip


def _embedders():
    from . import embedders  # imports llm: only when the semantic leg is used

    return embedders


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class Semantic:
    """The semantic state of one Store."""

    def __init__(self, store):
        self.store = store
        self._models: dict[str, object] = {}
        self._queries: dict[tuple[str, str], bytes | None] = {}  # recent query vectors
        self._lock = threading.Lock()
        self._helper: tuple[int, ThreadPoolExecutor] | None = None  # (pid, pool): see _scan

    @property
    def conn(self):
        return self.store.conn

    # -- settings and state -----------------------------------------------------------------
    def setting(self, name: str) -> str | None:
        row = self.conn.execute("SELECT value FROM memory_settings WHERE name = ?", (name,)).fetchone()
        return None if row is None else row[0]

    def _set(self, name: str, value) -> None:
        self.conn.execute(
            "INSERT INTO memory_settings VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, str(value)),
        )

    def model_id(self) -> str | None:
        return self.setting("embedding_model")

    def dimensions(self) -> int | None:
        value = self.setting("embedding_dimensions")
        return None if value is None else int(value)

    def has_index(self) -> bool:
        """Is there a vector index of this slotmem's kind (older files indexed float vectors,
        or signatures without shards)?"""
        row = self.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (VEC_TABLE,)).fetchone()
        return row is not None and INDEX_COLUMNS in row[0]

    def off_reason(self) -> str | None:
        """None when hybrid search is on, else the one line that says why it is off."""
        if self.model_id() is None:
            return "semantic search is not enabled for this file: run 'slotmem reindex'"
        error = self.store._connections.vec_error()
        if error:
            return error
        if not self.has_index():
            return "the vector index is missing or from an older slotmem: run 'slotmem reindex'"
        return None

    def model(self, model_id: str | None = None):
        model_id = model_id or self.model_id() or _embedders().DEFAULT_MODEL
        if model_id not in self._models:
            self._models[model_id] = _embedders().resolve(model_id)
        return self._models[model_id]

    # -- building the index -----------------------------------------------------------------
    def reindex(self, model_id: str | None = None, *, batch_size: int = BATCH_SIZE,
                progress: Callable[[int], None] | None = None, total: Callable[[int], None] | None = None) -> dict:  # fmt: skip
        """Embed every fact that lacks a current vector (all of them when the model changes),
        in batches, each batch in its own short transaction; lexical search serves meanwhile."""
        error = self.store._connections.vec_error()
        if error:
            raise SlotmemError(f"cannot build the vector index: {error}")
        current = self.model_id()
        model_id = model_id or current or _embedders().DEFAULT_MODEL
        model = self.model(model_id)
        dimensions = self._probe(model)
        switching = (model_id, dimensions) != (current, self.dimensions())
        with self.store.transaction():
            self._set("embedding_model", model_id)
            self._set("embedding_dimensions", dimensions)
            if switching or self._drifted():
                self._create_index(dimensions)  # derived: rebuilt from memory_embeddings
        todo = self._stale(model_id)
        if total:
            total(len(todo))
        done = unusable = 0
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            blobs = _embedders().embed(model, [value for _, _, value in batch])
            with self.store.transaction():
                if self.model_id() != model_id:
                    raise SlotmemError("another process switched the embedding model; run reindex again")
                self.write(
                    [(seq, slot, content_hash(value), blob) for (seq, slot, value), blob in zip(batch, blobs)],
                    model_id, dimensions,
                )  # fmt: skip
            done += len(batch)
            unusable += sum(blob is None for blob in blobs)
            if progress:
                progress(len(batch))
        return {"model": model_id, "dimensions": dimensions, "switched": switching and current is not None,
                "embedded": done, "unusable": unusable}  # fmt: skip

    def _probe(self, model) -> int:
        [blob] = _embedders().embed(model, ["dimension probe"])
        if blob is None:
            raise SlotmemError(f"embedding model {model.model_id!r} returned an unusable vector")
        return len(blob) // 4

    def rebuild_index(self) -> bool:
        """Inside the caller's transaction: the vector index anew from memory_embeddings (no
        model call). False when there is nothing to rebuild (semantic search off, or no
        sqlite-vec in this process)."""
        if self.model_id() is None or self.store._connections.vec_error():
            return False
        self._create_index(self.dimensions())
        return True

    def _create_index(self, dimensions: int) -> None:
        """(Re)create the vec0 index and fill it from the current model's stored vectors."""
        self.conn.execute(f"DROP TABLE IF EXISTS {VEC_TABLE}")
        self.conn.execute(f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0({INDEX_COLUMNS})")
        rows = self.conn.execute(
            """SELECT e.fact_seq, f.slot, e.embedding FROM memory_embeddings e
               JOIN memory_facts f ON f.seq = e.fact_seq
               WHERE e.model = ? AND e.dimensions = ? AND length(e.embedding) > 0""",
            (self.model_id(), dimensions),
        )
        while batch := rows.fetchmany(BATCH_SIZE * 8):
            self._index([(seq, slot, blob) for seq, slot, blob in batch], dimensions)

    def _index(self, rows: list[tuple[int, str, bytes]], dimensions: int) -> None:
        """(seq, slot, float blob) rows into the vec0 index, as signatures."""
        signatures = simhash.signatures([blob for *_, blob in rows], dimensions)
        self.conn.executemany(
            f"INSERT INTO {VEC_TABLE} (fact_seq, slot, shard, {simhash.VERSION}) VALUES (?, ?, ?, vec_bit(?))",
            [(seq, slot, seq % SHARDS, signature) for (seq, slot, _), signature in zip(rows, signatures)],
        )

    def _drifted(self) -> bool:
        """Is the index missing, of an older kind, or out of step with memory_embeddings (as
        when a process without sqlite-vec deleted facts whose vectors it still holds)?"""
        if not self.has_index():
            return True
        indexed = self.conn.execute(f"SELECT count(*) FROM {VEC_TABLE}").fetchone()[0]
        stored = self.conn.execute(
            "SELECT count(*) FROM memory_embeddings WHERE model = ? AND length(embedding) > 0",
            (self.model_id(),),
        ).fetchone()[0]
        return indexed != stored

    def _stale(self, model_id: str) -> list[tuple[int, str, str]]:
        rows = self.conn.execute(
            """SELECT f.seq, f.slot, f.value, e.model, e.content_hash FROM memory_facts f
               LEFT JOIN memory_embeddings e ON e.fact_seq = f.seq ORDER BY f.seq"""
        )
        return [
            (seq, slot, value)
            for seq, slot, value, model, digest in rows
            if model != model_id or digest != content_hash(value)
        ]

    # -- keeping it in sync with writes -----------------------------------------------------
    def prepare(self, values: list[str]):
        """Vectors for values about to be written, computed before the write transaction.
        None when the leg is off or the model fails (the facts are written, lexical only, and
        'slotmem reindex' embeds them later: never a half-written fact)."""
        if not values or self.off_reason() is not None:
            return None
        try:
            blobs = _embedders().embed(self.model(), values)
        except SlotmemError as e:
            log.warning("facts written without embeddings (%s); run 'slotmem reindex'", e)
            return None
        return self.model_id(), self.dimensions(), blobs

    def write(self, rows: Iterable[tuple[int, str, str, bytes | None]], model_id: str,
              dimensions: int) -> None:  # fmt: skip
        """Inside the caller's transaction: (seq, slot, hash, blob) rows into both tables."""
        rows = list(rows)
        now = self.store.clock()
        self.conn.executemany(
            """INSERT INTO memory_embeddings VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (fact_seq) DO UPDATE SET
               model = excluded.model, dimensions = excluded.dimensions,
               content_hash = excluded.content_hash, embedding = excluded.embedding,
               embedded_at = excluded.embedded_at""",
            [(seq, model_id, dimensions, digest, blob or b"", now) for seq, _, digest, blob in rows],
        )
        self.forget([seq for seq, *_ in rows])  # vec0 has no upsert: delete, then insert
        self._index([(seq, slot, blob) for seq, slot, _, blob in rows if blob], dimensions)

    def forget(self, seqs: list[int]) -> None:
        if seqs and self.has_index() and self.store._connections.vec_error() is None:
            marks = ", ".join("?" * len(seqs))
            self.conn.execute(f"DELETE FROM {VEC_TABLE} WHERE fact_seq IN ({marks})", seqs)

    # -- searching --------------------------------------------------------------------------
    def query_vector(self, text: str) -> bytes | None:
        """The query's vector; None when there is nothing to embed or the model fails (the
        search then stands on its lexical leg, with a logged warning)."""
        text = " ".join(str(text).split())[:4000]
        if not text:
            return None
        model = self.model()
        key = (model.model_id, text)  # context contributors ask each slot the same
        blob = self._queries.get(key)
        if blob is None:
            try:
                [blob] = _embedders().embed(model, [text])
            except SlotmemError as e:
                log.warning("semantic leg skipped for this search (%s)", e)
                return None
            with self._lock:
                if len(self._queries) >= RECENT_QUERIES:
                    self._queries.pop(next(iter(self._queries)))
                self._queries[key] = blob
        return blob

    def knn(self, blob: bytes, slots: list[str] | None, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest facts by cosine distance, best first: the nearest signatures of each
        shard of each asked slot (vec0's partition keys, applied before k), re-ranked by their
        float vectors."""
        k = max(1, min(int(k), MAX_K))
        [signature] = simhash.signatures([blob], len(blob) // 4)
        per_shard = min(-(-max(k, simhash.CANDIDATES) // SHARDS), MAX_K)
        sql = f"SELECT fact_seq FROM {VEC_TABLE} WHERE {simhash.VERSION} MATCH vec_bit(?) AND k = ? AND shard = ?"
        partitions = [(shard,) for shard in range(SHARDS)]
        if slots:
            sql += " AND slot = ?"
            partitions = [(shard, slot) for slot in slots for shard in range(SHARDS)]
        scans = [(sql, (signature, per_shard, *partition)) for partition in partitions]
        return sorted(self.distances(blob, self._scan(scans)).items(), key=lambda item: item[1])[:k]

    def _scan(self, scans: list[tuple[str, tuple]]) -> list[int]:
        """The fact seqs the vec0 scans return, half of the scans run by a helper thread on its
        own connection: one scan uses one core (hybrid at 100k facts: 0.8 times the time on two
        cores). Serial on one core, and inside a transaction, whose writes another connection
        would not see."""

        def run(part):
            return [seq for query, params in part for (seq,) in self.conn.execute(query, params)]

        if len(scans) < 2 or (os.cpu_count() or 1) < 2 or self.conn.in_transaction:
            return run(scans)
        with self._lock:
            if self._helper is None or self._helper[0] != os.getpid():  # a fork has no threads
                self._helper = os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="slotmem-scan")
            helper = self._helper[1]
        other = helper.submit(run, scans[1::2])
        return run(scans[::2]) + other.result()

    def close(self) -> None:
        """Stop the helper thread (its connection is closed with the store's)."""
        helper, self._helper = self._helper, None
        if helper and helper[0] == os.getpid():
            helper[1].shutdown()

    def distances(self, blob: bytes, seqs: list[int], chunk: int = 500) -> dict[int, float]:
        """Cosine distance of the query to the given facts, from their stored float vectors
        (unit length, as ``embedders.to_blob`` writes them and the query's)."""
        import numpy as np

        query, found, model_id = np.frombuffer(blob, dtype="<f4"), {}, self.model_id()
        for start in range(0, len(seqs), chunk):
            part = seqs[start : start + chunk]
            rows = self.conn.execute(
                f"""SELECT fact_seq, embedding FROM memory_embeddings
                    WHERE fact_seq IN ({", ".join("?" * len(part))}) AND model = ?
                    AND length(embedding) = ?""",
                [*part, model_id, len(blob)],
            ).fetchall()
            if rows:
                vectors = np.frombuffer(b"".join(vector for _, vector in rows), dtype="<f4")
                cosines = vectors.reshape(len(rows), -1) @ query
                found.update(zip([seq for seq, _ in rows], (1.0 - cosines).tolist()))
        return found

    # -- reporting --------------------------------------------------------------------------
    def status(self) -> dict:
        model_id = self.model_id()
        conn = self.conn
        facts = conn.execute("SELECT count(*) FROM memory_facts").fetchone()[0]
        current = conn.execute(
            "SELECT count(*), sum(length(embedding) = 0) FROM memory_embeddings WHERE model IS ?",
            (model_id,),
        ).fetchone()
        vec_error = self.store._connections.vec_error()
        vec_rows = None
        if vec_error is None and self.has_index():
            vec_rows = conn.execute(f"SELECT count(*) FROM {VEC_TABLE}").fetchone()[0]
        reason = self.off_reason()
        return {
            "enabled": model_id is not None,
            "active": reason is None,
            "reason": reason or "",
            "model": model_id,
            "dimensions": self.dimensions(),
            "extension": "loaded" if vec_error is None else vec_error,
            "facts": facts,
            "embedded": (current[0] or 0) - (current[1] or 0),
            "unusable": current[1] or 0,
            "stale": len(self._stale(model_id)) if model_id else 0,
            "index_rows": vec_rows,
        }
