"""CJK search on PostgreSQL: the file's CJK tests' queries find the same facts, ranked and
scored the same, from trigrams in a generated column (migration 0003) searched as the file's
trigram index is."""

import pytest
from test_cjk import TEXTS

from slotmem import Store
from slotmem.search import plan

FACTS = [
    {"slot": "user", "key": "drink", "value": "我喜欢喝咖啡"},
    {"slot": "user", "key": "tea", "value": "他每天早上喝茶"},
    {"slot": "project", "key": "deploy", "value": "デプロイは金曜日です"},
    {"slot": "project", "key": "review", "value": "コードレビューは月曜日"},
    {"slot": "user", "key": "coffee.ko", "value": "저는 커피를 좋아해요"},
    {"slot": "user", "key": "english", "value": "Maja drinks coffee every morning"},
    {"slot": "user", "key": "mixed", "value": "Python で書かれたツール"},
    {"slot": "project", "key": "drink", "value": "项目里没有咖啡"},
    {"slot": "user", "key": "many", "value": "咖啡咖啡店咖啡馆"},
    {"slot": "user", "key": "鍵", "value": "Ωmega and Ünïcödé"},
    *({"slot": "notes", "key": f"t{i}", "value": text} for i, text in enumerate(TEXTS) if text),
]
QUERIES = [  # tests/test_cjk.py's
    "咖啡", "我喜欢什么", "茶", "喝", "咖啡店在哪里", "デプロイ", "金曜日", "いつデプロイしますか？",
    "月曜日のレビュー", "커피", "coffee 咖啡", "ツール", "我喜欢喝咖啡", "plain 文本", "早上",
    "绿茶", "々", "\U00020000", "鍵", "ｶﾀｶﾅ",
]  # fmt: skip


def ranked(store, text, **options):
    return [
        (hit.fact.slot, hit.fact.key, round(hit.score, 9), round(hit.relevance, 9))
        for hit in store.query_facts(text, track_access=False, **options)
    ]


@pytest.fixture
def both(tmp_path, pg_url, clock):
    with (
        Store(tmp_path / "m.db", create=True, clock=clock) as file,
        Store(pg_url, create=True, clock=clock) as server,
    ):
        file.upsert_many(FACTS)
        server.upsert_many(FACTS)
        server.refresh_statistics()
        yield file, server


def test_the_files_cjk_queries_find_the_same_facts(both):
    file, server = both
    found = 0
    for text in QUERIES:
        expected = ranked(file, text)
        assert ranked(server, text) == expected, text
        found += bool(expected)
    assert found >= 15
    for options in ({"slots": ["project"]}, {"limit": 1}, {"min_relevance": 0.2}):
        for text in QUERIES[:8]:
            assert ranked(server, text, **options) == ranked(file, text, **options), text
    mine = server.query_facts("咖啡", explain=True, track_access=False)[0].explanation
    theirs = file.query_facts("咖啡", explain=True, track_access=False)[0].explanation
    assert mine == theirs and mine["terms"]["咖啡"]["tf"] == 1.0


def test_only_cjk_facts_carry_trigrams_and_writes_keep_them(both):
    file, server = both
    held = {
        row["key"]
        for row in server.conn.execute("SELECT key FROM memory_facts WHERE cjk IS NOT NULL")
    }
    indexed = {
        key
        for (key,) in file.conn.execute(
            "SELECT key FROM memory_facts WHERE seq IN (SELECT rowid FROM memory_facts_cjk)"
        )
    }
    assert held == indexed and "english" not in held
    for store in (file, server):
        store.upsert("user", "drink", "I drink water now")  # CJK -> none
        store.delete("user", "tea")
        store.upsert("user", "english", "现在喝绿茶")  # none -> CJK
    server.refresh_statistics()  # the number of facts N: scores equal once counted
    for text in ["咖啡", "早上", "绿茶", "water", "喝"]:
        assert ranked(server, text) == ranked(file, text), text


def test_a_gram_expands_to_at_most_max_expansions(both, monkeypatch):
    file, server = both
    monkeypatch.setattr(plan, "MAX_EXPANSIONS", 2)
    for text in ["咖啡", "喝", "日", "曜日"]:
        assert ranked(server, text) == ranked(file, text), text


def test_facts_written_before_the_migration_get_their_trigrams(pg_url, clock, monkeypatch):
    from slotmem.pg import server

    every = server.migrations()
    monkeypatch.setattr(server, "migrations", lambda: every[:2])  # a memory of phase 1
    with Store(pg_url, create=True, clock=clock) as old:
        old.upsert("user", "drink", "我喜欢喝咖啡")
        assert old.migrated == ["0001_initial", "0002_tags"]
    monkeypatch.setattr(server, "migrations", lambda: every)
    with Store(pg_url, clock=clock) as new:
        assert "0003_vectors_and_cjk" in new.migrated
        assert [hit.fact.key for hit in new.query_facts("咖啡")] == ["drink"]
