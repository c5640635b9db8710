"""Vectors stored compactly: int8 with their scale (``slotmem.vectors.codec``), the model named
once in ``memory_embedding_models``, the content hash as 6 bytes instead of 32 hex characters,
and no time of embedding (nothing read it): ten rows to a 4 KiB page instead of two.

``memory_embeddings`` stays the source of truth (the vec0 index, derived from it, is left as it
is: its signatures were computed from the float vectors). The rows are converted in batches
before this migration is recorded (``step``, each batch in its own transaction, run by
``slotmem.storage.migrate``, which shows a progress bar under ``slotmem migrate``): a converted
row moves from the old table into ``memory_embeddings_compact``, so a conversion stopped midway
(killed, a full disk) goes on where it stopped when the file is next opened. ``migrate`` then
converts whatever is left (an older slotmem writing meanwhile) and gives the new table the old
one's name, in one transaction.
"""

from slotmem.vectors import codec

BATCH = 2048  # rows per transaction
OLD, NEW = "memory_embeddings", "memory_embeddings_compact"

SCHEMA = [
    """
    CREATE TABLE IF NOT EXISTS memory_embedding_models (
        id         INTEGER PRIMARY KEY,
        model      TEXT NOT NULL,
        dimensions INTEGER NOT NULL,
        UNIQUE (model, dimensions)
    )""",
    f"""
    CREATE TABLE IF NOT EXISTS {NEW} (
        fact_seq     INTEGER PRIMARY KEY,  -- memory_facts.seq
        model        INTEGER NOT NULL,     -- memory_embedding_models.id
        content_hash INTEGER NOT NULL,     -- first 6 bytes of the embedded text's sha256, signed
        embedding    BLOB NOT NULL         -- float32 scale, then int8 per dimension ('' unusable)
    )""",
    f"""
    CREATE TRIGGER IF NOT EXISTS memory_facts_embeddings_compact_ad
    AFTER DELETE ON memory_facts BEGIN
        DELETE FROM {NEW} WHERE fact_seq = old.seq;
    END""",
]


def old_hash(text) -> int:
    """The old hex hash as the new integer one (the same first 6 bytes of the sha256); 0 for
    anything else (the vector is then stale, and 'slotmem reindex' embeds it again)."""
    try:
        value = int(str(text)[:12], 16)
    except ValueError:
        return 0
    return value - (1 << 48) if value >= 1 << 47 else value


def converting(conn) -> bool:
    """Is the old table still there?"""
    return "dimensions" in {row[1] for row in conn.execute(f"PRAGMA table_info({OLD})")}


def remaining(conn) -> int:
    """Rows still to convert (0 once the old table is gone)."""
    return conn.execute(f"SELECT count(*) FROM {OLD}").fetchone()[0] if converting(conn) else 0


def step(conn, limit: int = BATCH) -> int:
    """Inside the caller's transaction: convert up to ``limit`` rows; how many were."""
    if not converting(conn):
        return 0
    for statement in SCHEMA:
        conn.execute(statement)
    rows = conn.execute(
        f"""SELECT fact_seq, model, dimensions, content_hash, embedding FROM {OLD}
            ORDER BY fact_seq LIMIT ?""",
        (limit,),
    ).fetchall()
    if not rows:
        return 0
    refs = {}
    for model, dimensions in {(row[1], row[2]) for row in rows}:
        conn.execute(
            "INSERT OR IGNORE INTO memory_embedding_models (model, dimensions) VALUES (?, ?)",
            (model, dimensions),
        )
        refs[model, dimensions] = conn.execute(
            "SELECT id FROM memory_embedding_models WHERE model = ? AND dimensions = ?",
            (model, dimensions),
        ).fetchone()[0]
    stored = codec.encode_many(
        [
            blob if blob and len(blob) == 4 * dimensions else None
            for _, _, dimensions, _, blob in rows
        ]
    )
    conn.executemany(
        f"INSERT OR REPLACE INTO {NEW} VALUES (?, ?, ?, ?)",
        [
            (seq, refs[model, dimensions], old_hash(digest), vector)
            for (seq, model, dimensions, digest, _), vector in zip(rows, stored)
        ],
    )
    conn.execute(f"DELETE FROM {OLD} WHERE fact_seq <= ?", (rows[-1][0],))
    return len(rows)


def migrate(db):
    conn = db.conn
    for statement in SCHEMA:
        conn.execute(statement)
    while step(conn):
        pass
    conn.execute("DROP TRIGGER IF EXISTS memory_facts_embeddings_ad")
    conn.execute("DROP TRIGGER memory_facts_embeddings_compact_ad")
    conn.execute(f"DROP TABLE {OLD}")
    conn.execute(f"ALTER TABLE {NEW} RENAME TO {OLD}")
    conn.execute(
        f"""CREATE TRIGGER memory_facts_embeddings_ad AFTER DELETE ON memory_facts BEGIN
            DELETE FROM {OLD} WHERE fact_seq = old.seq;
        END"""
    )
