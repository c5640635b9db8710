"""The semantic leg of a PostgreSQL memory: the file's (slotmem.vectors.semantic.Semantic), its
vectors in PostgreSQL and their index pgvector's HNSW.

What is embedded, by which model, how a question is embedded and remembered, and how a write
prepares its vectors before its transaction are the file's own (this class is a Semantic). Only
the SQL is PostgreSQL's: ``memory_embeddings`` holds each fact's vector in the file's stored
form (int8 and its scale: slotmem.vectors.codec), of the memory's one model (named once in
``memory_embedding_models``, chosen in ``memory_settings``); the pgvector column ``vec`` holds
it read back at unit length, indexed by HNSW (cosine). A kNN takes the index's nearest
``simhash.CANDIDATES`` (per asked slot, or ``k`` when more) and re-ranks them by the exact
cosine of the stored vectors, as the file re-ranks its signatures' candidates: the same numpy
arithmetic over the same bytes, so the distances, not only the order, are the file's.

The column and its index are made by the first ``reindex`` (``CREATE EXTENSION vector`` when
the role may): a server without pgvector keeps the rest of a memory, lexical only.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable

from ..errors import SlotmemError
from ..records import Fact
from ..vectors import codec, simhash, texts
from ..vectors.semantic import BACKFILL, Prepared, Semantic, content_hash, embedders
from . import server

INDEX = "memory_embeddings_vec"
BATCH_SIZE = 256
EF_SEARCH_MAX = 1000  # pgvector's limit on hnsw.ef_search
NO_PGVECTOR = (
    "the pgvector extension is not available on this server (install pgvector, or have a "
    "superuser run CREATE EXTENSION vector)"
)


def vector_text(row) -> str:
    """A unit float32 vector (numpy row) as pgvector's text form."""
    return "[" + ",".join(format(float(x), ".9g") for x in row) + "]"


class PgVectors(Semantic):
    """The semantic state of one PostgreSQL memory: its model, its vectors and their index."""

    def __init__(self, connections, clock: Callable[[], int], memory: str, readonly: bool):
        super().__init__(connections, clock)
        self.memory = memory
        self.readonly = readonly
        self._extension: str | None = None  # the schema pgvector's type lives in, once known
        # What each connection's session has for the HNSW scan (ef_search, iterative_scan):
        # set once per connection rather than in a transaction around every kNN.
        self._hnsw: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._settled = threading.local()  # this thread's search's settings (``settled``)

    # -- settings and state -----------------------------------------------------------------
    @contextlib.contextmanager
    def settled(self):
        """Within, on this thread: the memory's settings and whether its index exists, read in
        one round trip and not again (one search; the next reads them anew, so what another
        process changed is seen by it). A transaction still reads them itself."""
        local = self._settled
        if getattr(local, "state", None) is not None:
            yield
            return
        row = self.conn.execute(
            """SELECT (SELECT json_object_agg(name, value) FROM memory_settings) AS settings,
                      EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema()
                              AND indexname = %s) AS indexed""",
            (INDEX,),
        ).fetchone()
        local.state = (row["settings"] or {}, row["indexed"])
        try:
            yield
        finally:
            local.state = None

    def _state(self):
        state = getattr(self._settled, "state", None)
        return None if self.conn.info.transaction_status != 0 else state

    def setting(self, name: str) -> str | None:
        state = self._state()
        if state is not None:
            return state[0].get(name)
        row = self.conn.execute(
            "SELECT value FROM memory_settings WHERE name = %s", (name,)
        ).fetchone()
        return None if row is None else row["value"]

    def set_setting(self, name: str, value) -> None:
        self.conn.execute(
            "INSERT INTO memory_settings VALUES (%s, %s) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, str(value)),
        )

    def model_ref(
        self, model_id: str | None = None, dimensions: int | None = None, *, create: bool = False
    ) -> int | None:
        model_id = model_id or self.model_id()
        dimensions = dimensions or self.dimensions()
        if model_id is None or dimensions is None:
            return None
        key = (model_id, int(dimensions))
        if key in self._refs:  # remembered as the file's: a committed id is never reused
            return self._refs[key]
        sql = "SELECT id FROM memory_embedding_models WHERE model = %s AND dimensions = %s"
        row = self.conn.execute(sql, key).fetchone()
        if row is None and create:
            row = self.conn.execute(
                "INSERT INTO memory_embedding_models (model, dimensions) VALUES (%s, %s) "
                "ON CONFLICT (model, dimensions) DO UPDATE SET model = excluded.model "
                "RETURNING id",
                key,
            ).fetchone()
        if row is None:
            return None
        if self.conn.info.transaction_status == 0:  # committed (else it may be rolled back)
            self._refs[key] = row["id"]
        return row["id"]

    def extension(self) -> str | None:
        """The schema of pgvector's types when the extension is installed in this database."""
        if self._extension is None:
            row = self.conn.execute(
                "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n "
                "ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
            ).fetchone()
            self._extension = None if row is None else row["nspname"]
        return self._extension

    def vec_error(self) -> str | None:
        """Why this server cannot hold the vector index (None: pgvector is there, or can be
        created by reindex)."""
        if self.extension() is not None:
            return None
        row = self.conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        return None if row is not None else NO_PGVECTOR

    def has_index(self) -> bool:
        state = self._state()
        if state is not None:
            return state[1] and self.extension() is not None
        row = self.conn.execute(
            "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = %s",
            (INDEX,),
        ).fetchone()
        return row is not None and self.extension() is not None

    def _qualified(self, name: str) -> str:
        return f'"{self.extension()}".{name}'

    # -- writing vectors ----------------------------------------------------------------------
    def prepare(self, items) -> Prepared | None:
        """The file's prepare; on a memory without semantic search, one round trip to say so
        (a write pays it)."""
        if self.model_id() is None:
            return None
        return super().prepare(items)

    def write(self, prepared: Prepared | None, facts: list[Fact]) -> None:
        """Inside the caller's write transaction: the prepared vectors of these facts."""
        if prepared is None or not facts:
            return
        by_id = {fact.id: fact for fact in facts}
        rows = []
        found = self.conn.execute(
            "SELECT id, seq FROM memory_facts WHERE id = ANY(%s)", (list(by_id),)
        ).fetchall()
        for row in found:
            fact = by_id[row["id"]]
            text = texts.document(prepared.model_id, fact.key, fact.value)
            if text in prepared.blobs:
                rows.append((row["seq"], fact.slot, content_hash(text), prepared.blobs[text]))
        self.write_rows(rows, prepared.model_id, prepared.dimensions)

    def write_rows(
        self, rows: list[tuple[int, str, int, bytes | None]], model_id: str, dimensions: int
    ) -> None:
        """Inside the caller's transaction: (seq, slot, hash, float blob) rows, stored as the
        file stores them, and read back at unit length into the indexed column."""
        if not rows:
            return
        ref = self.model_ref(model_id, dimensions, create=True)
        stored = codec.encode_many([blob for *_, blob in rows])
        vectors: list[str | None] = [None] * len(rows)
        usable = [i for i, value in enumerate(stored) if value]
        if usable:
            matrix = codec.decode_many([stored[i] for i in usable], dimensions)
            for i, row in zip(usable, matrix):
                vectors[i] = vector_text(row)
        indexed = self.has_index()
        column = ", vec" if indexed else ""
        value_marks = f", %s::{self._qualified('vector')}" if indexed else ""
        with self.conn.cursor() as cur:
            cur.executemany(
                f"""INSERT INTO memory_embeddings (fact_seq, model, content_hash, embedding{column})
                    VALUES (%s, %s, %s, %s{value_marks})
                    ON CONFLICT (fact_seq) DO UPDATE SET model = excluded.model,
                    content_hash = excluded.content_hash, embedding = excluded.embedding
                    {", vec = excluded.vec" if indexed else ""}""",
                [
                    (seq, ref, digest, value, *([vector] if indexed else []))
                    for (seq, _, digest, _), value, vector in zip(rows, stored, vectors)
                ],
            )

    def forget(self, seqs: list[int]) -> None:
        """Nothing to do: a fact's vector goes with it (ON DELETE CASCADE)."""

    def backfill(self, limit: int = BACKFILL) -> int:
        """The file's backfill: up to ``limit`` facts without a vector of the memory's model
        embedded before a search, in one short transaction. Never raises."""
        model_id, dimensions = self.model_id(), self.dimensions()
        if self.readonly or model_id is None or dimensions is None:
            return 0
        conn = self.conn
        if conn.info.transaction_status != 0:  # inside the caller's transaction
            return 0
        found = conn.execute(  # and the newest seq, in the same snapshot: one round trip
            """SELECT t.top, r.seq, r.slot, r.key, r.value
               FROM (SELECT max(seq) AS top FROM memory_facts) AS t
               LEFT JOIN LATERAL (
                   SELECT f.seq, f.slot, f.key, f.value FROM memory_facts f
                   LEFT JOIN memory_embeddings e ON e.fact_seq = f.seq AND e.model = %s
                   WHERE f.seq > %s AND e.fact_seq IS NULL ORDER BY f.seq LIMIT %s) AS r ON true
               ORDER BY r.seq""",
            (self.model_ref(model_id, dimensions), self._checked, max(1, limit)),
        ).fetchall()
        rows = [row for row in found if row["seq"] is not None]
        if not rows:
            self._checked = max(self._checked, found[0]["top"] or 0)
            return 0
        documents = [texts.document(model_id, row["key"], row["value"]) for row in rows]
        try:
            blobs = embedders().embed(self.model(), documents)
        except SlotmemError:
            return 0
        if any(blob is not None and len(blob) != 4 * dimensions for blob in blobs):
            return 0
        try:
            with conn.transaction():
                if self.model_id() != model_id:
                    return 0
                self.write_rows(
                    [
                        (row["seq"], row["slot"], content_hash(text), blob)
                        for row, text, blob in zip(rows, documents, blobs)
                    ],
                    model_id,
                    dimensions,
                )
        except Exception as e:  # noqa: BLE001 - a search never fails for this
            self._warn_once(f"facts without a vector were not embedded here ({e})")
            return 0
        return len(rows)

    # -- the index ----------------------------------------------------------------------------
    def rebuild_index(self) -> bool:
        """Inside the caller's transaction: the indexed column and its HNSW index anew, from
        the stored vectors (no model call). False when semantic search is off."""
        model_id, dimensions = self.model_id(), self.dimensions()
        if model_id is None or dimensions is None or self.vec_error():
            return False
        conn = self.conn
        if self.extension() is None:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            self._extension = None
        conn.execute(f"DROP INDEX IF EXISTS {INDEX}")
        conn.execute("ALTER TABLE memory_embeddings DROP COLUMN IF EXISTS vec")
        conn.execute(
            f"ALTER TABLE memory_embeddings ADD COLUMN vec {self._qualified('vector')}"
            f"({int(dimensions)})"
        )
        ref = self.model_ref(model_id, dimensions)
        found = conn.execute(
            "SELECT fact_seq, embedding FROM memory_embeddings WHERE model = %s "
            "AND length(embedding) = %s",
            (ref, codec.stored_length(dimensions)),
        ).fetchall()
        if found:
            matrix = codec.decode_many([bytes(row["embedding"]) for row in found], dimensions)
            with conn.cursor() as cur:
                cur.executemany(
                    f"UPDATE memory_embeddings SET vec = %s::{self._qualified('vector')} "
                    "WHERE fact_seq = %s",
                    [(vector_text(v), row["fact_seq"]) for row, v in zip(found, matrix)],
                )
        conn.execute(
            f"CREATE INDEX {INDEX} ON memory_embeddings USING hnsw "
            f"(vec {self._qualified('vector_cosine_ops')})"
        )
        return True

    def candidates(self, blob: bytes, slots: list[str] | None, k: int) -> list[int]:
        """The HNSW index's nearest facts: ``max(k, simhash.CANDIDATES)`` of each asked slot
        (of all, when none is asked)."""
        import numpy as np

        wanted = max(int(k), simhash.CANDIDATES)
        vector = vector_text(np.frombuffer(blob, dtype="<f4"))
        conn = self.conn
        sql = (
            f"SELECT e.fact_seq FROM memory_embeddings e{{join}} "
            f"ORDER BY e.vec OPERATOR({self._qualified('<=>')}) "
            f"%(q)s::{self._qualified('vector')} LIMIT %(n)s"
        )
        found: list[int] = []
        ef = min(wanted, EF_SEARCH_MAX)
        settings = f"hnsw.ef_search = {ef}; SET{{local}} hnsw.iterative_scan = relaxed_order"
        with contextlib.ExitStack() as stack:
            if conn.info.transaction_status != 0:  # the caller's transaction: for it only
                conn.execute("SET LOCAL " + settings.format(local=" LOCAL"))
            elif self._hnsw.get(conn) != ef:  # this session's, kept (autocommit: no rollback)
                conn.execute("SET " + settings.format(local=""))
                self._hnsw[conn] = ef
            asked: list[str | None] = list(slots) if slots else [None]
            if len(asked) > 1:  # every slot's candidates from one snapshot
                stack.enter_context(conn.transaction())
            for slot in asked:
                join = "" if slot is None else " JOIN memory_facts f ON f.seq = e.fact_seq"
                join += "" if slot is None else " WHERE f.slot = %(slot)s"
                rows = conn.execute(
                    sql.replace("{join}", join), {"q": vector, "n": wanted, "slot": slot}
                )
                found.extend(row["fact_seq"] for row in rows)
        return found

    def knn(self, blob: bytes, slots: list[str] | None, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest facts by cosine distance, best first: the index's candidates
        re-ranked by their stored vectors (equal distances: the older fact first, as the
        file's)."""
        if not self.has_index():
            return []
        candidates = sorted(set(self.candidates(blob, slots, k)))
        ranked = sorted(
            self.distances(blob, candidates).items(), key=lambda item: (item[1], item[0])
        )
        return ranked[: max(1, k)]

    def _matrix(self, seqs: list[int], chunk: int = 500):
        """([seq] ascending, unit float32 matrix) of the stored vectors of the memory's model."""
        ref, dimensions = self.model_ref(), self.dimensions() or 0
        found = self.conn.execute(
            """SELECT fact_seq, embedding FROM memory_embeddings
               WHERE fact_seq = ANY(%s) AND model = %s AND length(embedding) = %s
               ORDER BY fact_seq""",
            (list(seqs), ref, codec.stored_length(dimensions)),
        ).fetchall()
        if not found:
            return [], []
        return [row["fact_seq"] for row in found], codec.decode_many(
            [bytes(row["embedding"]) for row in found], dimensions
        )

    # -- maintenance --------------------------------------------------------------------------
    def reindex(self, model_id: str | None = None, **options) -> dict:
        """As the file's reindex (slotmem.vectors.maintenance): embed every fact that lacks a
        current vector (all of them when the model changes), a batch per short transaction.
        A switch of model drops the old model's vectors and makes the index anew. Options:
        ``batch_size``, and callables ``total`` (told how many) and ``progress`` (each batch)."""
        batch_size: int = options.pop("batch_size", BATCH_SIZE)
        progress: Callable[[int], None] | None = options.pop("progress", None)
        total: Callable[[int], None] | None = options.pop("total", None)
        if options:
            raise TypeError(f"unknown options {sorted(options)}")
        if self.readonly:
            from ..errors import ReadOnlyDatabase

            raise ReadOnlyDatabase(f"{self.memory} is open read-only")
        error = self.vec_error()
        if error:
            raise SlotmemError(f"cannot build the vector index: {error}")
        current = self.model_id()
        model_id = model_id or current or embedders().DEFAULT_MODEL
        model = self.model(model_id)
        [probe] = embedders().embed(model, ["dimension probe"])
        if probe is None:
            raise SlotmemError(f"embedding model {model_id!r} returned an unusable vector")
        dimensions = len(probe) // 4
        switching = (model_id, dimensions) != (current, self.dimensions())
        conn = self.conn
        with server.exclusive(conn, self.memory):
            self.set_setting("embedding_model", model_id)
            self.set_setting("embedding_dimensions", dimensions)
            if switching:
                conn.execute("DELETE FROM memory_embeddings")  # another model's: never ranked
            if switching or not self.has_index():
                self.rebuild_index()
        todo = self.stale(model_id)
        if total:
            total(len(todo))
        done = unusable = 0
        for start in range(0, len(todo), batch_size):
            batch = todo[start : start + batch_size]
            blobs = embedders().embed(model, [text for _, _, text in batch])
            with server.exclusive(conn, self.memory):
                if self.model_id() != model_id:
                    raise SlotmemError(
                        "another process switched the embedding model; run reindex again"
                    )
                self.write_rows(
                    [
                        (seq, slot, content_hash(text), blob)
                        for (seq, slot, text), blob in zip(batch, blobs)
                    ],
                    model_id,
                    dimensions,
                )
            done += len(batch)
            unusable += sum(blob is None for blob in blobs)
            if progress:
                progress(len(batch))
        return {
            "model": model_id,
            "dimensions": dimensions,
            "switched": switching and current is not None,
            "embedded": done,
            "unusable": unusable,
        }

    def newest(self, limit: int) -> list[tuple[str, str, str, int]]:
        found = self.conn.execute(
            """SELECT f.slot, f.key, f.value, v.fact_seq FROM memory_facts f
               JOIN memory_embeddings v ON v.fact_seq = f.seq AND v.model = %s
               WHERE f.expires_at IS NULL OR f.expires_at > %s
               ORDER BY f.updated_at DESC, f.seq DESC LIMIT %s""",
            (self.model_ref(), self.clock(), limit),
        )
        return [(row["slot"], row["key"], row["value"], row["fact_seq"]) for row in found]

    def stale(self, model_id: str) -> list[tuple[int, str, str]]:
        """(seq, slot, text to embed) of the facts whose vector is missing, of another model,
        or of other text (slotmem.vectors.maintenance.stale)."""
        rows = self.conn.execute(
            """SELECT f.seq, f.slot, f.key, f.value, m.model, e.content_hash
               FROM memory_facts f LEFT JOIN memory_embeddings e ON e.fact_seq = f.seq
               LEFT JOIN memory_embedding_models m ON m.id = e.model ORDER BY f.seq"""
        )
        found = []
        for row in rows:
            text = texts.document(model_id, row["key"], row["value"])
            if row["model"] != model_id or row["content_hash"] != content_hash(text):
                found.append((row["seq"], row["slot"], text))
        return found

    def status(self) -> dict:
        model_id = self.model_id()
        conn = self.conn
        facts = conn.execute("SELECT count(*) AS n FROM memory_facts").fetchone()["n"]
        current = conn.execute(
            """SELECT count(*) AS n, count(*) FILTER (WHERE length(embedding) = 0) AS unusable
               FROM memory_embeddings WHERE model IS NOT DISTINCT FROM %s""",
            (self.model_ref(),),
        ).fetchone()
        vec_error = self.vec_error()
        index_rows = None
        if self.has_index():
            index_rows = conn.execute(
                "SELECT count(*) AS n FROM memory_embeddings WHERE vec IS NOT NULL"
            ).fetchone()["n"]
        reason = self.off_reason()
        return {
            "enabled": model_id is not None,
            "active": reason is None,
            "reason": reason or "",
            "model": model_id,
            "dimensions": self.dimensions(),
            "extension": "pgvector" if vec_error is None else vec_error,
            "facts": facts,
            "embedded": current["n"] - current["unusable"],
            "unusable": current["unusable"],
            "stale": len(self.stale(model_id)) if model_id else 0,
            "index_rows": index_rows,
        }

    def checks(self) -> list[dict]:
        """The doctor's rows about the semantic leg (as the file's)."""
        from ..storage.health import check_row

        state = self.status()
        if not state["enabled"]:
            detail = "off (full-text only): " + (
                self.vec_error() or "enable it with 'slotmem reindex'"
            )
            return [check_row("semantic search", True, detail, "")]
        fresh = state["active"] and not state["stale"]
        detail = state["reason"] or (
            f"{state['model']}, {state['embedded']} vectors, {state['stale']} missing or stale"
        )
        rows = [check_row("semantic search", fresh, detail, "slotmem reindex")]
        if state["active"]:
            error = self.model_error()
            rows.append(
                check_row(
                    "embedding model",
                    error is None,
                    f"{error}; searches stay full-text"
                    if error
                    else f"{state['model']} embeds here",
                    "pip install 'slotmem[semantic]', or 'slotmem reindex -m MODEL'",
                )
            )
            rows.append(
                check_row(
                    "vector index in sync",
                    state["index_rows"] == state["embedded"],
                    f"{state['index_rows']} indexed, {state['embedded']} stored",
                    "slotmem doctor --repair",
                )
            )
        return rows
