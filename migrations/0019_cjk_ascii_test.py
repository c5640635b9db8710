"""The CJK index's triggers (0003_search_indexes.py) test a fact's text with an ASCII check first.

Their ``GLOB`` over the CJK character ranges cost a bulk load about 13 µs per fact, most of a
fact's trigger work besides the word index, though no fact in plain ASCII can hold a CJK
character. Each test now reads ``length(CAST(text AS BLOB)) > length(text)`` first (more UTF-8
bytes than characters: a character outside ASCII), which SQLite answers by one scan of the bytes,
and runs the ``GLOB`` only then. The same facts are indexed: the check is true of every text the
``GLOB`` matches. Nothing is re-indexed; the view used by ``'rebuild'`` tests the same way.
"""

# The same ranges as slotmem.search.terms.CJK_RANGES (and 0003), frozen here.
CJK_GLOB = (
    "GLOB '*[\u1100-\u11ff\u3005-\u3007\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]*'"
)
PAD = "|| '  '"


def _test(prefix: str) -> str:
    text = f"({prefix}key || ' ' || {prefix}value)"
    return f"(length(CAST({text} AS BLOB)) > length({text}) AND {text} {CJK_GLOB})"


STATEMENTS = [
    "DROP TRIGGER memory_facts_cjk_ai",
    "DROP TRIGGER memory_facts_cjk_ad",
    "DROP TRIGGER memory_facts_cjk_au",
    "DROP VIEW memory_facts_cjk_text",
    f"""
    CREATE VIEW memory_facts_cjk_text AS
    SELECT seq, key {PAD} AS key, value {PAD} AS value FROM memory_facts WHERE {_test("")}""",
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
]


def migrate(db):
    for statement in STATEMENTS:
        db.execute(statement)
