"""Embedding models: slotmem's offline default, and any other through the llm library.

The default, ``wordllama-256``, is WordLlama's bundled 256-dimension model: its weights ship
inside the ``wordllama`` wheel, so it loads from site-packages with no network (installed by
``pip install 'slotmem[semantic]'``). Any ``llm`` embedding model id works as well.
"""

from __future__ import annotations

import math
import struct
import threading

import llm

from .errors import InvalidInput, ModelError

DEFAULT_MODEL = "wordllama-256"


class WordLlama256(llm.EmbeddingModel):
    model_id = DEFAULT_MODEL
    batch_size = 256
    _model = None
    _lock = threading.Lock()

    @classmethod
    def load(cls):
        with cls._lock:
            if cls._model is None:
                try:
                    import wordllama
                except ImportError:
                    raise ModelError(
                        f"the {DEFAULT_MODEL} embedding model needs wordllama: "
                        "pip install 'slotmem[semantic]'"
                    ) from None
                from pathlib import Path

                cls._model = wordllama.WordLlama.load(
                    config="l2_supercat", dim=256,
                    cache_dir=Path(wordllama.__file__).parent, disable_download=True,
                )  # fmt: skip
        return cls._model

    def embed_batch(self, items):
        vectors = self.load().embed(list(items), norm=False)
        for vector in vectors:
            yield [float(x) for x in vector]


def resolve(model_id: str):
    """An llm EmbeddingModel for ``model_id`` (slotmem's own default needs no plugin loading)."""
    if model_id == DEFAULT_MODEL:
        return WordLlama256()
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


def embed(model, texts: list[str]) -> list[bytes | None]:
    """Blobs for ``texts`` (None where the model gave no usable vector). Model failures raise
    ModelError with one line saying what went wrong."""
    try:
        return [to_blob(vector) for vector in model.embed_multi(texts)]
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"embedding model {model.model_id!r} failed: {e}") from e
