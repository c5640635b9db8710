"""Pinned facts and a relevance floor per slot.

- ``memory_facts.pinned_at``: when the fact was pinned (NULL: not pinned). A pinned fact is in
  every context built for its slot, first, and ``prune`` never removes it. The partial index
  finds a slot's pinned facts without reading the others.
- ``memory_slots.min_relevance``: the slot's floor for what reaches a prompt (NULL: slotmem's
  default), beside its retention policy.

Both columns are added with NULL for every existing row, so a file from before this migration
keeps working unchanged.
"""

STATEMENTS = [
    "ALTER TABLE memory_facts ADD COLUMN pinned_at INTEGER",
    """
    CREATE INDEX memory_facts_pinned ON memory_facts (slot, pinned_at)
    WHERE pinned_at IS NOT NULL""",
    """
    ALTER TABLE memory_slots ADD COLUMN min_relevance REAL
    CHECK (min_relevance IS NULL OR min_relevance BETWEEN 0 AND 1)""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
