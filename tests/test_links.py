"""Links between facts (migrations/0018_links.py): typed and directed, read in both directions,
dropped with either fact and kept in memory_link_history, refused to agents on protected facts,
the ground of ``about``; carried by export and import, the CLI and MCP."""

import json

import pytest

from slotmem import Store
from slotmem.errors import InvalidInput, ProtectedFact
from tests.conftest import BOTH_BACKENDS


def link_rows(store):
    rows = store.conn.execute(
        "SELECT from_seq, rel, to_seq, created_at, source FROM memory_fact_links ORDER BY 1, 2, 3"
    ).fetchall()
    return [tuple(row.values()) if isinstance(row, dict) else tuple(row) for row in rows]


def people(store):
    store.upsert("person", "marta", "Marta is the team's designer")
    store.upsert("place", "porto", "Porto, a city in the north of Portugal")
    store.upsert("org", "acme", "ACME makes anvils")


@BOTH_BACKENDS
def test_link_reads_in_both_directions(store):
    people(store)
    made = store.link("person", "marta", "lives_in", "place", "porto", source="cli")
    assert (made.from_fact.key, made.rel, made.to_fact.key, made.source) == (
        "marta",
        "lives_in",
        "porto",
        "cli",
    )
    store.link("person", "marta", "works_at", "org", "acme")
    again = store.link("person", "marta", "lives_in", "place", "porto")  # no error, kept as made
    assert again.source == "cli" and len(link_rows(store)) == 2
    out = store.links("person", "marta")
    assert [(link.rel, link.to_fact.key) for link in out] == [
        ("lives_in", "porto"),
        ("works_at", "acme"),
    ]
    [incoming] = store.links("place", "porto")
    assert incoming.from_fact.key == "marta" and incoming.from_fact.value.startswith("Marta")
    assert store.links("person", "nobody") == []
    assert incoming.to_dict()["from"] == {
        "slot": "person",
        "key": "marta",
        "value": "Marta is the team's designer",
    }


@BOTH_BACKENDS
def test_an_update_keeps_links_and_unlink_writes_history(store, clock):
    people(store)
    store.link("person", "marta", "lives_in", "place", "porto")
    store.upsert("place", "porto", "Porto, on the Douro")  # same row: the link stays
    assert [link.to_fact.value for link in store.links("person", "marta")] == [
        "Porto, on the Douro"
    ]
    assert store.unlink("person", "marta", "lives_in", "place", "porto", source="me")
    assert not store.unlink("person", "marta", "lives_in", "place", "porto")
    assert link_rows(store) == []
    [gone] = store.link_history("place", "porto")
    assert (gone.from_key, gone.rel, gone.to_key, gone.reason, gone.removed_by) == (
        "marta",
        "lives_in",
        "porto",
        "unlink",
        "me",
    )
    assert gone.removed_at == clock()


@BOTH_BACKENDS
def test_deleting_or_expiring_a_fact_removes_its_links_and_keeps_their_history(store, clock):
    people(store)
    store.upsert("note", "brief", "Marta visits Porto", ttl="1h")
    store.link("person", "marta", "lives_in", "place", "porto")
    store.link("person", "marta", "works_at", "org", "acme")
    store.link("note", "brief", "about", "person", "marta")
    assert store.delete("place", "porto")
    assert [link.rel for link in store.links("person", "marta")] == ["works_at", "about"]
    clock.advance(days=1)
    assert [link.rel for link in store.links("person", "marta")] == ["works_at"]  # expired end
    store.prune()
    assert [(r[1]) for r in link_rows(store)] == ["works_at"]
    history = store.link_history()
    assert [(h.from_key, h.rel, h.to_key, h.reason) for h in history] == [
        ("marta", "lives_in", "porto", "deleted"),
        ("brief", "about", "marta", "deleted"),
    ]
    store.restore("place", "porto")  # a restored fact comes back unlinked: history keeps it
    assert store.links("place", "porto") == []


@BOTH_BACKENDS
def test_a_prune_that_removes_both_facts_of_a_link_names_both_in_its_history(store, clock):
    store.upsert("scratch", "first", "one", ttl="1h")
    store.upsert("scratch", "second", "two", ttl="1h")
    store.link("scratch", "first", "then", "scratch", "second")
    clock.advance(days=1)
    store.prune()  # both expired: removed together
    [gone] = store.link_history()
    assert (gone.from_key, gone.rel, gone.to_key, gone.reason) == (
        "first",
        "then",
        "second",
        "deleted",
    )
    assert link_rows(store) == []


@pytest.mark.parametrize("bad", ["Lives_In", "", "-x", "has space", "x" * 65, "é", "a/b", 7, None])
@BOTH_BACKENDS
def test_a_bad_rel_is_refused_in_one_line_and_changes_nothing(store, bad):
    people(store)
    store.link("person", "marta", "lives_in", "place", "porto")
    before = link_rows(store)
    for call in (
        lambda: store.link("person", "marta", bad, "org", "acme"),
        lambda: store.unlink("person", "marta", bad, "place", "porto"),
    ):
        with pytest.raises(InvalidInput) as caught:
            call()
        assert "\n" not in str(caught.value) and "invalid link type" in str(caught.value)
    assert link_rows(store) == before and store.link_history() == []


@BOTH_BACKENDS
def test_a_bad_source_is_refused_and_changes_nothing(store):
    people(store)
    store.link("person", "marta", "lives_in", "place", "porto")
    for call in (
        lambda: store.link("person", "marta", "works_at", "org", "acme", source="a\nb"),
        lambda: store.unlink("person", "marta", "lives_in", "place", "porto", source="x" * 501),
    ):
        with pytest.raises(InvalidInput, match="source"):
            call()
    assert len(link_rows(store)) == 1 and store.link_history() == []


@BOTH_BACKENDS
def test_a_link_needs_two_live_facts(store, clock):
    people(store)
    store.upsert("note", "brief", "Short", ttl="1h")
    clock.advance(days=1)
    for args, missing in (
        (("person", "marta", "knows", "person", "nobody"), "person/nobody"),
        (("person", "ghost", "knows", "person", "marta"), "person/ghost"),
        (("note", "brief", "about", "person", "marta"), "note/brief"),
    ):
        with pytest.raises(InvalidInput, match=f"no fact {missing} to link"):
            store.link(*args)
    with pytest.raises(InvalidInput, match="no fact person/ghost to unlink"):
        store.unlink("person", "ghost", "knows", "person", "marta")
    assert link_rows(store) == []


@BOTH_BACKENDS
def test_an_agent_cannot_link_from_or_unlink_a_protected_fact(store):
    people(store)
    store.upsert("user", "name", "Marta", protect=True)
    store.link("user", "name", "is", "person", "marta")  # a person's link
    with pytest.raises(ProtectedFact, match="cannot link from"):
        store.link("user", "name", "knows", "org", "acme", allow_protected=False)
    for args in (("user", "name", "is", "person", "marta"),):
        with pytest.raises(ProtectedFact, match="cannot unlink"):
            store.unlink(*args, allow_protected=False)
    # linking to a protected fact does not change it
    store.link("org", "acme", "employs", "user", "name", allow_protected=False)
    with pytest.raises(ProtectedFact, match="cannot unlink"):
        store.unlink("org", "acme", "employs", "user", "name", allow_protected=False)
    assert sorted(r[1] for r in link_rows(store)) == ["employs", "is"]


@BOTH_BACKENDS
def test_about_finds_the_facts_that_name_it_and_their_links_one_hop(store):
    people(store)
    store.upsert("place", "lisbon", "Lisbon, the capital")
    store.upsert("note", "trip", "Trip to Lisbon in May")
    store.link("person", "marta", "lives_in", "place", "porto")
    store.link("org", "acme", "employs", "person", "marta")
    store.link("place", "porto", "near", "place", "lisbon")  # two hops from Marta: not shown
    about = store.about("Marta")
    assert [f.key for f in about.facts] == ["marta"]
    assert [(link.from_fact.key, link.rel, link.to_fact.key) for link in about.links] == [
        ("marta", "lives_in", "porto"),
        ("acme", "employs", "marta"),
    ]
    assert [f.key for f in about.linked] == ["porto", "acme"]
    assert store.about("nobody-here").facts == () and store.about("nobody-here").links == ()
    with pytest.raises(InvalidInput, match="name"):
        store.about("")


@BOTH_BACKENDS
def test_export_and_import_carry_links(store, tmp_path, clock):
    people(store)
    store.link("person", "marta", "lives_in", "place", "porto", source="cli")
    store.link("person", "marta", "works_at", "org", "acme")
    records = store.export()
    links = [r for r in records if r.get("type") == "link"]
    assert links[0] == {
        "type": "link",
        "from_slot": "person",
        "from_key": "marta",
        "rel": "lives_in",
        "to_slot": "place",
        "to_key": "porto",
        "created_at": links[0]["created_at"],
        "source": "cli",
    }
    assert records[-1]["records"] == len(records) - 2  # each link counted in the end marker
    other = Store(tmp_path / "other.db", create=True, clock=clock)
    other.import_records([json.dumps(r) for r in records])
    assert [(l.rel, l.to_fact.key, l.source) for l in other.links("person", "marta")] == [
        ("lives_in", "porto", "cli"),
        ("works_at", "acme", None),
    ]
    again = other.import_records([json.dumps(r) for r in records], partial=True)
    assert again.records["links"] == 0 and len(other.links("person", "marta")) == 2
    # an export of one slot holds the links within it
    assert [r for r in store.export(slot="person") if r.get("type") == "link"] == []


@BOTH_BACKENDS
def test_an_export_without_links_imports_and_a_bad_link_record_is_refused(store):
    fact = {"type": "fact", "slot": "person", "key": "marta", "value": "Marta"}
    store.import_records([json.dumps(fact)], partial=True)
    assert store.links("person", "marta") == []
    link = {
        "type": "link",
        "from_slot": "person",
        "from_key": "marta",
        "rel": "Bad Rel",
        "to_slot": "person",
        "to_key": "marta",
    }
    with pytest.raises(InvalidInput, match="line 2.*invalid link type") as caught:
        store.import_records([json.dumps(fact), json.dumps(link)], partial=True)
    assert "\n" not in str(caught.value)
    missing = {**link, "rel": "knows", "to_key": "nobody"}
    with pytest.raises(InvalidInput, match="line 2.*no fact person/nobody"):
        store.import_records([json.dumps(fact), json.dumps(missing)], partial=True)
    assert link_rows(store) == []


def test_mcp_memory_relations_become_links_beside_the_facts(store):
    from pathlib import Path

    from slotmem.ingest.importers.mcp_memory import import_memory_json

    data = (Path(__file__).parent / "data" / "mcp_memory.json").read_text()
    data += (
        '{"type": "relation", "from": "Project_Atlas", "to": "Stockholm", '
        '"relationType": "Based In"}\n'
        '{"type": "relation", "from": "default_user", "to": "Nobody", "relationType": "knows"}\n'
        '{"type": "relation", "from": "default_user", "to": "Stockholm", "relationType": "!!"}\n'
    )
    dry = import_memory_json(store, data, "memory.json", dry_run=True)
    assert dry.records["links"] == 6 and store.links("user", "default_user") == []
    report = import_memory_json(store, data, "memory.json")
    assert report.records["links"] == 6
    assert store.get("user", "default_user.works_at").value == "Acme_Analytics"  # kept as before
    out = {
        (lk.rel, lk.to_fact.key)
        for lk in store.links("user", "default_user")
        if lk.from_fact.key == "default_user"
    }
    assert out == {
        ("works_at", "Acme_Analytics"),
        ("leads", "Project_Atlas"),
        ("lives_in", "Stockholm.type"),  # an entity without observations: its type's fact
        ("leads", "Project_Borealis"),
    }
    [based] = [lk for lk in store.links("user", "Project_Atlas") if lk.rel == "based_in"]
    assert based.source == "mcp-memory:memory.json"
    assert import_memory_json(store, data, "memory.json").records["links"] == 0
    about = store.about("Acme_Analytics")
    assert ("default_user", "works_at", "Acme_Analytics") in {
        (lk.from_fact.key, lk.rel, lk.to_fact.key) for lk in about.links
    }


def test_mcp_memory_makes_no_link_from_a_protected_fact(store):
    from slotmem.ingest.importers.mcp_memory import import_memory_json

    store.upsert("user", "Maja", "Maja, the owner", protect=True)
    data = (
        '{"type": "entity", "name": "Maja", "entityType": "person", "observations": ["Owner"]}\n'
        '{"type": "entity", "name": "Acme", "entityType": "org", "observations": ["A firm"]}\n'
        '{"type": "relation", "from": "Maja", "to": "Acme", "relationType": "works_at"}\n'
        '{"type": "relation", "from": "Acme", "to": "Maja", "relationType": "employs"}\n'
    )
    report = import_memory_json(store, data, "memory.json")
    assert report.records["links"] == 1 and store.get("user", "Maja").value == "Maja, the owner"
    assert [(lk.from_fact.key, lk.rel, lk.to_fact.key) for lk in store.links("user", "Acme")] == [
        ("Acme", "employs", "Maja")
    ]


def run_cli(*args, path):
    from click.testing import CliRunner

    from slotmem.cli import cli

    return CliRunner().invoke(cli, [*args, "-d", str(path)])


def test_the_command_line_links_unlinks_lists_and_answers_about(db_path):
    with Store(db_path, create=True) as store:
        people(store)
    made = run_cli("link", "person/marta", "lives_in", "place/porto", path=db_path)
    assert made.exit_code == 0 and made.stdout == "linked: person/marta -lives_in-> place/porto\n"
    made = run_cli("link", "person", "marta", "works_at", "org/acme", "--json", path=db_path)
    assert json.loads(made.stdout)["link"]["to"]["key"] == "acme"
    listed = json.loads(run_cli("links", "place", "porto", "--json", path=db_path).stdout)
    assert [(lk["from"]["key"], lk["rel"], lk["source"]) for lk in listed] == [
        ("marta", "lives_in", "cli")
    ]
    shown = run_cli("links", "person/marta", path=db_path).stdout.splitlines()
    assert (
        shown[0] == "person/marta -lives_in-> place/porto: Porto, a city in the north of Portugal"
    )
    about = run_cli("about", "Marta", path=db_path)
    assert about.stdout.splitlines()[0] == "person/marta: Marta is the team's designer"
    assert "  person/marta -works_at-> org/acme: ACME makes anvils" in about.stdout
    data = json.loads(run_cli("about", "Marta", "--json", path=db_path).stdout)
    assert {f["key"] for f in data["linked"]} == {"porto", "acme"}
    gone = run_cli("unlink", "person/marta", "works_at", "org/acme", path=db_path)
    assert gone.stdout == "unlinked: person/marta -works_at-> org/acme\n"
    again = run_cli("unlink", "person/marta", "works_at", "org/acme", path=db_path)
    assert again.exit_code == 0 and "no link" in again.stderr and again.stdout == ""
    with Store(db_path) as store:
        before = link_rows(store)
    for args, code, text in (
        (("link", "person/marta", "Lives In", "place/porto"), 2, "invalid link type"),
        (("link", "person/marta", "knows", "porto"), 2, "SLOT/KEY in TO"),
        (("link", "person/marta", "knows", "place/nowhere"), 1, "no fact place/nowhere"),
        (("unlink", "person/marta", "x" * 65, "place/porto"), 2, "invalid link type"),
    ):
        result = run_cli(*args, path=db_path)
        assert result.exit_code == code, (args, result.output)
        error = [line for line in result.stderr.splitlines() if line.startswith("Error")]
        assert len(error) == 1 and text in error[0], result.stderr
    with Store(db_path) as store:
        assert link_rows(store) == before


def mcp_run(server, steps):
    import asyncio

    from mcp import Client

    async def go():
        async with Client(server) as client:
            return await steps(client)

    return asyncio.run(go())


def test_mcp_link_and_links_through_the_sdk_client(db_path, clock):
    from slotmem.agents.mcp_server import build_server

    with Store(db_path, create=True, clock=clock) as store:
        people(store)
        store.upsert("user", "name", "Maja", protect=True)
    server = build_server(Store(db_path, clock=clock))

    async def steps(client):
        made = await client.call_tool(
            "link",
            {
                "from_slot": "person",
                "from_key": "marta",
                "rel": "lives_in",
                "to_slot": "place",
                "to_key": "porto",
            },
        )
        seen = await client.call_tool("links", {"slot": "place", "key": "porto"})
        bad = await client.call_tool(
            "link",
            {
                "from_slot": "person",
                "from_key": "marta",
                "rel": "Lives In",
                "to_slot": "org",
                "to_key": "acme",
            },
        )
        protected = await client.call_tool(
            "link",
            {
                "from_slot": "user",
                "from_key": "name",
                "rel": "is",
                "to_slot": "person",
                "to_key": "marta",
            },
        )
        removed = await client.call_tool(
            "link",
            {
                "from_slot": "person",
                "from_key": "marta",
                "rel": "lives_in",
                "to_slot": "place",
                "to_key": "porto",
                "remove": True,
            },
        )
        return made, seen, bad, protected, removed

    made, seen, bad, protected, removed = mcp_run(server, steps)
    assert made.structured_content["action"] == "linked"
    [link] = seen.structured_content["links"]
    assert (link["direction"], link["rel"], link["fact"]["key"], link["source"]) == (
        "in",
        "lives_in",
        "marta",
        "mcp",
    )
    assert bad.is_error and protected.is_error and "protected" in str(protected.content)
    assert removed.structured_content["action"] == "unlinked"
    with Store(db_path) as store:
        assert link_rows(store) == []
        assert [(h.reason, h.removed_by) for h in store.link_history()] == [("unlink", "mcp")]


def test_a_scoped_server_links_only_within_its_scope_and_shows_no_link_beyond(db_path):
    from slotmem.agents.mcp_server import build_server

    with Store(db_path, create=True) as store:
        people(store)
        store.upsert("person", "bob", "Bob, Marta's colleague")
        store.link("person", "marta", "lives_in", "place", "porto")
        store.link("person", "bob", "knows", "person", "marta")
    server = build_server(Store(db_path), slots=["person"])

    async def steps(client):
        out = await client.call_tool(
            "link",
            {
                "from_slot": "person",
                "from_key": "marta",
                "rel": "works_at",
                "to_slot": "org",
                "to_key": "acme",
            },
        )
        seen = await client.call_tool("links", {"slot": "person", "key": "marta"})
        beyond = await client.call_tool("links", {"slot": "place", "key": "porto"})
        return out, seen, beyond

    out, seen, beyond = mcp_run(server, steps)
    assert out.is_error and "to_slot" in str(out.content)
    assert [(lk["direction"], lk["fact"]["key"]) for lk in seen.structured_content["links"]] == [
        ("in", "bob")
    ]
    assert beyond.is_error
    with Store(db_path) as store:
        assert len(link_rows(store)) == 2
    from slotmem.agents.tools import AgentMemory
    from slotmem.errors import NotPermitted

    memory = AgentMemory(Store(db_path), slots=["person"])
    with pytest.raises(NotPermitted, match="outside this agent's scope"):
        memory.link("person", "marta", "works_at", "org", "acme")
    with pytest.raises(NotPermitted, match="outside this agent's scope"):
        memory.link("org", "acme", "employs", "person", "marta")
    read_only = build_server(Store(db_path), read_only=True)
    names = {t.name for t in mcp_run(read_only, lambda client: client.list_tools()).tools}
    assert "links" in names and "link" not in names


def test_reading_links_seeks_the_indexes_both_ways(store):
    """links() reads outgoing links by the primary key (from_seq, ...) and incoming ones by
    the index (to_seq, rel): neither scans memory_fact_links."""
    people(store)
    store.link("person", "marta", "lives_in", "place", "porto")
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        assert len(store.links("place", "porto")) == 1
    finally:
        store.conn.set_trace_callback(None)
    plans = [
        [row[-1] for row in store.conn.execute("EXPLAIN QUERY PLAN " + sql)]
        for sql in statements
        if "FROM memory_fact_links l" in sql
    ]
    assert len(plans) == 2
    outgoing, incoming = plans
    assert any("SEARCH l USING PRIMARY KEY (from_seq=?)" in p for p in outgoing), outgoing
    assert any("SEARCH l USING INDEX memory_fact_links_to (to_seq=?)" in p for p in incoming), (
        incoming
    )
    assert not any(p.startswith("SCAN l") for p in outgoing + incoming)


@BOTH_BACKENDS
def test_a_dedupe_merge_moves_the_merged_facts_links_to_the_kept_one(store, clock):
    """Links belong to what a fact says: merging two facts that say the same thing keeps them."""
    store.upsert("user", "coffee_pref", "Drinks a flat white every morning at the Corner Cafe!")
    store.upsert("place", "corner_cafe", "The Corner Cafe is on Rua Direita.")
    store.upsert("person", "maja", "Maja is the user.")
    store.link("user", "coffee_pref", "at", "place", "corner_cafe")
    store.link("person", "maja", "prefers", "user", "coffee_pref")
    clock.advance(days=1)
    store.upsert(
        "user", "drink.morning", "Every morning drinks a flat white at the Corner Cafe now."
    )
    store.link("user", "drink.morning", "same_as", "user", "coffee_pref")  # becomes a self-link
    store.dedupe(semantic=False)
    (survivor,) = store.list_facts("user")
    found = {(l.from_fact.key, l.rel, l.to_fact.key) for l in store.links("user", survivor.key)}
    assert found == {
        (survivor.key, "at", "corner_cafe"),
        ("maja", "prefers", survivor.key),
    }
