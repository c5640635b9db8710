"""Tags on facts: ``memory_fact_tags(fact_seq, tag)``, one row per tag of a live fact.

The primary key (fact_seq, tag) reads a fact's tags; the index (tag, fact_seq) answers "the
facts with this tag" without a scan (a filter of ``list_facts``/``query_facts``). Tags belong to
the fact row: when it leaves the table (delete, prune, expiry, an import that replaces it) the
trigger drops its tags. History does not keep tags: a restored fact comes back untagged.
"""

STATEMENTS = [
    """
    CREATE TABLE memory_fact_tags (
        fact_seq INTEGER NOT NULL,
        tag      TEXT NOT NULL,
        PRIMARY KEY (fact_seq, tag)
    ) WITHOUT ROWID""",
    "CREATE INDEX memory_fact_tags_tag ON memory_fact_tags (tag, fact_seq)",
    """
    CREATE TRIGGER memory_facts_tags_ad AFTER DELETE ON memory_facts BEGIN
        DELETE FROM memory_fact_tags WHERE fact_seq = old.seq;
    END""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
