"""A memory on PostgreSQL (slotmem.pg): the Store's core operations, the same on a file and on
the server (the ``memory`` fixture runs each test on both), and what PostgreSQL refuses."""

import json

import pytest

from slotmem import Store
from slotmem.errors import (
    DatabaseNotFound,
    ForeignDatabase,
    InvalidInput,
    ProtectedFact,
    SchemaTooNew,
    SlotmemError,
    StorageError,
)


@pytest.fixture(params=["file", "postgresql"])
def memory(request, tmp_path, clock):
    if request.param == "file":
        target = tmp_path / "m.db"
    else:
        target = request.getfixturevalue("pg_url")
    with Store(target, create=True, clock=clock) as mem:
        yield mem


def test_a_url_opens_a_postgres_store_and_a_path_a_file(pg_url, tmp_path):
    from slotmem.pg.store import PostgresStore
    from slotmem.store import Store as FileStore

    with Store(pg_url, create=True) as server, Store(tmp_path / "a.db", create=True) as file:
        assert isinstance(server, PostgresStore)
        assert isinstance(file, FileStore)
        from slotmem.pg import server as pg_server

        assert server.migrated == [name for name, _ in pg_server.migrations()]
        assert server.migrated[:3] == ["0001_initial", "0002_tags", "0003_vectors_and_cjk"]
    with Store(pg_url) as again:  # migrated once: a second open applies nothing
        assert again.migrated == []


def test_upsert_history_and_key_forms(memory, clock):
    assert memory.upsert("user", "name", "Marta").action == "created"
    clock.advance(ms=5)
    result = memory.upsert("user", "Name", "Marta Silva", source="chat")
    assert (result.action, result.fact.key, result.previous.value) == ("updated", "name", "Marta")
    assert memory.upsert("user", "name", "Marta Silva", source="chat").action == "unchanged"
    assert memory.get("user", "NAME").value == "Marta Silva"
    entries = memory.history("user", "name")
    assert [(e.value, e.reason, e.version) for e in entries] == [("Marta", "update", 1)]
    assert memory.history(reason="update")[0].value == "Marta"
    assert memory.delete("user", "name", source="me")
    assert memory.get("user", "name") is None
    assert not memory.delete("user", "name")
    assert [(e.reason, e.version) for e in memory.history("user", "name")] == [
        ("delete", 2),
        ("update", 1),
    ]


def test_upsert_many_is_one_batch(memory):
    results = memory.upsert_many(
        [{"slot": "p", "key": "a", "value": "1"}, {"slot": "p", "key": "b", "value": "2"}]
    )
    assert [r.action for r in results] == ["created", "created"]
    with pytest.raises(InvalidInput, match="item 1"):
        memory.upsert_many([{"slot": "p", "key": "c", "value": "3"}, {"slot": "p", "key": "d"}])
    assert memory.get("p", "c") is None  # the bad item rejected the batch


def test_list_orders_slots_and_filters(memory, clock):
    for key in ["b", "a", "c"]:
        memory.upsert("s", key, f"value {key}", source="tool:x" if key == "a" else None)
        clock.advance(ms=1)
    memory.upsert("t", "z", "other slot")
    assert [f.key for f in memory.list_facts("s", order="key")] == ["a", "b", "c"]
    assert [f.key for f in memory.list_facts("s", order="created")] == ["c", "a", "b"]
    assert [f.key for f in memory.list_facts(["s", "t"], order="key", limit=2, offset=1)] == [
        "b",
        "c",
    ]
    assert [f.key for f in memory.list_facts(source="TOOL")] == ["a"]
    assert memory.slots() == {"s": 3, "t": 1}
    assert memory.slot_names("*") == ["s", "t"]
    with pytest.raises(InvalidInput, match="order must be"):
        memory.list_facts(order="nope")


def test_protection_guards_agents(memory):
    memory.upsert("user", "diet", "vegetarian", protect=True)
    with pytest.raises(ProtectedFact):
        memory.upsert("user", "diet", "vegan", allow_protected=False)
    with pytest.raises(ProtectedFact):
        memory.delete("user", "diet", allow_protected=False)
    assert (
        memory.upsert_many(
            [{"slot": "user", "key": "diet", "value": "vegan"}], skip_protected=True
        )[0].action
        == "protected"
    )
    assert memory.get("user", "diet").value == "vegetarian"
    memory.unprotect("user", "diet")
    assert memory.upsert("user", "diet", "vegan", allow_protected=False).action == "updated"


def test_expiry_and_prune(memory, clock):
    memory.upsert("tmp", "otp", "123456", ttl="1h")
    memory.upsert("tmp", "keep", "forever")
    clock.advance(days=1)
    assert memory.get("tmp", "otp") is None
    assert [f.key for f in memory.list_facts("tmp")] == ["keep"]
    assert not memory.query_facts("123456")
    reports = memory.prune()
    assert [f.key for r in reports for f in r.expired] == ["otp"]
    assert memory.history("tmp", "otp")[0].reason == "expired"


def test_prune_trims_a_slot_over_the_default_cap(memory, clock):
    memory.upsert_many([{"slot": "s", "key": f"k{i}", "value": f"v{i}"} for i in range(503)])
    memory.pin("s", "k0")
    clock.advance(days=60)
    report = next(r for r in memory.prune() if r.slot == "s")
    assert (report.count, len(report.removed)) == (503, 3)
    assert memory.get("s", "k0") is not None  # pinned: never pruned
    assert len(memory.history(reason="prune")) == 3


def test_rate_pin_and_search(memory):
    memory.upsert("user", "city", "Marta lives in Lisbon near the river")
    memory.upsert("user", "drink", "Marta drinks coffee every morning")
    memory.upsert("project", "db", "The memory lives in PostgreSQL")
    assert memory.rate("user", "city", 3, "right").quality == 3
    assert memory.pin("user", "city").pinned
    assert not memory.unpin("user", "city").pinned
    hits = memory.query_facts("where does Marta live?")
    assert hits[0].fact.key == "city"
    assert hits[0].fact.access_count == 1
    assert memory.get("user", "city").access_count == 1  # counted in the memory too
    assert [h.fact.key for h in memory.query_facts("Marta", slots="project")] == []
    with pytest.raises(InvalidInput):
        memory.rate("user", "nobody", 1)


def test_tags(memory):
    result = memory.upsert("user", "city", "Lisbon", tags=["home", "place"])
    assert result.fact.tags == ("home", "place")
    memory.upsert("user", "city", "Porto")  # tags=None keeps them
    assert memory.get("user", "city").tags == ("home", "place")
    memory.upsert_many(
        [{"slot": "user", "key": "job", "value": "Porto port pilot", "tags": ["work"]}]
    )
    assert memory.tag("user", "job", "place").tags == ("place", "work")
    assert memory.untag("user", "city", "home").tags == ("place",)
    assert [f.key for f in memory.list_facts(tags=["place"], order="key")] == ["city", "job"]
    assert [f.key for f in memory.list_facts(tags=["place", "work"])] == ["job"]
    hits = memory.query_facts("Porto", tags=["work"])
    assert [(h.fact.key, h.fact.tags) for h in hits] == [("job", ("place", "work"))]
    assert memory.upsert("user", "city", "Porto", tags=[]).fact.tags == ()
    with pytest.raises(InvalidInput):
        memory.tag("user", "city", "Not A Tag!")
    with pytest.raises(InvalidInput, match="at most"):
        memory.tag("user", "city", *[f"t{i}" for i in range(40)])
    assert memory.get("user", "city").tags == ()  # refused whole


def test_a_persons_tags_stay_when_an_agent_writes(memory):
    memory.upsert("user", "diet", "vegetarian", protect=True, tags=["food"])
    with pytest.raises(ProtectedFact):
        memory.upsert("user", "diet", "vegetarian", tags=["x"], allow_protected=False)
    with pytest.raises(ProtectedFact):
        memory.tag("user", "diet", "x", allow_protected=False)
    assert memory.get("user", "diet").tags == ("food",)


def test_a_new_word_is_found_before_statistics_are_refreshed(pg_store):
    pg_store.upsert("a", "one", "apples and pears")
    assert pg_store.query_facts("apples")  # the first search refreshes the statistics
    pg_store.upsert("a", "two", "zanzibar holiday")  # a term the statistics do not hold
    assert [h.fact.key for h in pg_store.query_facts("zanzibar")] == ["two"]


def test_export_import_round_trip_within_the_server(pg_store, pg_url, clock):
    pg_store.upsert("user", "name", "Marta")
    pg_store.upsert("user", "name", "Marta Silva")
    pg_store.rate("user", "name", 2)
    records = pg_store.export()
    assert records[0]["slotmem"] == "export" and records[-1]["records"] == len(records) - 2
    other_url = pg_url.rsplit("=", 1)[0] + "=copy_" + pg_url.rsplit("=", 1)[1]
    with Store(other_url, create=True, clock=clock) as copy:
        report = copy.import_records([json.dumps(r) for r in records])
        assert report.counts() == {"added": 1}
        assert copy.get("user", "name").value == "Marta Silva"
        assert copy.get("user", "name").quality == 2
        assert [e.value for e in copy.history("user", "name")] == ["Marta"]
        dry = copy.import_records([json.dumps(r) for r in records], mode="replace", dry_run=True)
        assert dry.dry_run


# -- what PostgreSQL refuses, in one line -------------------------------------------------------
@pytest.mark.parametrize(
    "url, message",
    [
        ("postgresql://", "not a PostgreSQL URL"),
        ("postgresql://h:notaport/db", "not a PostgreSQL URL"),
        ("postgresql://h/db?memory=Bad-Name", "a memory's name"),
        ("postgresql://h/db?memory=1x", "a memory's name"),
    ],
)
def test_bad_urls_are_one_line_errors(url, message):
    with pytest.raises(InvalidInput, match=message) as caught:
        Store(url, create=True)
    assert "\n" not in str(caught.value)


def test_an_unreachable_server_is_one_line(pg_server):
    from pg_server import free_port

    url = f"postgresql://postgres:secret@127.0.0.1:{free_port()}/postgres?connect_timeout=2"
    with pytest.raises(StorageError, match="cannot reach PostgreSQL at") as caught:
        Store(url, create=True)
    assert "\n" not in str(caught.value) and "secret" not in str(caught.value)


def test_a_missing_memory_is_not_created_by_a_read(pg_url):
    with pytest.raises(DatabaseNotFound, match="no such memory"):
        Store(pg_url)


def test_unsupported_operations_say_so_in_one_line(pg_store):
    with pytest.raises(SlotmemError, match=r"^backup is file-only \(Litestream/WAL"):
        pg_store.backup("/tmp/x.db")
    with pytest.raises(AttributeError):
        pg_store.no_such_method  # noqa: B018


def test_a_schema_that_is_not_slotmems_is_refused(pg_server, pg_url):
    import psycopg

    name = pg_url.rsplit("=", 1)[1]
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
        conn.execute(f"CREATE TABLE {name}.orders (id int)")
    with pytest.raises(ForeignDatabase, match="not slotmem's"):
        Store(pg_url, create=True)


def test_an_older_memory_gets_the_migrations_it_lacks(pg_store, pg_url):
    pg_store.upsert("a", "b", "c")
    pg_store.conn.execute("DROP TABLE memory_fact_tags")  # as the first release made it
    pg_store.conn.execute("DELETE FROM memory_migrations WHERE name = '0002_tags'")
    with Store(pg_url) as again:
        assert again.migrated == ["0002_tags"]
        assert again.tag("a", "b", "x").tags == ("x",)


def test_a_memory_migrated_by_a_newer_slotmem_is_refused(pg_store, pg_url):
    pg_store.conn.execute("INSERT INTO memory_migrations (name) VALUES ('9999_future')")
    with pytest.raises(SchemaTooNew, match="newer slotmem"):
        Store(pg_url)


def test_every_store_method_is_there_or_refused_in_one_line(pg_store):
    """A PostgresStore has every public method of the Store, except what only a file has,
    which is refused in one line; nothing falls through to an AttributeError."""
    from slotmem.pg.store import FILE_ONLY
    from slotmem.store import Store as FileStore

    for name in sorted(n for n in dir(FileStore) if not n.startswith("_")):
        if name in FILE_ONLY:
            with pytest.raises(SlotmemError) as caught:
                getattr(pg_store, name)
            assert "\n" not in str(caught.value) and name in str(caught.value)
        else:
            assert callable(getattr(pg_store, name)) or name == "conn", name


# -- the command line ------------------------------------------------------------------------
def test_the_cli_takes_a_url_with_d_and_slotmem_db(pg_url):
    from click.testing import CliRunner

    from slotmem.cli import cli

    run = CliRunner().invoke
    missing = run(cli, ["get", "user/name", "-d", pg_url])  # a read creates no memory
    assert missing.exit_code == 1 and "no such memory" in missing.output
    assert run(cli, ["-d", pg_url, "remember", "user/name", "Marta lives in Lisbon"]).exit_code == 0
    assert run(cli, ["get", "user/name", "-d", pg_url]).output.strip() == "Marta lives in Lisbon"
    found = run(cli, ["search", "where does Marta live", "--json"], env={"SLOTMEM_DB": pg_url})
    assert found.exit_code == 0 and json.loads(found.output)[0]["key"] == "name"
    context = run(cli, ["context", "Marta", "-d", pg_url])
    assert "Marta lives in Lisbon" in context.output
    stats = run(cli, ["stats", "-d", pg_url])
    assert "backend: postgresql" in stats.output
    refused = run(cli, ["backup", "copy.db", "-d", pg_url])
    assert refused.exit_code == 1
    assert refused.output.startswith("Error: backup is file-only")
    assert refused.output.count("\n") == 1
    refused = run(cli, ["replicate", "--to", "/tmp/replica", "-d", pg_url])
    assert refused.exit_code == 1
    assert refused.output.startswith("Error: replicate is file-only")
    with Store(pg_url) as store:
        assert store.get("user", "name").access_count == 2  # the search and the context


def test_cli_export_and_import_with_a_url(pg_url, tmp_path):
    from click.testing import CliRunner

    from slotmem.cli import cli

    run = CliRunner().invoke
    file = tmp_path / "m.db"
    assert run(cli, ["remember", "user/name", "Marta", "-d", str(file)]).exit_code == 0
    out = tmp_path / "m.jsonl"
    assert run(cli, ["export", "-o", str(out), "-d", str(file)]).exit_code == 0
    imported = run(cli, ["import", str(out), "--trusted", "-d", pg_url])
    assert imported.exit_code == 0, imported.output
    assert run(cli, ["get", "user/name", "-d", pg_url]).output.strip() == "Marta"


def test_prune_and_the_first_search_refresh_the_statistics(pg_store, clock):
    pg_store.upsert("a", "one", "apples and pears")
    assert pg_store.stats()["statistics_refreshed_at"] is None
    pg_store.query_facts("pears")
    assert pg_store.stats()["statistics_refreshed_at"] == clock.now
    clock.advance(ms=5)
    pg_store.prune()
    assert pg_store.stats()["statistics_refreshed_at"] == clock.now


def test_cjk_search_finds_a_chinese_fact(pg_store):  # the file's ranking: test_postgres_cjk.py
    pg_store.upsert("a", "city", "我住在北京")
    assert [hit.fact.key for hit in pg_store.query_facts("北京")] == ["city"]


def test_a_search_does_not_wait_for_a_writer_holding_the_row(pg_store, pg_server):
    import psycopg

    pg_store.upsert("user", "city", "Marta lives in Lisbon")
    pg_store.conn.execute("SET lock_timeout = '20s'")  # without SKIP LOCKED: an error, not a hang
    with psycopg.connect(pg_server.url, autocommit=False) as writer:
        writer.execute(f"SET search_path TO {pg_store.target.memory}")
        writer.execute("SELECT * FROM memory_facts FOR UPDATE")  # a writer mid-transaction
        (hit,) = pg_store.query_facts("Lisbon")
        assert hit.fact.access_count == 0  # not counted this time
        writer.rollback()
    (hit,) = pg_store.query_facts("Lisbon")
    assert hit.fact.access_count == 1


def test_a_read_only_store_refuses_writes(pg_store, pg_url):
    from slotmem.errors import ReadOnlyDatabase

    pg_store.upsert("a", "b", "c")
    with Store(pg_url, readonly=True) as reader:
        assert reader.get("a", "b").value == "c"
        with pytest.raises(ReadOnlyDatabase):
            reader.upsert("a", "b", "d")
        assert reader.query_facts("c")[0].fact.access_count == 0  # a reader counts nothing
    assert pg_store.get("a", "b").value == "c"


def test_restore_and_renew(memory, clock):
    memory.upsert("user", "city", "Lisbon", tags=["home"])
    clock.advance(ms=5)
    memory.upsert("user", "city", "Porto")
    restored = memory.restore("user", "city")
    assert (restored.action, restored.fact.value, restored.previous.value) == (
        "restored",
        "Lisbon",
        "Porto",
    )
    assert memory.get("user", "city").tags == ("home",)
    assert [e.reason for e in memory.history("user", "city")] == ["restore", "update"]
    memory.delete("user", "city")
    back = memory.restore("user", "city", version=2)  # the value the restore replaced
    assert (back.fact.value, back.previous) == ("Porto", None)
    assert memory.get("user", "city").value == "Porto"
    with pytest.raises(InvalidInput, match="has no version 9"):
        memory.restore("user", "city", version=9)
    with pytest.raises(InvalidInput, match="has no history"):
        memory.restore("user", "nothing")
    memory.upsert("tmp", "otp", "1", ttl="1h")
    assert memory.renew("tmp", "otp", "2h").expires_at == clock.now + 2 * 3_600_000
    assert memory.renew("user", "city", "1h") is None  # permanent: stays so


def test_async_store_over_a_server(pg_url, pg_store):
    import asyncio

    from slotmem.aio import AsyncStore

    async def main():
        async with AsyncStore(pg_url) as mem:
            await mem.upsert("user", "city", "Marta lives in Lisbon")
            hits = await mem.query_facts("Lisbon")
        async with AsyncStore(pg_store) as same:  # an open PostgresStore
            assert (await same.get("user", "city")).value == "Marta lives in Lisbon"
        return hits

    assert [h.fact.key for h in asyncio.run(main())] == ["city"]


def test_without_psycopg_a_url_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    with pytest.raises(StorageError, match=r"needs psycopg 3: pip install 'slotmem\[postgres\]'"):
        Store("postgresql://u@127.0.0.1:1/db", create=True)


def test_a_memory_that_grew_refreshes_its_statistics_in_the_background(pg_store, clock):
    import time

    from slotmem.pg import search as pg_search

    pg_store.upsert("a", "seed", "apples")
    pg_store.query_facts("apples")  # the first search counts: 1 fact
    first = pg_store.stats()["statistics_refreshed_at"]
    pg_store.upsert_many(
        [{"slot": "a", "key": f"k{i}", "value": f"pears {i}"} for i in range(pg_search.STALE_MIN)]
    )
    clock.advance(ms=10)
    assert pg_store.query_facts("pears", limit=3)  # answered at once, with the old statistics
    deadline = time.monotonic() + 60
    while pg_store.stats()["statistics_refreshed_at"] == first:
        assert time.monotonic() < deadline, "the statistics were not refreshed"
        time.sleep(0.05)
    assert pg_store.stats()["statistics_refreshed_at"] == clock.now
    assert pg_search.stats(pg_store.conn).facts == pg_search.STALE_MIN + 1


def test_doctor_and_repair(pg_store, pg_url):
    from click.testing import CliRunner

    from slotmem.cli import cli

    pg_store.upsert("a", "b", "apples")
    rows = {row["check"]: row for row in pg_store.doctor()}
    assert rows["lexical statistics"]["ok"] is None  # not counted yet
    assert rows["schema up to date"]["ok"] and rows["lexical terms of every fact"]["ok"]
    pg_store.conn.execute("UPDATE memory_facts SET terms = '{}', length = 0")  # damaged
    assert not pg_store.query_facts("apples")
    bad = {row["check"]: row for row in pg_store.doctor()}["lexical terms of every fact"]
    assert bad["ok"] is False and bad["fix"] == "slotmem doctor --repair"
    done = CliRunner().invoke(cli, ["doctor", "--repair", "-d", pg_url])
    assert done.exit_code == 0, done.output
    assert "recomputed the lexical terms of 1 facts" in done.output
    assert [h.fact.key for h in pg_store.query_facts("apples")] == ["b"]
    assert all(row["ok"] is not False for row in pg_store.doctor())


def test_an_update_with_history_is_four_statements(pg_store, monkeypatch):
    """Semantic search off said, the row locked, the old value archived with the new one
    written, the tags read (and BEGIN, COMMIT): a durable commit's writers wait on fewer round
    trips each."""
    from pg_server import statements_sent

    pg_store.upsert("user", "city", "Lisbon", tags=["home"])
    sent = statements_sent(monkeypatch)
    result = pg_store.upsert("user", "city", "Porto", source="move")
    monkeypatch.undo()
    assert (result.action, result.fact.value, result.fact.tags) == ("updated", "Porto", ("home",))
    assert (result.previous.value, result.previous.tags) == ("Lisbon", ("home",))
    assert [(e.value, e.reason, e.changed_by) for e in pg_store.history("user", "city")] == [
        ("Lisbon", "update", "move")
    ]
    assert pg_store.get("user", "city").value == "Porto"
    assert len(sent) == 4, sent
