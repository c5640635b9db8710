"""Episodes, their provenance, and the retrieval log.

- ``memory_episodes``: an episode is a row of ``memory_facts`` (its text is the fact's value,
  so the word index, the semantic leg, history, feedback and its slot's prune policy serve it
  as they serve any fact) plus this row: when it happened, its session and run, title, task,
  outcome, score and other data (a JSON object). Keyed by the fact's id, which a fact keeps
  across updates, restores and imports.
- ``memory_provenance``: which facts were written from which episode, one row per link, so
  "which facts came from this run?" and "which run did this fact come from?" are one indexed
  query each. The links outlive a pruned fact or episode, as history does.
- ``memory_retrievals`` and ``memory_retrieval_items``: a context build that was asked to be
  recorded (the query, when, for which session and run) and what it considered, in the order
  of the prompt: each fact or episode with its value as the prompt had it, its relevance, and
  whether it was included or cut (and why).

Only new tables: a file from before this migration keeps every fact, and works unchanged.
"""

STATEMENTS = [
    """
    CREATE TABLE memory_episodes (
        fact_id TEXT PRIMARY KEY,
        happened_at INTEGER NOT NULL,
        session TEXT,
        run TEXT,
        title TEXT,
        task TEXT,
        outcome TEXT,
        score REAL,
        data TEXT
    ) WITHOUT ROWID""",
    "CREATE INDEX memory_episodes_happened ON memory_episodes (happened_at)",
    """
    CREATE INDEX memory_episodes_session ON memory_episodes (session, happened_at)
    WHERE session IS NOT NULL""",
    "CREATE INDEX memory_episodes_run ON memory_episodes (run) WHERE run IS NOT NULL",
    """
    CREATE TABLE memory_provenance (
        fact_id TEXT NOT NULL,
        episode_id TEXT NOT NULL,
        linked_at INTEGER NOT NULL,
        PRIMARY KEY (fact_id, episode_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX memory_provenance_episode ON memory_provenance (episode_id, fact_id)",
    """
    CREATE TABLE memory_retrievals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        query TEXT NOT NULL,
        session TEXT,
        run TEXT,
        tokens INTEGER NOT NULL
    )""",
    "CREATE INDEX memory_retrievals_at ON memory_retrievals (at)",
    """
    CREATE INDEX memory_retrievals_session ON memory_retrievals (session, at)
    WHERE session IS NOT NULL""",
    "CREATE INDEX memory_retrievals_run ON memory_retrievals (run) WHERE run IS NOT NULL",
    """
    CREATE TABLE memory_retrieval_items (
        retrieval_id INTEGER NOT NULL REFERENCES memory_retrievals (id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        fact_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('fact', 'episode')),
        slot TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        relevance REAL,
        included INTEGER NOT NULL CHECK (included IN (0, 1)),
        reason TEXT,
        PRIMARY KEY (retrieval_id, position)
    ) WITHOUT ROWID""",
    "CREATE INDEX memory_retrieval_items_fact ON memory_retrieval_items (fact_id)",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
