"""The lexical score, computed in SQL, and its explanation.

    score = relevance × confidence × feedback × recency

- relevance  = -bm25(memory_facts_fts, KEY_WEIGHT, VALUE_WEIGHT)   (FTS5's bm25 is negative)
- confidence = the fact's confidence, in [0, 1]
- feedback   = max(0.2, 1 + 0.15 × quality), quality in [-3, 3] from `slotmem rate`
- recency    = 1 / (1 + age / half-life), age since the last update: 0.5 at one half-life,
               1/3 at two (plain arithmetic: no SQLite math functions needed); 1 when off
"""

from __future__ import annotations

from dataclasses import dataclass

KEY_WEIGHT = 2.0
VALUE_WEIGHT = 1.0
FEEDBACK_STEP = 0.15
FEEDBACK_FLOOR = 0.2
DAY_MS = 86_400_000


@dataclass(frozen=True)
class Ranking:
    key_weight: float = KEY_WEIGHT
    value_weight: float = VALUE_WEIGHT
    half_life_days: float | None = None  # None: no recency factor

    def columns(self) -> str:
        """SELECT-list expressions: relevance, feedback, recency and score."""
        relevance = f"-bm25(memory_facts_fts, {self.key_weight!r}, {self.value_weight!r})"
        feedback = f"max({FEEDBACK_FLOOR}, 1 + {FEEDBACK_STEP} * f.quality)"
        if self.half_life_days:
            half_life_ms = float(self.half_life_days) * DAY_MS
            recency = f"(1.0 / (1.0 + max(0, :now - f.updated_at) / {half_life_ms!r}))"
        else:
            recency = "1.0"
        return (
            f"{relevance} AS relevance, {feedback} AS feedback, {recency} AS recency, "
            f"({relevance}) * f.confidence * {feedback} * {recency} AS score"
        )


def explain(row) -> dict:
    return {
        "bm25": -row["relevance"],
        "relevance": row["relevance"],
        "confidence": row["confidence"],
        "quality": row["quality"],
        "feedback": row["feedback"],
        "recency": row["recency"],
        "score": row["score"],
    }
