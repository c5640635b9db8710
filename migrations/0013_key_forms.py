"""Keys that look alike are one key: ``memory_facts.key_form`` holds each key's form
(``slotmem.validation.key_form``: NFKC, invisible characters removed, case folded, look-alike
letters folded), indexed with the slot. A write whose key has the form of a fact's key in the
slot writes that fact (an agent cannot set ``Owner`` or ``owner\\u200b`` beside a person's
protected ``owner``).

Files may already hold keys of one form (``Owner`` and ``owner``): both stay, each readable by
its exact key; the index is not unique, and ``slotmem doctor`` lists them.
"""

from slotmem.validation import key_form


def migrate(db):
    db.execute("ALTER TABLE memory_facts ADD COLUMN key_form TEXT")
    rows = db.execute("SELECT seq, key FROM memory_facts").fetchall()
    db.conn.executemany(
        "UPDATE memory_facts SET key_form = ? WHERE seq = ?",
        [(key_form(key), seq) for seq, key in rows],
    )
    db.execute("CREATE INDEX memory_facts_key_form ON memory_facts (slot, key_form)")
