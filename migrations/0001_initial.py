"""Facts, their FTS5 index and its triggers, history and feedback."""

TOKENIZE = "porter unicode61 remove_diacritics 2"

STATEMENTS = [
    """
    CREATE TABLE memory_facts (
        seq           INTEGER PRIMARY KEY AUTOINCREMENT,  -- the rowid: stable, never reused
        id            TEXT NOT NULL UNIQUE,
        slot          TEXT NOT NULL,
        key           TEXT NOT NULL,
        value         TEXT NOT NULL,
        confidence    REAL NOT NULL DEFAULT 1.0 CHECK (confidence BETWEEN 0 AND 1),
        quality       INTEGER NOT NULL DEFAULT 0 CHECK (quality BETWEEN -3 AND 3),
        source        TEXT,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL,
        last_accessed INTEGER NOT NULL,
        access_count  INTEGER NOT NULL DEFAULT 0,
        UNIQUE (slot, key)
    )""",
    "CREATE INDEX memory_facts_slot_accessed ON memory_facts (slot, last_accessed)",
    f"""
    CREATE VIRTUAL TABLE memory_facts_fts USING fts5(
        key, value, content='memory_facts', content_rowid='seq', tokenize='{TOKENIZE}'
    )""",
    """
    CREATE TRIGGER memory_facts_ai AFTER INSERT ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (rowid, key, value) VALUES (new.seq, new.key, new.value);
    END""",
    """
    CREATE TRIGGER memory_facts_ad AFTER DELETE ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (memory_facts_fts, rowid, key, value)
        VALUES ('delete', old.seq, old.key, old.value);
    END""",
    """
    CREATE TRIGGER memory_facts_au AFTER UPDATE OF key, value ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (memory_facts_fts, rowid, key, value)
        VALUES ('delete', old.seq, old.key, old.value);
        INSERT INTO memory_facts_fts (rowid, key, value) VALUES (new.seq, new.key, new.value);
    END""",
    """
    CREATE TABLE memory_fact_history (
        hid           INTEGER PRIMARY KEY AUTOINCREMENT,
        fact_id       TEXT NOT NULL,
        slot          TEXT NOT NULL,
        key           TEXT NOT NULL,
        value         TEXT NOT NULL,
        confidence    REAL NOT NULL,
        quality       INTEGER NOT NULL,
        source        TEXT,
        created_at    INTEGER NOT NULL,
        updated_at    INTEGER NOT NULL,
        last_accessed INTEGER NOT NULL,
        access_count  INTEGER NOT NULL,
        reason        TEXT NOT NULL,  -- 'update', 'delete' or 'prune'
        changed_at    INTEGER NOT NULL,
        changed_by    TEXT
    )""",
    "CREATE INDEX memory_fact_history_slot_key ON memory_fact_history (slot, key, hid)",
    """
    CREATE TABLE memory_feedback (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        fact_id  TEXT NOT NULL,
        rating   INTEGER NOT NULL CHECK (rating BETWEEN -3 AND 3),
        comment  TEXT,
        at       INTEGER NOT NULL
    )""",
    "CREATE INDEX memory_feedback_fact ON memory_feedback (fact_id, id)",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
