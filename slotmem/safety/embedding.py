"""The embedding model the write scan's semantic model reads a text's meaning with, when one is
at hand.

The safety package imports nothing else of slotmem's, so the embedder is handed to it:
``slotmem.vectors`` registers the default embedding model (``all-minilm-l6-v2-int8``, loaded
the first time the scan asks, which needs the semantic extra). Without an embedder, with
``SLOTMEM_SCAN_EMBEDDINGS=0`` in the environment, or once the embedder has failed in this
process (a base install: the model cannot load), the scan weighs texts with its base model.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence

ENV = "SLOTMEM_SCAN_EMBEDDINGS"  # "0": the scan never uses an embedding model
Embedder = Callable[[list[str]], Sequence[Sequence[float]]]

_embedder: Embedder | None = None
_failed = False


def use(embedder: Embedder | None) -> None:
    """Let the scan embed texts with ``embedder`` (a list of texts in, a vector per text out),
    or with none."""
    global _embedder, _failed
    _embedder, _failed = embedder, False
    _embedded.cache_clear()


def enabled() -> bool:
    """Whether the scan may ask for a text's vector."""
    return _embedder is not None and not _failed and os.environ.get(ENV, "1") != "0"


def vector(text: str) -> tuple[float, ...] | None:
    """``text``'s vector, or None when the scan has no embedder here; an embedder that fails
    is not asked again in this process."""
    global _failed
    if not enabled():
        return None
    try:
        return _embedded(text)
    except Exception as e:  # noqa: BLE001 - the model cannot load (a base install) or broke
        import logging  # only here: a read imports no logging (tests/test_imports.py)

        _failed = True
        logging.getLogger("slotmem").info(
            "the write scan weighs texts without an embedding model: %s", e
        )
        return None


@functools.lru_cache(maxsize=256)  # a fact's key and value are weighed more than once a write
def _embedded(text: str) -> tuple[float, ...]:
    assert _embedder is not None
    [found] = _embedder([text])
    return tuple(float(x) for x in found)
