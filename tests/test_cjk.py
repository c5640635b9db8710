"""Chinese, Japanese and Korean: a trigram index beside the word index, searched with bigrams."""

import pytest

from slotmem.search import plan as lexical
from slotmem.search import terms as query


def keys(store, text, **options):
    return [hit.fact.key for hit in store.query_facts(text, track_access=False, **options)]


def cjk_integrity(store):
    store.conn.execute(
        "INSERT INTO memory_facts_cjk (memory_facts_cjk, rank) VALUES ('integrity-check', 1)"
    )


@pytest.fixture
def cjk_store(store):
    store.upsert_many(
        [
            {"slot": "user", "key": "drink", "value": "我喜欢喝咖啡"},
            {"slot": "user", "key": "tea", "value": "他每天早上喝茶"},
            {"slot": "project", "key": "deploy", "value": "デプロイは金曜日です"},
            {"slot": "project", "key": "review", "value": "コードレビューは月曜日"},
            {"slot": "user", "key": "coffee.ko", "value": "저는 커피를 좋아해요"},
            {"slot": "user", "key": "english", "value": "Maja drinks coffee every morning"},
            {"slot": "user", "key": "mixed", "value": "Python で書かれたツール"},
        ]
    )
    return store


def test_chinese(cjk_store):
    assert keys(cjk_store, "咖啡") == ["drink"]
    assert keys(cjk_store, "我喜欢什么") == ["drink"]
    assert keys(cjk_store, "茶") == ["tea"]  # one character: the prefix of a trigram
    assert set(keys(cjk_store, "喝")) == {"drink", "tea"}
    assert keys(cjk_store, "咖啡店在哪里") == ["drink"]


def test_japanese(cjk_store):
    assert keys(cjk_store, "デプロイ") == ["deploy"]
    assert keys(cjk_store, "金曜日") == ["deploy", "review"]  # 曜日 is in both
    assert keys(cjk_store, "いつデプロイしますか？") == ["deploy"]
    assert keys(cjk_store, "月曜日のレビュー")[0] == "review"


def test_korean_particles_attach_to_words(cjk_store):
    assert keys(cjk_store, "커피") == ["coffee.ko"]


def test_mixed_scripts_in_one_query(cjk_store):
    assert set(keys(cjk_store, "coffee 咖啡")) == {"drink", "english", "coffee.ko"}  # its key
    assert keys(cjk_store, "ツール") == ["mixed"]
    hit = cjk_store.query_facts("咖啡", explain=True)[0]
    assert hit.explanation["terms"]["咖啡"]["tf"] == 1.0 and hit.explanation["matched"] == 1


def test_slots_and_more_grams_rank_first(cjk_store):
    cjk_store.upsert("project", "drink", "项目里没有咖啡")
    hits = cjk_store.query_facts("我喜欢喝咖啡", track_access=False, explain=True)
    assert [(h.fact.slot, h.explanation["matched"]) for h in hits] == [("user", 5), ("project", 1)]
    assert [h.fact.slot for h in cjk_store.query_facts("咖啡", slots=["project"])] == ["project"]


def test_index_follows_updates_and_deletes(cjk_store):
    cjk_store.upsert("user", "drink", "I drink water now")  # CJK -> none: leaves the index
    assert keys(cjk_store, "咖啡") == [] and keys(cjk_store, "water") == ["drink"]
    cjk_store.upsert("user", "drink", "现在喝咖啡")  # none -> CJK: back in
    assert keys(cjk_store, "咖啡") == ["drink"]
    cjk_store.upsert("user", "drink", "现在喝绿茶")  # CJK -> other CJK
    assert keys(cjk_store, "咖啡") == [] and "drink" in keys(cjk_store, "绿茶")
    cjk_store.delete("user", "tea")
    assert keys(cjk_store, "早上") == []
    cjk_integrity(cjk_store)
    count = cjk_store.conn.execute("SELECT count(*) FROM memory_facts_cjk_text").fetchone()[0]
    assert lexical.indexed_rows(cjk_store.conn, lexical.CJK) == count == 5


def test_rebuild_gives_the_same_index(cjk_store):
    before = cjk_store.conn.execute("SELECT term, doc FROM memory_facts_cjk_vocab").fetchall()
    cjk_store.conn.execute("INSERT INTO memory_facts_cjk (memory_facts_cjk) VALUES ('rebuild')")
    cjk_integrity(cjk_store)
    assert (
        cjk_store.conn.execute("SELECT term, doc FROM memory_facts_cjk_vocab").fetchall() == before
    )


def test_english_facts_stay_out_of_the_trigram_index(store):
    store.upsert_many(
        [{"slot": "user", "key": f"k{i}", "value": f"plain text {i}"} for i in range(20)]
    )
    assert lexical.indexed_rows(store.conn, lexical.CJK) == 0
    assert query.parse("plain 文本").grams == ("文本",) and keys(store, "plain 文本")


def test_a_fact_holding_many_expansions_counts_once(store):
    store.upsert("user", "a", "咖啡咖啡店咖啡馆")
    [hit] = store.query_facts("咖啡", explain=True)
    assert hit.explanation["terms"]["咖啡"]["df"] == 1 and hit.score > 0


def test_a_gram_expands_to_at_most_max_expansions(store, monkeypatch):
    monkeypatch.setattr(lexical, "MAX_EXPANSIONS", 3)
    store.upsert_many(
        [{"slot": "user", "key": f"k{i}", "value": f"茶{chr(0x4E00 + i)}"} for i in range(10)]
    )
    [arm] = lexical.plan(store.conn, query.parse("茶")).arms
    assert arm.match.count(" OR ") == 2 and arm.df == 3


def _migration(name):
    import importlib.util

    from slotmem.storage import migrate

    path = migrate.migrations_dir() / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"m_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TEXTS = [
    "plain English",
    "café au lait",  # outside ASCII, not CJK: the GLOB decides
    "Ωmega and Ünïcödé",
    "emoji 🙂 only",
    "ｶﾀｶﾅ halfwidth",  # halfwidth katakana: outside the ranges, as before
    "咖啡",
    "I drink 咖啡 daily",
    "저는 커피",
    "デプロイ",
    "々",
    "\U00020000 extension B",
    "",
]


def test_the_triggers_ascii_check_decides_as_the_glob_alone(store):
    """0019's test (ASCII check, then 0003's GLOB) is true of exactly the texts 0003's was."""
    old, new = _migration("0003_search_indexes"), _migration("0019_cjk_ascii_test")
    conn = store.conn
    for key in ("k", "鍵"):
        for value in TEXTS:
            row = {"key": key, "value": value}
            before = conn.execute(f"SELECT {old._test(':')}", row).fetchone()[0]
            after = conn.execute(f"SELECT {new._test(':')}", row).fetchone()[0]
            assert bool(before) == bool(after), (key, value)


def test_a_bulk_load_indexes_the_cjk_facts_and_only_them(store):
    store.upsert_many(
        [{"slot": "user", "key": f"k{i}", "value": text} for i, text in enumerate(TEXTS) if text]
    )
    indexed = {
        key
        for (key,) in store.conn.execute(
            "SELECT f.key FROM memory_facts f JOIN memory_facts_cjk c ON c.rowid = f.seq"
        )
    }
    assert indexed == {"k5", "k6", "k7", "k8", "k9", "k10"}
    cjk_integrity(store)
    trigger = store.conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'memory_facts_cjk_ai'"
    ).fetchone()[0]
    assert "length(CAST(" in trigger  # migration 0019
