"""Per-slot retention policies, so that `slotmem prune` run from cron needs no arguments."""

STATEMENTS = [
    """
    CREATE TABLE memory_slots (
        slot             TEXT PRIMARY KEY,
        cap              INTEGER NOT NULL CHECK (cap >= 0),
        min_age_days     REAL NOT NULL CHECK (min_age_days >= 0),
        min_access_count INTEGER NOT NULL CHECK (min_access_count >= 0),
        description      TEXT
    )""",
    """
    INSERT INTO memory_slots VALUES
        ('user', 500, 30, 3, 'Preferences and personal facts about the user'),
        ('project', 1000, 30, 3, 'Decisions, stack, constraints and deadlines of the project'),
        ('agent', 300, 30, 3, 'Lessons the agent learned about doing its work')""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
