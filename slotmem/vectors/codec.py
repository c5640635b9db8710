"""How a vector is stored in ``memory_embeddings``: int8, with the scale that reconstructs it.

A model gives a unit-length float32 vector (``embedders.to_blob``). It is stored as a
little-endian float32 ``scale`` followed by one signed byte per dimension, ``round(x / scale)``
with ``scale = max|x| / 127``: 388 bytes for 384 dimensions instead of 1,536. Read back, the
vector is ``q * scale`` made unit length again, and the search re-ranks its candidates by the
exact cosine of those (docs/benchmarks.md, "Vector index": recall@10 moves by less than 0.01
against float32; float16 kept a little more for twice the bytes).

``encode`` needs no numpy (a process without the semantic extra converts an older file when it
opens it); reading back does (the vector leg ranks with numpy).
"""

from __future__ import annotations

import struct
import sys
from array import array

HEADER = struct.Struct("<f")  # the scale
LEVELS = 127


def stored_length(dimensions: int) -> int:
    """Bytes of a stored vector of ``dimensions``."""
    return HEADER.size + dimensions


def _scale(peak: float) -> float:
    """The scale for a vector whose largest magnitude is ``peak``, as float32 stores it."""
    return HEADER.unpack(HEADER.pack(peak / LEVELS))[0] if peak > 0 else 1.0


def encode(blob: bytes | None) -> bytes:
    """The stored form of one float32 blob (b'' for None: a vector that cannot rank)."""
    if not blob:
        return b""
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    scale = _scale(max(map(abs, values)))
    levels = bytes(max(-LEVELS, min(LEVELS, round(v / scale))) & 0xFF for v in values)
    return HEADER.pack(scale) + levels


def encode_many(blobs: list[bytes | None]) -> list[bytes]:
    """``encode`` of each blob, with numpy when it is here (the same bytes, faster)."""
    try:
        import numpy as np
    except ImportError:
        return [encode(blob) for blob in blobs]
    found: list[bytes] = [b""] * len(blobs)
    by_length: dict[int, list[int]] = {}
    for i, blob in enumerate(blobs):
        if blob:
            by_length.setdefault(len(blob), []).append(i)
    for length, indexes in by_length.items():
        matrix = np.frombuffer(b"".join(blobs[i] for i in indexes), dtype="<f4")  # type: ignore[misc]
        matrix = matrix.reshape(len(indexes), length // 4).astype(np.float64)
        peaks = np.abs(matrix).max(axis=1)
        scales = np.where(peaks > 0, (peaks / LEVELS).astype("<f4").astype(np.float64), 1.0)
        levels = np.clip(np.rint(matrix / scales[:, None]), -LEVELS, LEVELS).astype(np.int8)
        heads = scales.astype("<f4")
        for row, i in enumerate(indexes):
            found[i] = heads[row].tobytes() + levels[row].tobytes()
    return found


def decode_many(stored: list[bytes], dimensions: int):
    """A (len(stored) x dimensions) float32 numpy matrix of unit rows from stored vectors,
    each ``stored_length(dimensions)`` bytes."""
    import numpy as np

    raw = np.frombuffer(b"".join(stored), dtype=np.uint8).reshape(len(stored), -1)
    levels = raw[:, HEADER.size :].view(np.int8).astype(np.float32)
    norms = np.linalg.norm(levels, axis=1, keepdims=True)
    # the scale cancels in a unit vector; it stays stored so that q * scale is the vector
    return levels / np.where(norms > 0, norms, 1.0)


def decode(stored: bytes) -> bytes:
    """One stored vector as a unit float32 blob."""
    return decode_many([stored], len(stored) - HEADER.size)[0].astype("<f4").tobytes()
