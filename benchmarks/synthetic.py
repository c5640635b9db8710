"""Synthetic facts for benchmarks: a Zipf-distributed vocabulary and 10-30 word values."""

from __future__ import annotations

import itertools
import random

SLOTS = ("user", "project", "agent")


def vocabulary(size: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


class Corpus:
    """Words drawn with probability proportional to 1 / rank (Zipf, s = 1)."""

    def __init__(self, vocab_size: int = 50_000, seed: int = 7, words: list[str] | None = None):
        self.words = words or vocabulary(vocab_size, seed)  # words: most frequent first
        weights = (1 / rank for rank in range(1, len(self.words) + 1))
        self.cum_weights = list(itertools.accumulate(weights))  # computed once, not per draw
        self.rng = random.Random(seed)

    def sentence(self, low: int = 10, high: int = 30) -> str:
        n = self.rng.randint(low, high)
        return (
            " ".join(self.rng.choices(self.words, cum_weights=self.cum_weights, k=n)).capitalize()
            + "."
        )

    def facts(self, n: int) -> list[dict]:
        return [
            {
                "slot": SLOTS[i % 3],
                "key": f"fact.{i}",
                "value": self.sentence(),
                "confidence": round(self.rng.uniform(0.3, 1.0), 2),
                "source": "bench",
            }
            for i in range(n)
        ]

    def common_query(self) -> str:
        return " ".join(self.rng.sample(self.words[:50], 5))

    def rare_query(self) -> str:
        return " ".join(self.rng.sample(self.words[5_000:], 3))
