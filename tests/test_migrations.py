"""A file made before 0003_search_indexes upgrades: its facts are searchable the new way."""

import importlib.util

from sqlite_utils import Database

from slotmem import Store
from slotmem.storage import db, migrate
from tests.conftest import fts_integrity_error

FACTS = [
    ("f1", "user", "timezone", "Europe/Stockholm"),
    ("f2", "user", "drink", "我喜欢喝咖啡"),
    ("f3", "project", "deploy", "デプロイは金曜日です"),
    ("f4", "project", "stack", "Python with FastAPI, deployed on Fridays"),
]


def make_old_file(path, before="0003_search_indexes"):
    """The schema as the migrations before ``before`` left it, with facts written then."""
    conn = db.connect(path, "rwc")
    names = migrate.migration_names()
    migrate.migration_set().apply(Database(conn), stop_before=names[names.index(before) :])
    conn.executemany(
        "INSERT INTO memory_facts (id, slot, key, value, created_at, updated_at, last_accessed) "
        "VALUES (?, ?, ?, ?, 1, 1, 1)",
        FACTS,
    )
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memory_facts_fts'").fetchone()[
        0
    ]
    conn.close()
    return sql


def test_file_made_by_earlier_migrations_upgrades(db_path):
    assert "detail" not in make_old_file(db_path)
    with Store(db_path, create=True) as store:
        assert "0003_search_indexes" in store.migrated
        sql = store.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'memory_facts_fts'"
        ).fetchone()[0]
        assert "detail=none" in sql and "slot_tag" in sql and fts_integrity_error(store) is None
        store.conn.execute(
            "INSERT INTO memory_facts_cjk (memory_facts_cjk, rank) VALUES ('integrity-check', 1)"
        )
        search = lambda text: [h.fact.key for h in store.query_facts(text, track_access=False)]
        assert search("Stockholm") == ["timezone"]
        assert search("deploying on friday") == ["stack", "deploy"]  # value and stem; key
        assert search("咖啡") == ["drink"] and search("金曜日") == ["deploy"]
        store.upsert("user", "drink", "tea, now")  # the old rows' triggers still work
        assert search("咖啡") == [] and search("tea") == ["drink"]
        assert fts_integrity_error(store) is None


def test_file_made_before_pins_opens_and_works(db_path):
    """A file from before 0006_pins_and_floors: its facts and policies work, pins and floors too."""
    make_old_file(db_path, before="0006_pins_and_floors")
    with Store(db_path) as store:
        assert store.migrated[0] == "0006_pins_and_floors"
        assert store.get("user", "timezone").pinned_at is None
        assert store.policy("user").min_relevance is None
        assert [h.fact.key for h in store.query_facts("Stockholm")] == ["timezone"]
        store.pin("project", "stack")
        store.set_policy("project", cap=10, min_relevance=0.5)
        assert store.policy("project").min_relevance == 0.5
        assert store.list_facts(pinned=True)[0].key == "stack"
        from slotmem.agents.context import build_context

        assert build_context(store, "nothing at all").startswith(
            "## What I know about the project\n- **stack**: Python with FastAPI"
        )
    with Store(db_path) as again:  # opening it again applies nothing
        assert again.migrated == [] and "0006_pins_and_floors" in again.stats()["migrations"]


def test_file_made_before_0008_protects_what_a_person_wrote(db_path):
    """0008: facts the command line wrote are protected; the word index is rebuilt over
    memory_facts itself and still finds, scores and follows every write."""
    make_old_file(db_path, before="0008_protection_and_browsing")
    conn = db.connect(db_path, "rw")
    conn.execute("UPDATE memory_facts SET source = 'cli', updated_at = 7 WHERE key = 'timezone'")
    conn.close()
    with Store(db_path) as store:
        assert store.migrated[0] == "0008_protection_and_browsing"
        assert store.get("user", "timezone").protected_at == 7
        assert not store.get("project", "stack").protected
        sql = store.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'memory_facts_fts'"
        ).fetchone()[0]
        assert 'content="memory_facts"' in sql and "detail=none" in sql
        assert fts_integrity_error(store) is None
        search = lambda text, **kw: [h.fact.key for h in store.query_facts(text, **kw)]
        assert search("deploying on friday", track_access=False) == ["stack", "deploy"]
        assert search("stockholm", slots=["project"]) == []  # the slot tag still filters
        store.upsert("project", "stack", "Rust, shipped on Mondays")
        store.delete("user", "timezone")
        assert search("deploying", track_access=False) == ["deploy"] and search("rust") == ["stack"]
        assert fts_integrity_error(store) is None


def test_file_made_before_expiry_opens_and_its_history_restores(db_path, clock):
    """A file from before 0007_time_and_life: old history rows restore, facts can expire."""
    make_old_file(db_path, before="0007_time_and_life")
    conn = db.connect(db_path, "rw")
    conn.execute(
        "INSERT INTO memory_fact_history (fact_id, slot, key, value, confidence, quality, source, "
        "created_at, updated_at, last_accessed, access_count, reason, changed_at, changed_by) "
        "VALUES ('f0', 'user', 'home_city', 'Paris', 1, 0, 'cli', 1, 1, 1, 0, 'delete', 2, 'cli')"
    )
    conn.close()
    with Store(db_path, clock=clock) as store:
        assert store.migrated[0] == "0007_time_and_life"
        assert store.get("user", "timezone").expires_at is None
        [entry] = store.history("user", "home_city")
        assert (entry.version, entry.pinned_at, entry.expires_at) == (1, None, None)
        assert store.restore("user", "home_city").fact.id == "f0"
        store.upsert("user", "timezone", "Europe/Oslo", ttl="1h")
        assert store.get("user", "timezone").expires_at == clock.now + 3_600_000


def test_file_with_0008_but_not_0007_gets_0007(db_path):
    """A file a slotmem with 0008 and without 0007 made (they were written side by side)."""
    make_old_file(db_path, before="0007_time_and_life")
    conn = db.connect(db_path, "rw")
    [path] = [p for p in migrate.migration_files() if p.stem.startswith("0008")]
    spec = importlib.util.spec_from_file_location("later_migration", path)
    later = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(later)
    later.migrate(Database(conn))
    conn.execute(
        "INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, 'then')",
        (migrate.MIGRATION_SET, path.stem),
    )
    conn.close()
    with Store(db_path) as store:
        assert store.migrated[0] == "0007_time_and_life"
        store.protect("user", "timezone")
        store.upsert("user", "timezone", "Europe/Oslo", ttl="1h")
        [entry] = store.history("user", "timezone")
        assert entry.protected_at is not None and entry.value == "Europe/Stockholm"
        assert store.get("user", "timezone").expires_at is not None
