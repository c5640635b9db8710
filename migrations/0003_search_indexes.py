"""Search indexes: a smaller word index, document frequencies, and a trigram index for CJK text.

- ``memory_facts_fts`` is rebuilt with ``detail=none``, same columns and tokenizer
  (``porter unicode61 remove_diacritics 2``: porter found more than plain unicode61 on LoCoMo;
  docs/benchmarks.md). Searches only ever match single tokens, so positions are not needed;
  bm25() still scores exactly as before (FTS5 re-reads the matched rows' text), and the index
  shrinks by about 80 bytes per fact. Its triggers from 0001 keep working unchanged.
- ``memory_facts_vocab`` (fts5vocab, row): how many facts hold each stem, for idf and for
  dropping very common terms.
- ``memory_facts_cjk``: a ``trigram`` index of the facts whose key or value holds Chinese,
  Japanese or Korean characters (no spaces between words, so the word index sees a whole run
  as one token). Its content is the view ``memory_facts_cjk_text``, which pads each text with
  two spaces so that every character starts a trigram: a one- or two-character search term is
  then found as the prefix of indexed trigrams (``memory_facts_cjk_vocab``). Own triggers keep
  it in sync; ``'rebuild'`` and ``'integrity-check'`` work on it as on the word index.
"""

# The same ranges as slotmem.search.terms.CJK_RANGES, frozen here.
CJK_TEST = (
    "({key} || ' ' || {value}) GLOB "
    "'*[\u1100-\u11ff\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]*'"
)
PAD = "|| '  '"


def _test(prefix: str) -> str:
    return CJK_TEST.format(key=f"{prefix}key", value=f"{prefix}value")


STATEMENTS = [
    "DROP TABLE memory_facts_fts",
    """
    CREATE VIRTUAL TABLE memory_facts_fts USING fts5(
        key, value, content='memory_facts', content_rowid='seq',
        tokenize='porter unicode61 remove_diacritics 2', detail=none
    )""",
    "INSERT INTO memory_facts_fts (memory_facts_fts) VALUES ('rebuild')",
    "CREATE VIRTUAL TABLE memory_facts_vocab USING fts5vocab(memory_facts_fts, row)",
    f"""
    CREATE VIEW memory_facts_cjk_text AS
    SELECT seq, key {PAD} AS key, value {PAD} AS value FROM memory_facts WHERE {_test("")}""",
    """
    CREATE VIRTUAL TABLE memory_facts_cjk USING fts5(
        key, value, content='memory_facts_cjk_text', content_rowid='seq',
        tokenize='trigram', detail=none
    )""",
    "CREATE VIRTUAL TABLE memory_facts_cjk_vocab USING fts5vocab(memory_facts_cjk, row)",
    f"""
    CREATE TRIGGER memory_facts_cjk_ai AFTER INSERT ON memory_facts WHEN {_test("new.")} BEGIN
        INSERT INTO memory_facts_cjk (rowid, key, value)
        VALUES (new.seq, new.key {PAD}, new.value {PAD});
    END""",
    f"""
    CREATE TRIGGER memory_facts_cjk_ad AFTER DELETE ON memory_facts WHEN {_test("old.")} BEGIN
        INSERT INTO memory_facts_cjk (memory_facts_cjk, rowid, key, value)
        VALUES ('delete', old.seq, old.key {PAD}, old.value {PAD});
    END""",
    f"""
    CREATE TRIGGER memory_facts_cjk_au AFTER UPDATE OF key, value ON memory_facts BEGIN
        INSERT INTO memory_facts_cjk (memory_facts_cjk, rowid, key, value)
        SELECT 'delete', old.seq, old.key {PAD}, old.value {PAD} WHERE {_test("old.")};
        INSERT INTO memory_facts_cjk (rowid, key, value)
        SELECT new.seq, new.key {PAD}, new.value {PAD} WHERE {_test("new.")};
    END""",
    "INSERT INTO memory_facts_cjk (memory_facts_cjk) VALUES ('rebuild')",
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
