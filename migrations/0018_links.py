"""Links between facts: ``memory_fact_links(from_seq, rel, to_seq, created_at, source)``, one
row per typed, directed link between two live facts ("marta" -lives_in-> "porto").

The primary key (from_seq, rel, to_seq) reads a fact's outgoing links; the index (to_seq, rel)
its incoming ones. A link belongs to its two facts: when either leaves memory_facts (delete,
prune, expiry, a replacing import) the trigger writes the link to ``memory_link_history``
(reason ``deleted``, at the wall clock) and drops it. ``Store.unlink`` writes its own history
row (reason ``unlink``). History names the facts by slot and key: their rows may be gone.
"""

STATEMENTS = [
    """
    CREATE TABLE memory_fact_links (
        from_seq   INTEGER NOT NULL,
        rel        TEXT NOT NULL,
        to_seq     INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        source     TEXT,
        PRIMARY KEY (from_seq, rel, to_seq)
    ) WITHOUT ROWID""",
    "CREATE INDEX memory_fact_links_to ON memory_fact_links (to_seq, rel)",
    """
    CREATE TABLE memory_link_history (
        hid        INTEGER PRIMARY KEY,
        from_slot  TEXT NOT NULL,
        from_key   TEXT NOT NULL,
        rel        TEXT NOT NULL,
        to_slot    TEXT NOT NULL,
        to_key     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        source     TEXT,
        removed_at INTEGER NOT NULL,
        reason     TEXT NOT NULL,
        removed_by TEXT
    )""",
    "CREATE INDEX memory_link_history_from ON memory_link_history (from_slot, from_key)",
    "CREATE INDEX memory_link_history_to ON memory_link_history (to_slot, to_key)",
    """
    CREATE TRIGGER memory_facts_links_ad AFTER DELETE ON memory_facts BEGIN
        INSERT INTO memory_link_history
            (from_slot, from_key, rel, to_slot, to_key, created_at, source, removed_at, reason)
        SELECT coalesce(f.slot, old.slot), coalesce(f.key, old.key), l.rel,
               coalesce(t.slot, old.slot), coalesce(t.key, old.key), l.created_at, l.source,
               CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), 'deleted'
        FROM memory_fact_links l
        LEFT JOIN memory_facts f ON f.seq = l.from_seq
        LEFT JOIN memory_facts t ON t.seq = l.to_seq
        WHERE l.from_seq = old.seq OR l.to_seq = old.seq;
        DELETE FROM memory_fact_links WHERE from_seq = old.seq OR to_seq = old.seq;
    END""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
