"""Key forms, again: ``slotmem.validation.key_form`` now also drops the marks over Latin, Greek,
Cyrillic and Armenian letters (``ownér``, ``İ``), folds more look-alike letters (Armenian,
Latin small capitals, phonetic letters), makes ``_`` and dashes a space and drops punctuation at
either end of a key (``owner.``, ``owner_``). Each fact's ``key_form`` is computed again; keys
that now share a form both stay, each readable by its exact key, and ``slotmem doctor`` lists
them (see 0013_key_forms.py).
"""

from slotmem.validation import key_form


def migrate(db):
    rows = db.execute("SELECT seq, key FROM memory_facts").fetchall()
    db.conn.executemany(
        "UPDATE memory_facts SET key_form = ? WHERE seq = ?",
        [(key_form(key), seq) for seq, key in rows],
    )
