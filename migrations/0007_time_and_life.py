"""When a fact stops being true, and history that keeps every column.

- ``memory_facts.expires_at``: when the fact expires (NULL: never). An expired fact is never
  returned; ``prune`` moves it into history (reason ``expired``). The partial index finds the
  expired facts without reading the others.
- ``memory_fact_history.pinned_at``, ``.protected_at`` and ``.expires_at``: a history row keeps
  every column of the fact, so that a restored fact comes back as it was (``protected_at`` is
  the facts' column from 0008).
- ``memory_fact_history_changed``: ``slotmem history --all --since ...`` reads the rows of a
  period without reading the others.

Every column is added with NULL for the existing rows, so a file from before this migration
keeps working unchanged.
"""

STATEMENTS = [
    "ALTER TABLE memory_facts ADD COLUMN expires_at INTEGER",
    """
    CREATE INDEX memory_facts_expires ON memory_facts (expires_at)
    WHERE expires_at IS NOT NULL""",
    "ALTER TABLE memory_fact_history ADD COLUMN pinned_at INTEGER",
    "ALTER TABLE memory_fact_history ADD COLUMN protected_at INTEGER",
    "ALTER TABLE memory_fact_history ADD COLUMN expires_at INTEGER",
    "CREATE INDEX memory_fact_history_changed ON memory_fact_history (changed_at)",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
