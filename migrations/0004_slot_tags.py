"""The word index learns each fact's slot, so a search of one small slot skips the others' facts.

A search made only of common words scores the newest postings of its rarest word (a budget, see
slotmem/search/plan.py). Filtered to a slot after the fact, that scan could walk hundreds of
thousands of other slots' postings to find a small slot's few: seconds at 1M facts. With the
slot in the index as one token (``slot_tag``: ``'slot' || lower(hex(slot)) || 'x'``, one token
whatever the slot's name), the scan becomes FTS5's own ``"word" AND "slot...x"``, which skips.

``memory_facts_fts`` is rebuilt over the view ``memory_facts_fts_text`` (key, value, slot_tag)
with the same tokenizer and ``detail=none``; its three triggers are replaced to write the tag
(the update trigger now also fires on a change of slot). bm25 is given weight 0 for the tag
column, so it adds nothing to a score.
"""

TAG = "'slot' || lower(hex({slot})) || 'x'"

STATEMENTS = [
    "DROP TRIGGER memory_facts_ai",
    "DROP TRIGGER memory_facts_ad",
    "DROP TRIGGER memory_facts_au",
    "DROP TABLE memory_facts_fts",
    f"""
    CREATE VIEW memory_facts_fts_text AS
    SELECT seq, key, value, {TAG.format(slot="slot")} AS slot_tag FROM memory_facts""",
    """
    CREATE VIRTUAL TABLE memory_facts_fts USING fts5(
        key, value, slot_tag, content='memory_facts_fts_text', content_rowid='seq',
        tokenize='porter unicode61 remove_diacritics 2', detail=none
    )""",
    f"""
    CREATE TRIGGER memory_facts_ai AFTER INSERT ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (rowid, key, value, slot_tag)
        VALUES (new.seq, new.key, new.value, {TAG.format(slot="new.slot")});
    END""",
    f"""
    CREATE TRIGGER memory_facts_ad AFTER DELETE ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (memory_facts_fts, rowid, key, value, slot_tag)
        VALUES ('delete', old.seq, old.key, old.value, {TAG.format(slot="old.slot")});
    END""",
    f"""
    CREATE TRIGGER memory_facts_au AFTER UPDATE OF slot, key, value ON memory_facts BEGIN
        INSERT INTO memory_facts_fts (memory_facts_fts, rowid, key, value, slot_tag)
        VALUES ('delete', old.seq, old.key, old.value, {TAG.format(slot="old.slot")});
        INSERT INTO memory_facts_fts (rowid, key, value, slot_tag)
        VALUES (new.seq, new.key, new.value, {TAG.format(slot="new.slot")});
    END""",
    "INSERT INTO memory_facts_fts (memory_facts_fts) VALUES ('rebuild')",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
