"""The semantic leg's source of truth: one float32 vector per fact, tagged with its model.

The sqlite-vec ``vec0`` index (``memory_vec``) is derived from this table and is created only
when semantic search is enabled, by a process that can load the extension.
"""

STATEMENTS = [
    """
    CREATE TABLE memory_settings (
        name  TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """
    CREATE TABLE memory_embeddings (
        fact_seq     INTEGER PRIMARY KEY,  -- memory_facts.seq
        model        TEXT NOT NULL,
        dimensions   INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        embedding    BLOB NOT NULL,        -- little-endian float32, L2-normalized
        embedded_at  INTEGER NOT NULL
    )""",
    """
    CREATE TRIGGER memory_facts_embeddings_ad AFTER DELETE ON memory_facts BEGIN
        DELETE FROM memory_embeddings WHERE fact_seq = old.seq;
    END""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
