"""Facts a person protects from agents, and a word index that datasette and sqlite-utils find.

- ``memory_facts.protected_at``: when a person protected the fact (NULL: not protected). An
  agent (MCP, the llm toolbox, LangGraph's store) cannot overwrite or forget a protected fact
  unless it was started with leave to. Facts written until now with the command line (source
  ``cli``) were written by a person: they are protected from now on, as new ones will be.
- The word index reads ``memory_facts`` itself, declared ``content="memory_facts"`` (double
  quotes): the convention by which datasette (``?_search=``) and ``sqlite-utils search`` find a
  table's full-text index. Its slot tag (0004) becomes ``memory_facts.slot_tag``, a virtual
  generated column (computed when read, nothing stored), so the index needs no view. The same
  columns, tokenizer, ``detail=none`` and triggers: the index is rebuilt once, and scores as
  before.
"""

TAG = "'slot' || lower(hex(slot)) || 'x'"  # as in 0004

STATEMENTS = [
    "ALTER TABLE memory_facts ADD COLUMN protected_at INTEGER",
    "UPDATE memory_facts SET protected_at = updated_at WHERE source = 'cli'",
    f"ALTER TABLE memory_facts ADD COLUMN slot_tag TEXT GENERATED ALWAYS AS ({TAG}) VIRTUAL",
    "DROP TABLE memory_facts_fts",
    "DROP VIEW memory_facts_fts_text",
    """
    CREATE VIRTUAL TABLE memory_facts_fts USING fts5(
        key, value, slot_tag, content="memory_facts", content_rowid='seq',
        tokenize='porter unicode61 remove_diacritics 2', detail=none
    )""",
    "INSERT INTO memory_facts_fts (memory_facts_fts) VALUES ('rebuild')",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
