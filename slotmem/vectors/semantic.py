"""The optional semantic leg of one file: embeddings through llm, a sqlite-vec index beside them.

``memory_embeddings`` (fact seq, model, content hash, int8 vector with its scale: ``codec.py``)
is the source of truth, its models named once in ``memory_embedding_models``; the vec0 index
(``index.py``) is derived from it. Vectors of two models are never mixed:
the file names one model (``memory_settings``), and switching models is an explicit
``reindex --model`` (``maintenance.py``). Handed the file's connections and a clock, never the
Store.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import SlotmemError
from ..records import Fact
from ..safety import embedding as scan_embedding
from ..storage import forks
from ..storage.db import Connections, transaction

if TYPE_CHECKING:
    from ..storage.workers import Worker
    from .index import VectorIndex


RECENT_QUERIES = 64  # query vectors remembered (oldest out first)
MAX_QUERY_CHARS = 4000
CONCURRENT = True  # False: a search's question is embedded on its calling thread (tests compare)
SHARE_SCAN = True  # False: the calling thread waits for the worker's scan instead of joining in
# signatures a scan counts before the calling thread joins in: below, the two threads' turns at
# the GIL over small tasks cost more than the second core saves (docs/benchmarks.md, "Hybrid at
# 100k: the scan unshared, the words alone sooner")
SHARE_ROWS = 250_000
BACKFILL = 32  # facts without a vector embedded, at most, before a search (see ``backfill``)
NO_VECTOR = (
    "facts written here get no vector ({reason}); semantic search is on for this file, so "
    "install what it needs here (pip install 'slotmem[semantic]'): until a process that can "
    "embed searches the file, they are found by their words alone"
)


def embedders():
    from . import embedders as module  # imports llm: only when the semantic leg is used

    return module


@functools.cache
def _has_numpy() -> bool:
    """The vector leg ranks with numpy (the semantic extra brings it; an API model does not)."""
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def content_hash(text: str) -> int:
    """The first 6 bytes of the text's sha256, as a signed integer (6 bytes in a row)."""
    import hashlib  # here: a lexical read hashes nothing

    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:6], "big", signed=True)


def keyed(item) -> tuple[str, str]:
    """(key, value) of a fact, an entry with ``key`` and ``value``, a (key, value) pair, or a
    bare value (no key: its vector is left for the next process that embeds to add)."""
    if isinstance(item, str):
        return "", item
    if isinstance(item, tuple):
        return item[0], item[1]
    return item.key, item.value


@dataclass(frozen=True)
class Prepared:
    """Vectors computed before a write transaction: embedded text (``texts.document``) -> blob
    (None: unusable)."""

    model_id: str
    dimensions: int
    blobs: dict[str, bytes | None]


class Semantic:
    """The semantic state of one file: its model, its vectors and their index."""

    def __init__(self, connections: Connections, clock: Callable[[], int]):
        self._connections = connections
        self.clock = clock
        self._models: dict[str, object] = {}
        self._queries: dict[tuple[str, str], bytes | None] = {}  # recent query vectors
        self._warned: set[str] = set()
        self._lock = threading.Lock()
        self._checked = 0  # every fact up to this seq has a vector of the file's model
        self._refs: dict[tuple[str, int], int] = {}  # (model, dimensions) -> its row's id
        self._pool: tuple[int, Worker] | None = None  # (pid, its worker): see ask
        forks.register(self._after_fork)

    def _after_fork(self) -> None:
        self._lock = threading.Lock()  # another thread of the parent may have held it
        self._pool = None  # its thread is the parent's

    @functools.cached_property
    def index(self) -> VectorIndex:
        """The vector index (imported when first used: a lexical read never needs it)."""
        from .index import VectorIndex

        return VectorIndex(self._connections.with_vec)

    @property
    def conn(self):
        return self._connections.get()

    def vec_error(self) -> str | None:
        """Why this thread's connection has no sqlite-vec (None: it has)."""
        return self._connections.vec_error()

    # -- settings and state -----------------------------------------------------------------
    def setting(self, name: str) -> str | None:
        row = self.conn.execute("SELECT value FROM memory_settings WHERE name = ?", (name,))
        found = row.fetchone()
        return None if found is None else found[0]

    def set_setting(self, name: str, value) -> None:
        self.conn.execute(
            "INSERT INTO memory_settings VALUES (?, ?) "
            "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, str(value)),
        )

    def model_id(self) -> str | None:
        return self.setting("embedding_model")

    def dimensions(self) -> int | None:
        value = self.setting("embedding_dimensions")
        return None if value is None else int(value)

    def model_ref(
        self, model_id: str | None = None, dimensions: int | None = None, *, create: bool = False
    ) -> int | None:
        """The id of (model, dimensions) in memory_embedding_models (the file's model by
        default); None when no vector of it was ever stored (and ``create`` is false)."""
        model_id = model_id or self.model_id()
        dimensions = dimensions or self.dimensions()
        if model_id is None or dimensions is None:
            return None
        key = (model_id, int(dimensions))
        if key not in self._refs:
            sql = "SELECT id FROM memory_embedding_models WHERE model = ? AND dimensions = ?"
            row = self.conn.execute(sql, key).fetchone()
            if row is None and create:
                self.conn.execute(
                    "INSERT INTO memory_embedding_models (model, dimensions) VALUES (?, ?)", key
                )
                row = self.conn.execute(sql, key).fetchone()
            if row is None:
                return None
            if self.conn.in_transaction:  # it may yet be rolled back
                return row[0]
            self._refs[key] = row[0]  # committed ids are never reused: rows are never deleted
        return self._refs[key]

    def has_index(self) -> bool:
        return self.index.exists()

    def off_reason(self) -> str | None:
        """None when hybrid search is on, else the one line that says why it is off."""
        if self.model_id() is None:
            return "semantic search is not enabled for this file: run 'slotmem reindex'"
        error = self.vec_error()
        if error:
            return error
        if not self.has_index():
            return "the vector index is missing or from an older slotmem: run 'slotmem reindex'"
        if not _has_numpy():
            return "numpy is not installed: pip install 'slotmem[semantic]'"
        return None

    def leg(self) -> Semantic | None:
        """This object when hybrid search can run, else None (search stays lexical). When it
        can, facts written without a vector (by a process that could not embed) get theirs
        first, ``BACKFILL`` at a time (``backfill``)."""
        if self.off_reason() is not None:
            return None
        self.backfill()
        return self

    def backfill(self, limit: int = BACKFILL) -> int:
        """Embed up to ``limit`` facts that have no vector of the file's model, oldest first,
        in one short write transaction; how many were embedded. Facts above the last seq
        found complete are looked at (a process remembers where it got to). Never raises: a
        read-only file, a lock held by a writer or a failing model leave the facts to the next
        search (and lexical search finds them meanwhile); the reason is logged once."""
        conn, model_id, dimensions = self.conn, self.model_id(), self.dimensions()
        if self._connections.readonly or model_id is None or dimensions is None:
            return 0
        if conn.in_transaction:
            return 0
        rows = conn.execute(
            """SELECT f.seq, f.slot, f.key, f.value FROM memory_facts f
               LEFT JOIN memory_embeddings e ON e.fact_seq = f.seq AND e.model = ?
               WHERE f.seq > ? AND e.fact_seq IS NULL ORDER BY f.seq LIMIT +?""",
            (self.model_ref(model_id, dimensions), self._checked, max(1, limit)),
        ).fetchall()
        if not rows:
            top = conn.execute("SELECT max(seq) FROM memory_facts").fetchone()[0]
            self._checked = max(self._checked, top or 0)
            return 0
        from . import texts

        documents = [texts.document(model_id, key, value) for _, _, key, value in rows]
        try:
            blobs = embedders().embed(self.model(), documents)
        except SlotmemError:
            return 0  # the search's own question fails the same way, and says so once
        if any(blob is not None and len(blob) != 4 * dimensions for blob in blobs):
            return 0  # a model of another size here: the search says so once
        try:
            with transaction(conn):
                if self.model_id() != model_id:
                    return 0
                self.write_rows(
                    [
                        (seq, slot, content_hash(text), blob)
                        for (seq, slot, _, _), text, blob in zip(rows, documents, blobs)
                    ],
                    model_id,
                    dimensions,
                )
        except Exception as e:  # noqa: BLE001 - a search never fails for this
            self._warn_once(f"facts without a vector were not embedded here ({e})")
            return 0
        return len(rows)

    def model(self, model_id: str | None = None):
        model_id = model_id or self.model_id() or embedders().DEFAULT_MODEL
        if model_id not in self._models:
            self._models[model_id] = embedders().resolve(model_id)
        return self._models[model_id]

    # -- maintenance (maintenance.py) -------------------------------------------------------
    def reindex(self, model_id: str | None = None, **options) -> dict:
        """Embed every fact that lacks a current vector: see maintenance.reindex."""
        from . import maintenance  # here and below: not imported by a search

        return maintenance.reindex(self, model_id, **options)

    def status(self) -> dict:
        from . import maintenance

        return maintenance.status(self)

    def checks(self) -> list[dict]:
        from . import maintenance

        return maintenance.checks(self)

    def rebuild_index(self) -> bool:
        """Inside the caller's transaction: the vector index anew from memory_embeddings (no
        model call). False when there is nothing to rebuild (semantic search off, or no
        sqlite-vec in this process)."""
        model_id, dimensions = self.model_id(), self.dimensions()
        if model_id is None or dimensions is None or self.vec_error():
            return False
        self.index.create(self.model_ref(model_id, dimensions), dimensions)
        return True

    # -- keeping it in sync with writes -----------------------------------------------------
    def prepare(self, items: Iterable) -> Prepared | None:
        """Vectors for facts about to be written (facts, or (key, value) pairs: see ``keyed``),
        computed before the write transaction. None when the leg is off or the model fails (the
        facts are written, lexical only, and 'slotmem reindex' embeds them later: never a
        half-written fact)."""
        model_id, dimensions = self.model_id(), self.dimensions()
        if model_id is None or dimensions is None:
            return None
        pairs = [keyed(item) for item in items]
        if not pairs:
            return None
        reason = self.off_reason()
        if reason is not None:
            self._warn_once(NO_VECTOR.format(reason=reason))
            return None
        from . import texts

        documents = list(
            dict.fromkeys(texts.document(model_id, *pair) for pair in pairs if pair[0])
        )
        if not documents:
            return None
        try:
            blobs = embedders().embed(self.model(), documents)
        except SlotmemError as e:
            self._warn_once(f"facts written without embeddings ({e}); run 'slotmem reindex'")
            return None
        return Prepared(model_id, dimensions, dict(zip(documents, blobs)))

    def write(self, prepared: Prepared | None, facts: list[Fact]) -> None:
        """Inside the caller's write transaction: the prepared vectors of these new or changed
        facts (a fact whose text was not prepared, as when its key changed on the way in, is
        left without a vector, for the next process that embeds to add)."""
        if prepared is None or not facts:
            return
        from . import texts

        by_id = {fact.id: fact for fact in facts}
        ids, rows = list(by_id), []
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            sql = f"SELECT id, seq FROM memory_facts WHERE id IN ({', '.join('?' * len(part))})"
            for fact_id, seq in self.conn.execute(sql, part):
                fact = by_id[fact_id]
                text = texts.document(prepared.model_id, fact.key, fact.value)
                if text in prepared.blobs:
                    rows.append((seq, fact.slot, content_hash(text), prepared.blobs[text]))
        self.write_rows(rows, prepared.model_id, prepared.dimensions)

    def write_rows(
        self, rows: list[tuple[int, str, int, bytes | None]], model_id: str, dimensions: int
    ) -> None:
        """Inside the caller's transaction: (seq, slot, hash, float blob) rows into both
        tables (stored compactly; the signatures are of the float vectors)."""
        from . import codec

        ref = self.model_ref(model_id, dimensions, create=True)
        stored = codec.encode_many([blob for *_, blob in rows])
        self.conn.executemany(
            """INSERT INTO memory_embeddings VALUES (?, ?, ?, ?)
               ON CONFLICT (fact_seq) DO UPDATE SET model = excluded.model,
               content_hash = excluded.content_hash, embedding = excluded.embedding""",
            [(seq, ref, digest, vector) for (seq, _, digest, _), vector in zip(rows, stored)],
        )
        self.forget([seq for seq, *_ in rows])  # vec0 has no upsert: delete, then insert
        self.index.add([(seq, slot, blob) for seq, slot, _, blob in rows if blob], dimensions)

    def forget(self, seqs: list[int]) -> None:
        """Inside the caller's transaction: drop these facts from the vector index (their
        stored vectors go with the facts, by trigger)."""
        # a file without semantic search has no vector index: nothing to load for it
        if seqs and self.model_id() is not None and self.vec_error() is None and self.has_index():
            self.index.remove(seqs)

    # -- searching (search.hybrid.VectorLeg) ------------------------------------------------
    def query_vector(self, text: str) -> bytes | None:
        """The query's vector; None when there is nothing to embed, or when the file's model is
        missing, broken or gives a vector of the wrong size here: the search then stands on its
        lexical leg, and the reason is logged once per process."""
        text = " ".join(str(text).split())[:MAX_QUERY_CHARS]
        if not text:
            return None
        blob, error = self._embed_query(text)
        if error:
            self._warn_once(f"searches stay full-text: {error}")
        return blob

    def model_error(self) -> str | None:
        """Why the file's model cannot embed a question in this process (None: it can)."""
        return self._embed_query("doctor's probe")[1]

    def _embed_query(self, text: str) -> tuple[bytes | None, str | None]:
        try:
            model = self.model()
        except SlotmemError as e:
            return None, str(e)
        key = (model.model_id, text)  # context contributors ask each slot the same
        try:  # no lock: another thread may evict it meanwhile
            return self._queries[key], None
        except KeyError:
            pass
        blob, error = _embedded(model, text, self.dimensions())
        if error is None:
            self._remember(key, blob)
        return blob, error

    def _remember(self, key: tuple[str, str], blob: bytes | None) -> None:
        with self._lock:
            if len(self._queries) >= RECENT_QUERIES:
                self._queries.pop(next(iter(self._queries)))
            self._queries[key] = blob

    def ask(self, text: str, slots: list[str] | None, k: int) -> Question:
        """A search's question under way: its vector (``query_vector``'s) and its ``k``
        candidates (``index.candidates``'), on a worker thread while the caller runs the lexical
        leg (search.run) when this machine has a second core, the question is new and the
        worker is free (a search on another thread meanwhile does not wait for it); else on the
        calling thread when the caller asks for them. The worker reads no SQL: the model,
        the file's dimensions and the signatures in memory are looked up here, on the caller's
        connection (inside a write transaction the candidates come from vec0 on it, after)."""
        text = " ".join(str(text).split())[:MAX_QUERY_CHARS]
        if not text:
            return Question(None)
        try:
            model = self.model()
        except SlotmemError as e:
            return Question((None, str(e)), warn=self._warn_once)
        key = (model.model_id, text)
        scanner = self.index.scanner(slots, k)
        scan = functools.partial(self._scanned, slots=slots, k=k, scanner=scanner)
        try:  # embedded already: nothing to wait for (read once: another thread may evict it)
            return Question((self._queries[key], None), scan)
        except KeyError:
            pass
        remember = functools.partial(self._remember, key)
        dimensions = self.dimensions()
        later = functools.partial(_embedded, model, text, dimensions)
        if not CONCURRENT or (os.cpu_count() or 1) < 2:
            return Question(later, scan, remember, self._warn_once)
        scanning = Scanning()

        def work():
            try:
                blob, error = _embedded(model, text, dimensions)
                if blob is None or scanner is None:
                    return blob, error, None
                scanning.scan = scanner(blob)
            finally:
                scanning.started.set()
            return blob, error, scanning.scan.run()  # the calling thread may join in

        # one worker a Store: a search on another thread meanwhile runs its question itself
        job = self._worker().submit(work, idle=True)
        if job is None:
            return Question(later, scan, remember, self._warn_once)
        return Question(job, scan, remember, self._warn_once, self._matrix, scanning)

    def _scanned(self, blob: bytes, *, slots: list[str] | None, k: int, scanner) -> list[int]:
        """The candidates: from the signatures in memory (``scanner``), or from vec0 on this
        thread's connection (a transaction's writes)."""
        if scanner is not None:
            return scanner(blob).run()
        return self.index.scanned(blob, slots, k)

    def _worker(self) -> Worker:
        """The worker thread (made again in a forked child, which has none of its parent's)."""
        from ..storage.workers import Worker  # a lexical search needs none of it

        with self._lock:
            if self._pool is None or self._pool[0] != os.getpid():
                self._pool = os.getpid(), Worker("slotmem-ask")
            return self._pool[1]

    def _warn_once(self, message: str) -> None:
        """Log a degradation once per process, not once per search."""
        with self._lock:
            if message in self._warned:
                return
            self._warned.add(message)
        import logging  # here: a search that warns of nothing needs none of it

        logging.getLogger("slotmem").warning("%s", message)

    def forget_query_vectors(self) -> None:
        """Embed every question afresh (the benchmarks time new questions)."""
        with self._lock:
            self._queries.clear()

    def knn(self, blob: bytes, slots: list[str] | None, k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest facts by cosine distance, best first: the index's candidates
        re-ranked by their stored vectors. Raises SlotmemError when this process cannot read
        the index (the line ``off_reason`` gives)."""
        error = self.vec_error()
        if error:
            raise SlotmemError(error)
        candidates = self.index.candidates(blob, slots, k)
        ranked = sorted(
            self.distances(blob, candidates).items(), key=lambda item: (item[1], item[0])
        )
        return ranked[: max(1, k)]

    def nearest(
        self,
        blob: bytes,
        slots: list[str] | None,
        k: int,
        others: list[int],
        candidates: list[int] | None = None,
        stored=None,
    ) -> tuple[list[tuple[int, float]], dict[int, float]]:
        """``knn``'s neighbours, and the distances of ``others`` as well (the lexical leg's
        facts in a hybrid search): the stored vectors of both read in one pass, where ``knn``
        then ``distances`` read them twice. The same figures: a fact's distance does not depend
        on the facts asked with it (``distances``). ``candidates``: the index's, found already
        (``ask``); ``stored``: some facts' stored vectors read already (``Question.stored``)."""
        if candidates is None:
            candidates = self.index.candidates(blob, slots, k)
        wanted = list(dict.fromkeys([*candidates, *others]))
        if stored is None:
            measured = self.distances(blob, wanted)
        else:  # some read already: the rest read now (each fact's distance is its own)
            measured = self._cosines(blob, *stored)
            measured.update(self.distances(blob, [seq for seq in wanted if seq not in measured]))
        pool = set(candidates)
        ranked = sorted(
            ((seq, dist) for seq, dist in measured.items() if seq in pool),
            key=lambda item: (item[1], item[0]),
        )
        return ranked[: max(1, k)], measured

    def newest(self, limit: int) -> list[tuple[str, str, str, int]]:
        """(slot, key, value, seq) of the ``limit`` most recently updated live facts that have
        a vector of the memory's model, newest first (the UI's map)."""
        found = self.conn.execute(
            """SELECT f.slot, f.key, f.value, v.fact_seq FROM memory_facts f
               JOIN memory_embeddings v ON v.fact_seq = f.seq AND v.model = ?
               WHERE f.expires_at IS NULL OR f.expires_at > ?
               ORDER BY f.updated_at DESC, f.seq DESC LIMIT +?""",
            (self.model_ref(), self.clock(), limit),
        )
        return [tuple(row) for row in found]

    def stored(self, seqs: list[int]) -> dict[int, bytes]:
        """The stored vectors of these facts as unit float32 blobs (of the file's model; facts
        without one left out)."""
        found, matrix = self._matrix(seqs)
        return {seq: row.astype("<f4").tobytes() for seq, row in zip(found, matrix)}

    def distances(self, blob: bytes, seqs: list[int]) -> dict[int, float]:
        """Cosine distance of the query to the given facts, from their stored vectors (read
        back at unit length, as the query's is). A fact's distance does not depend on the
        facts asked with it: each row is summed alone, in double precision (its products
        exact), where a float32 matrix product's last bits move with the matrix's shape (BLAS
        kernels), and a file's and a server's indexes hand the re-ranking different facts."""

        if len(blob) != 4 * (self.dimensions() or 0):
            return {}
        return self._cosines(blob, *self._matrix(seqs))

    def _cosines(self, blob: bytes, found: list[int], matrix) -> dict[int, float]:
        """``distances`` of the facts whose stored vectors were read (``_matrix``)."""
        import numpy as np

        if not found or len(blob) != 4 * (self.dimensions() or 0):
            return {}
        query = np.frombuffer(blob, dtype="<f4").astype(np.float64)
        cosines = (matrix.astype(np.float64) * query).sum(axis=1)
        return dict(zip(found, (1.0 - cosines).tolist()))

    def _matrix(self, seqs: list[int], chunk: int = 500):
        """([seq], unit float32 matrix) of the stored vectors of the file's model of these facts."""
        from . import codec

        found: list[tuple[int, bytes]] = []
        ref, dimensions = self.model_ref(), self.dimensions() or 0
        for start in range(0, len(seqs), chunk):
            part = seqs[start : start + chunk]
            found.extend(
                self.conn.execute(
                    f"""SELECT fact_seq, embedding FROM memory_embeddings
                        WHERE fact_seq IN ({", ".join("?" * len(part))}) AND model = ?
                        AND length(embedding) = ?""",
                    [*part, ref, codec.stored_length(dimensions)],
                ).fetchall()
            )
        if not found:
            return [], []
        return [seq for seq, _ in found], codec.decode_many([v for _, v in found], dimensions)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool and pool[0] == os.getpid():
            pool[1].shutdown()
        if "index" in self.__dict__:  # made by a first use
            self.index.close()


def _embedded(model, text: str, dimensions: int | None) -> tuple[bytes | None, str | None]:
    """(the question's vector, None) or (None, why not): reads no SQL (``Semantic.ask``)."""
    from . import texts

    try:
        [blob] = embedders().embed(model, [texts.question(model.model_id, text)], question=True)
    except SlotmemError as e:
        return None, str(e)
    if blob is not None and len(blob) != 4 * (dimensions or 0):
        return None, (
            f"{model.model_id!r} gave {len(blob) // 4} dimensions here, the file's vectors "
            f"have {dimensions}; run 'slotmem reindex'"
        )
    return blob, None


class Scanning:
    """The scan a worker started for a question (None: none), once ``started`` is set."""

    def __init__(self):
        self.started = threading.Event()
        self.scan = None


class Question:
    """A search's question under way (``Semantic.ask``): ``result()`` waits for its vector
    and its candidates. ``running``: on a worker thread now. ``work``: a worker's Job of (vector,
    error, candidates or None), a function giving (vector, error), or (vector, error) known;
    ``scan``: the candidates of a vector, on the calling thread; ``remember``: called with a
    vector computed without error; ``warn``: with the one line saying why there is none."""

    def __init__(self, work, scan=None, remember=None, warn=None, read=None, scanning=None):
        self._work, self._scan, self._remember, self._warn = work, scan, remember, warn
        self._read, self._scanning = read, scanning
        self.running = hasattr(work, "done")  # a worker's Job
        self.stored = None  # ([seq], matrix): the stored vectors read while the worker ran
        self._done: tuple[bytes | None, list[int] | None] | None = None

    def prefetch(self, others: list[int] | None) -> None:
        """Read the stored vectors of ``others`` into ``stored`` now, while the worker runs (once;
        nothing when it is done or not running: ``nearest`` reads them with the rest)."""
        waiting = self.running and self._read is not None and not self._work.done()
        if others and self.stored is None and waiting:
            self.stored = self._read(others)

    def result(self, others: list[int] | None = None) -> tuple[bytes | None, list[int] | None]:
        """(the question's vector, its candidates), on the calling thread; (None, None) when
        there is nothing to embed or the model fails here (logged once: the search stays
        lexical). A worker's exception is raised here, as it would have been in line.
        ``others``: facts whose stored vectors ``nearest`` will read too (the lexical leg's),
        read into ``stored`` while the worker runs."""
        if self._done is not None:
            return self._done
        self.prefetch(others)
        work, candidates = self._work, None
        if work is None:
            blob, error = None, None
        elif self.running:
            scanning = self._scanning
            if scanning is not None and SHARE_SCAN:  # its own part done: it joins a large scan
                scanning.started.wait()
                if scanning.scan is not None and scanning.scan.rows >= SHARE_ROWS:
                    scanning.scan.help()
            blob, error, candidates = work.result()
        elif callable(work):
            blob, error = work()
        else:
            blob, error = work
        if error and self._warn is not None:
            self._warn(f"searches stay full-text: {error}")
        elif not error and self._remember is not None:
            self._remember(blob)
        if blob is not None and candidates is None and self._scan is not None:
            candidates = self._scan(blob)
        self._done = (blob, candidates) if blob is not None else (None, None)
        return self._done


def scan_vectors(texts: list[str]) -> list[list[float]]:
    """The write scan's embedder (``slotmem.safety.embedding``): the default model, loaded the
    first time the scan asks (it raises ModelUnavailable on an install without the semantic
    extra, and the scan goes on without it)."""
    return list(embedders().MiniLM().embed_batch(texts))


scan_embedding.use(scan_vectors)
