"""How far the flusher has read each conversation, so that flushing it again as it grows sends the
model only what is new.

- ``memory_flush_cursors``: one row per source (the name a flush records as its provenance, such as
  a file name or ``llm:<conversation id>``): ``messages``, how many of the conversation's messages
  have been flushed; ``prefix_hash``, a SHA-256 of those messages, to tell a conversation that grew
  from one that changed; ``flushed_at``, when (epoch milliseconds).
"""

STATEMENTS = [
    """
    CREATE TABLE memory_flush_cursors (
        source TEXT PRIMARY KEY,
        messages INTEGER NOT NULL CHECK (messages >= 0),
        prefix_hash TEXT NOT NULL,
        flushed_at INTEGER NOT NULL
    )""",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
