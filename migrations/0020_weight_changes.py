"""A count of the changes to what weighs a fact in a search, kept by triggers.

``slotmem/search/weights.py`` holds each fact's slot, confidence, quality, updated_at and expiry
in memory for the search by words alone (``pruned.py``'s threats); it reads them again when this
count moves. An update of one of those columns moves it, and so does a delete (a seq deleted and
written again with its old number must not keep the old weights). A new fact does not: its seq
is above every one held (AUTOINCREMENT), and it is read on its own. Access tracking
(``access_count``, ``last_accessed``: a write after every tracked search) does not move it.
"""

STATEMENTS = [
    """
    CREATE TABLE memory_weight_changes (
        id      INTEGER PRIMARY KEY CHECK (id = 1),
        changes INTEGER NOT NULL
    )""",
    "INSERT INTO memory_weight_changes VALUES (1, 0)",
    """
    CREATE TRIGGER memory_facts_weights_au
    AFTER UPDATE OF slot, confidence, quality, updated_at, expires_at ON memory_facts BEGIN
        UPDATE memory_weight_changes SET changes = changes + 1 WHERE id = 1;
    END""",
    """
    CREATE TRIGGER memory_facts_weights_ad AFTER DELETE ON memory_facts BEGIN
        UPDATE memory_weight_changes SET changes = changes + 1 WHERE id = 1;
    END""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
