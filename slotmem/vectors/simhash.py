"""Sign-random-projection signatures (SimHash) of embeddings: what the vector index scans.

A signature holds, for each of ``BITS`` fixed random hyperplanes, the side the vector lies on;
the Hamming distance of two signatures estimates the angle between their vectors, and more bits
estimate it better. The vec0 index stores these ``BITS / 8`` bytes per fact instead of the
vector; ``Semantic.knn`` takes the ``CANDIDATES`` nearest signatures and re-ranks them by the
exact cosine of the stored vectors read back (``codec.py``). sqlite-vec 0.1.9's wheel counts
bits in software and its top-k grows with k times the vectors scanned, so fewer bits with more
candidates, spread over shards (``index.SHARDS``), reach the same recall for less time than more
bits with fewer candidates; random hyperplanes find more of the true neighbours than the signs
of the model's own dimensions (docs/benchmarks.md).

The hyperplanes are ±1 matrices drawn from SHA-256 in counter mode: the same on every machine
and numpy version, so any process computes the same signatures for the same file.
"""

from __future__ import annotations

import functools

BITS = 1024
CANDIDATES = 256  # signatures re-ranked per search (per slot), unless more are asked for
VERSION = "simhash1"  # the index's column name: a different projection needs a new one


@functools.lru_cache(maxsize=4)
def hyperplanes(dimensions: int):
    """A (BITS × dimensions) matrix of ±1, float32."""
    import hashlib

    import numpy as np

    count = BITS * dimensions
    stream = b"".join(
        hashlib.sha256(b"slotmem-simhash-%d" % i).digest() for i in range(-(-count // 256))
    )
    signs = np.unpackbits(np.frombuffer(stream, dtype=np.uint8))[:count].reshape(BITS, dimensions)
    return np.where(signs == 1, 1.0, -1.0).astype(np.float32)


def signatures(blobs: list[bytes], dimensions: int) -> list[bytes]:
    """The signature of each float32 blob (``dimensions`` floats each), as vec0 bit bytes."""
    if not blobs:
        return []
    import numpy as np

    vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), dimensions)
    bits = np.packbits((vectors @ hyperplanes(dimensions).T) > 0, axis=1)
    return [row.tobytes() for row in bits]
