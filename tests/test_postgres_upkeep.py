"""The second phase on PostgreSQL (slotmem.pg policies.py, cursors.py, links.py): the command line
with a URL (flush with a mock model, undo-flush, policy, prune, link), the memory's advisory lock
around what decides over many rows, and policies, cursors and links moving file -> server ->
file. The Store-level tests of these run on both backends in test_retention.py,
test_flush_sources.py, test_restore.py, test_links.py and test_protection.py."""

import json

import pytest
from click.testing import CliRunner

from slotmem import Store
from slotmem.cli import cli
from slotmem.errors import InvalidInput, ReadOnlyDatabase, StoreBusy
from slotmem.ingest import cursor
from tests.conftest import BOTH_BACKENDS

pytest_plugins = ["llm_mock"]  # fixtures: mock_models

CHAT = [
    {"role": "user", "content": "I moved from Paris to Berlin last month. I prefer tea."},
    {"role": "assistant", "content": "Noted! Berlin it is."},
]


def fact(key, value, slot="user"):
    return {"slot": slot, "key": key, "value": value, "confidence": 0.9}


def test_the_cli_flushes_into_a_server_and_undoes_it(pg_url, tmp_path, mock_models):
    run = CliRunner().invoke
    assert run(cli, ["remember", "user/home_city", "Lives in Paris.", "-d", pg_url]).exit_code == 0
    with Store(pg_url) as store:  # an agent's fact beside the person's
        store.upsert("user", "drink", "Prefers coffee.", source="agent")
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(CHAT))
    mock_models.plain.enqueue(
        {
            "facts": [
                fact("home_city", "Lives in Berlin."),
                fact("drink", "Prefers tea."),
                fact("pet", "Has a cat named Miso."),
            ]
        }
    )
    flushed = run(cli, ["flush", str(chat), "-m", "mock", "-d", pg_url])
    assert flushed.exit_code == 0, flushed.output
    assert "1 created, 1 updated, 0 unchanged, 1 rejected" in flushed.output, flushed.output
    assert "user/home_city is protected" in flushed.output  # the person's: not the agent's
    again = run(cli, ["flush", str(chat), "-m", "mock", "-d", pg_url])  # no reply queued
    assert again.exit_code == 0 and "nothing new" in again.output
    with Store(pg_url) as store:
        assert store.flush_cursor("chat.json").messages == 2
        assert store.get("user", "drink").value == "Prefers tea."
    undone = run(cli, ["undo-flush", "chat.json", "-d", pg_url])
    assert undone.exit_code == 0, undone.output
    with Store(pg_url) as store:
        assert store.get("user", "home_city").value == "Lives in Paris."
        assert store.get("user", "drink").value == "Prefers coffee."
        assert store.get("user", "pet") is None
        assert {e.key for e in store.history(reason="undo")} == {"drink", "pet"}


def test_the_cli_sets_policies_prunes_and_links_on_a_server(pg_url):
    run = CliRunner().invoke
    with Store(pg_url, create=True, clock=lambda: 1_000) as store:  # an agent's, long ago
        for key in ("a", "b", "c"):
            store.upsert("notes", key, f"note {key}")
        store.upsert("place", "porto", "Porto")
    out = run(cli, ["policy", "notes", "--cap", "1", "-d", pg_url])
    assert out.exit_code == 0, out.output
    bad = run(cli, ["policy", "notes", "--cap", "-1", "-d", pg_url])
    assert bad.exit_code != 0 and bad.output.count("\n") == 1
    shown = {p["slot"]: p for p in json.loads(run(cli, ["policy", "--json", "-d", pg_url]).output)}
    assert shown["notes"]["cap"] == 1 and shown["user"]["cap"] == 500
    pruned = run(cli, ["prune", "-d", pg_url])
    assert pruned.exit_code == 0, pruned.output
    linked = run(cli, ["link", "notes/c", "about", "place/porto", "-d", pg_url])
    assert linked.exit_code == 0, linked.output
    listed = run(cli, ["links", "place/porto", "-d", pg_url])
    assert listed.exit_code == 0 and "about" in listed.output and "notes/c" in listed.output
    about = run(cli, ["about", "Porto", "--json", "-d", pg_url])
    assert about.exit_code == 0, about.output
    assert "notes" in about.output and "about" in about.output
    with Store(pg_url) as store:
        assert store.slots() == {"notes": 1, "place": 1} and store.policy("notes").cap == 1
        assert [link.rel for link in store.links("place", "porto")] == ["about"]


def _hold_the_lock(pg_server, store):
    """Another host's transaction holding the memory's advisory lock."""
    import psycopg

    from slotmem.pg import server

    other = psycopg.connect(pg_server.url, autocommit=False)
    other.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
        (server.lock_key(store.target.memory),),
    )
    return other


def test_what_decides_over_many_rows_waits_for_the_memorys_lock(pg_store, pg_server, clock):
    """undo_flush, prune_slot and the policies take the memory's advisory lock (another host
    holding it: they wait, here until lock_timeout, and change nothing)."""
    agent = "flush:chat.json|model:mock|prompt:1"
    pg_store.upsert("user", "city", "Lives in Paris.", source="cli")
    clock.advance(ms=5)
    pg_store.upsert("user", "city", "Lives in Berlin.", source=agent)
    before = pg_store.export()[1:-1]
    other = _hold_the_lock(pg_server, pg_store)
    try:
        pg_store.conn.execute("SET lock_timeout = '100ms'")
        for call in (
            lambda: pg_store.undo_flush("chat.json"),
            lambda: pg_store.prune_slot("user", cap=0, min_age_days=0),
            lambda: pg_store.set_policy("user", cap=1),
            lambda: pg_store.set_default_policy(cap=1),
        ):
            with pytest.raises(StoreBusy, match="busy"):
                call()
        assert pg_store.undo_flush("chat.json", dry_run=True).changes[0].action == "reverted"
    finally:
        other.rollback()
        other.close()
        pg_store.conn.execute("SET lock_timeout = 0")
    assert pg_store.export()[1:-1] == before
    assert pg_store.undo_flush("chat.json").changes[0].action == "reverted"
    assert pg_store.get("user", "city").value == "Lives in Paris."


def test_a_read_only_server_memory_refuses_these_writes(pg_store, pg_url):
    pg_store.upsert("a", "b", "c")
    with Store(pg_url, readonly=True) as reader:
        for call in (
            lambda: reader.set_policy("a", cap=1),
            lambda: reader.set_default_policy(cap=1),
            lambda: reader.prune_slot("a"),
            lambda: reader.advance_flush_cursor("s", 1, "0" * 64),
            lambda: reader.reset_flush_cursor("s"),
            lambda: reader.undo_flush("s"),
            lambda: reader.link("a", "b", "self", "a", "b"),
            lambda: reader.unlink("a", "b", "self", "a", "b"),
        ):
            with pytest.raises(ReadOnlyDatabase):
                call()
        assert reader.policy("user").cap == 500 and reader.links("a", "b") == []


def _rich_file(path, clock):
    file = Store(path, create=True, clock=clock)
    file.upsert("person", "marta", "Marta is the team's designer")
    file.upsert("place", "porto", "Porto, a city in the north of Portugal", protect=True)
    file.link("person", "marta", "lives_in", "place", "porto", source="cli")
    file.set_policy("user", cap=42, min_age_days=2, description="Maja's own", min_relevance=0.3)
    file.set_policy("notes", cap=7)
    file.set_default_policy(cap=99)
    file.advance_flush_cursor("chat.json", 4, cursor.prefix_hash(CHAT))
    return file


def _moving(store):
    """What an export carries besides facts and history, as comparable records."""
    kinds = ("policy", "default_policy", "cursor", "link")
    return [r for r in store.export() if r.get("type") in kinds]


@pytest.mark.parametrize("mode", ["merge", "replace", "skip-existing"])
def test_policies_cursors_and_links_go_file_to_server_to_file(tmp_path, pg_url, clock, mode):
    with _rich_file(tmp_path / "a.db", clock) as file:
        lines = [json.dumps(r) for r in file.export()]
        moving = _moving(file)
    with Store(pg_url, create=True, clock=clock) as server:
        report = server.import_records(lines, mode=mode)
        assert report.records["links"] == 1 and report.records["flush cursors"] == 1
        assert _moving(server) == moving
        assert server.policy("user").min_relevance == 0.3 and server.default_policy().cap == 99
        [link] = server.links("place", "porto")
        assert (link.from_fact.key, link.rel, link.source) == ("marta", "lives_in", "cli")
        again = server.import_records(lines, mode=mode)  # nothing new the second time
        assert (again.records["links"], again.records["policies"]) == (0, 0)
        back = [json.dumps(r) for r in server.export()]
    with Store(tmp_path / "b.db", create=True, clock=clock) as copy:
        copy.import_records(back, mode=mode)
        assert _moving(copy) == moving


def test_skip_existing_keeps_a_policy_set_on_the_server(tmp_path, pg_store, clock):
    with _rich_file(tmp_path / "a.db", clock) as file:
        lines = [json.dumps(r) for r in file.export()]
    pg_store.set_policy("user", cap=5)
    pg_store.set_default_policy(cap=3)
    pg_store.import_records(lines, mode="skip-existing")
    assert (pg_store.policy("user").cap, pg_store.default_policy().cap) == (5, 3)
    assert pg_store.policy("notes").cap == 7  # none here: the file's
    pg_store.import_records(lines, mode="merge")
    assert (pg_store.policy("user").cap, pg_store.default_policy().cap) == (42, 99)


def test_an_import_adds_no_link_from_a_protected_fact_unless_it_is_the_memorys_own(
    tmp_path, pg_store, clock
):
    pg_store.upsert("person", "marta", "Marta", protect=True)
    pg_store.upsert("place", "porto", "Porto")
    with Store(tmp_path / "a.db", create=True, clock=clock) as file:  # another memory's export
        file.upsert("person", "marta", "Marta")
        file.upsert("place", "porto", "Porto")
        file.link("person", "marta", "lives_in", "place", "porto")
        lines = [json.dumps(r) for r in file.export()]
    report = pg_store.import_records(lines)
    assert report.records["links"] == 0 and pg_store.links("person", "marta") == []
    link = {"type": "link", "from_slot": "place", "from_key": "porto", "rel": "near",
            "to_slot": "person", "to_key": "ghost"}  # fmt: skip
    with pytest.raises(InvalidInput, match="no fact person/ghost to link"):
        pg_store.import_records([*lines[:-1], json.dumps(link)], partial=True)
    assert pg_store.links("place", "porto") == []


def test_a_memory_of_the_first_phase_gets_the_built_in_policies(pg_store, pg_url):
    pg_store.upsert("user", "a", "b")
    for table in ("memory_slots", "memory_flush_cursors", "memory_link_history"):
        pg_store.conn.execute(f"DROP TABLE {table}")
    pg_store.conn.execute("DROP TABLE memory_fact_links")
    pg_store.conn.execute("DROP FUNCTION memory_facts_links_bd() CASCADE")
    pg_store.conn.execute(
        "DELETE FROM memory_migrations WHERE name IN "
        "('0004_policies', '0005_flush_cursors', '0006_links')"
    )
    with Store(pg_url) as again:
        assert again.migrated == ["0004_policies", "0005_flush_cursors", "0006_links"]
        assert [p.slot for p in again.policies()] == ["agent", "project", "user"]
        assert again.delete("user", "a")  # the trigger is there again


def test_the_cli_dedupes_a_server(pg_url):
    run = CliRunner().invoke
    with Store(pg_url, create=True) as store:
        store.upsert("user", "coffee_pref", "Drinks a flat white every morning at the Corner Cafe.")
        store.upsert("user", "friend", "Marta lives in Porto.")
        store.upsert(
            "user", "drink.morning", "Every morning drinks a flat white at the Corner Cafe."
        )
    dry = run(cli, ["dedupe", "--dry-run", "-d", pg_url])
    assert dry.exit_code == 0 and "coffee_pref" in dry.output, dry.output
    done = run(cli, ["dedupe", "-d", pg_url])
    assert done.exit_code == 0, done.output
    with Store(pg_url) as store:
        assert sorted(store.slots().items()) == [("user", 2)]
        assert store.get("user", "friend") is not None


@BOTH_BACKENDS
def test_bad_retrievals_are_refused_in_one_line_and_log_nothing(store):
    item = {"id": "a", "slot": "user", "key": "k", "value": "v", "included": True}
    for items, message in (
        ([{"id": "a", "slot": "user", "key": "k"}], "item 0: needs id, slot, key, value and"),
        ([{**item, "relevance": 2}], "item 0: relevance must be a number from 0 to 1"),
        ([item, {**item, "slot": "Not A Slot"}], "item 1: invalid slot"),
        (["a"], "item 0: must be a mapping"),
    ):
        with pytest.raises(InvalidInput, match=message) as caught:
            store.record_retrieval("q", items)
        assert "\n" not in str(caught.value)
    for call, message in (
        (lambda: store.record_retrieval(" ", []), "query must not be empty"),
        (lambda: store.record_retrieval("q", [], tokens=-1), "tokens"),
        (lambda: store.prune_retrievals("soon"), "before 'soon' is neither"),
        (lambda: store.get_retrieval(0), "retrieval id must be a positive integer"),
        (lambda: store.retrievals(limit=-1), "limit"),
    ):
        with pytest.raises(InvalidInput, match=message):
            call()
    assert store.retrievals() == []
    logged = store.record_retrieval("q", [item, {**item, "id": "b", "included": False,
                                               "reason": "over budget"}], run="r1")  # fmt: skip
    assert [(i.position, i.fact_id, i.kind, i.included) for i in logged.items] == [
        (1, "a", "fact", True),
        (2, "b", "fact", False),
    ]
    assert store.retrievals(fact_id="a") == [logged] and store.retrievals(fact_id="b") == []
    assert store.retrievals(run="r2") == [] and store.get_retrieval(logged.id) == logged
