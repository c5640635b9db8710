"""Tags on facts (migrations/0017_tags.py): written with upsert/tag/untag, read with every fact,
filtered in list_facts and query_facts through the (tag, fact_seq) index, dropped with their
fact, carried by export and import."""

import json

import pytest

from slotmem import Store
from slotmem.errors import InvalidInput, ProtectedFact


def tag_rows(store):
    return store.conn.execute("SELECT fact_seq, tag FROM memory_fact_tags ORDER BY 1, 2").fetchall()


def test_upsert_tags_replace_keep_and_clear(store):
    made = store.upsert("user", "city", "Lives in Porto", tags=["home", "geo", "home"])
    assert made.fact.tags == ("geo", "home")
    assert store.get("user", "city").tags == ("geo", "home")
    kept = store.upsert("user", "city", "Lives in Lisbon")  # None: the tags stay
    assert kept.fact.tags == ("geo", "home") and kept.previous.tags == ("geo", "home")
    assert store.upsert("user", "city", "Lives in Lisbon", tags=["moved"]).fact.tags == ("moved",)
    assert store.upsert("user", "city", "Lives in Lisbon", tags=[]).fact.tags == ()
    assert store.get("user", "city").tags == () and tag_rows(store) == []


def test_tag_and_untag(store):
    store.upsert("user", "job", "Works at ACME")
    assert store.tag("user", "job", "work", "acme").tags == ("acme", "work")
    assert store.tag("user", "job", "work").tags == ("acme", "work")
    assert store.untag("user", "job", "acme", "never-had").tags == ("work",)
    with pytest.raises(InvalidInput, match="no fact user/nope to tag"):
        store.tag("user", "nope", "x")


@pytest.mark.parametrize("bad", ["Work", "", "-x", "has space", "x" * 65, "é", "a/b", 7, None])
def test_a_bad_tag_is_refused_in_one_line_and_changes_nothing(store, bad):
    store.upsert("user", "job", "Works at ACME", tags=["work"])
    before = tag_rows(store)
    for write in (
        lambda: store.upsert("user", "job", "Works elsewhere", tags=["ok", bad]),
        lambda: store.upsert("user", "new", "A new fact", tags=[bad]),
        lambda: store.upsert_many([{"slot": "user", "key": "n", "value": "v", "tags": [bad]}]),
        lambda: store.tag("user", "job", bad),
        lambda: store.list_facts(tags=[bad]),
        lambda: store.query_facts("acme", tags=[bad]),
    ):
        with pytest.raises(InvalidInput) as caught:
            write()
        assert "\n" not in str(caught.value) and "tag" in str(caught.value)
    assert tag_rows(store) == before
    assert store.get("user", "job").value == "Works at ACME" and store.get("user", "new") is None


def test_a_string_is_not_a_list_of_tags(store):
    with pytest.raises(InvalidInput, match="must be a list of tags"):
        store.upsert("user", "job", "Works at ACME", tags="work")


def test_at_most_32_tags_a_fact(store):
    many = [f"t{i}" for i in range(32)]
    assert len(store.upsert("user", "job", "Works", tags=many).fact.tags) == 32
    with pytest.raises(InvalidInput, match="at most 32"):
        store.upsert("user", "other", "Other", tags=[*many, "one-more"])
    with pytest.raises(InvalidInput, match="at most 32"):
        store.tag("user", "job", "one-more")
    assert len(store.get("user", "job").tags) == 32 and store.get("user", "other") is None


def test_list_and_query_keep_facts_with_every_tag(store):
    store.upsert("user", "city", "Marta lives in Porto", tags=["marta", "geo"])
    store.upsert("user", "job", "Marta works in Porto", tags=["marta", "work"])
    store.upsert("user", "trip", "Porto trip in May", tags=["geo"])
    assert {f.key for f in store.list_facts(tags=["marta"])} == {"city", "job"}
    assert [f.key for f in store.list_facts(tags=["marta", "geo"])] == ["city"]
    assert store.list_facts(tags=["nobody"]) == []
    assert {f.tags for f in store.list_facts()} == {("geo", "marta"), ("marta", "work"), ("geo",)}
    hits = store.query_facts("porto", tags=["geo"])
    assert {h.fact.key for h in hits} == {"city", "trip"}
    assert {h.fact.key: h.fact.tags for h in hits}["city"] == ("geo", "marta")
    assert [h.fact.key for h in store.query_facts("porto", tags=["geo", "marta"])] == ["city"]
    assert {h.fact.key for h in store.query_facts("porto")} == {"city", "job", "trip"}


def test_upsert_many_sets_tags(store):
    results = store.upsert_many(
        [
            {"slot": "user", "key": "a", "value": "Alpha", "tags": ["x"]},
            {"slot": "user", "key": "b", "value": "Beta"},
            {"slot": "user", "key": "a", "value": "Alpha two", "tags": ["y"]},
        ]
    )
    assert [r.fact.tags for r in results] == [("x",), (), ("y",)]
    assert store.get("user", "a").tags == ("y",)


def test_deleting_pruning_or_expiring_a_fact_drops_its_tags(store, clock):
    store.upsert("user", "gone", "To be deleted", tags=["a"])
    store.upsert("user", "brief", "Expires soon", tags=["b"], ttl="1h")
    store.upsert("user", "stays", "Stays", tags=["c"])
    assert store.delete("user", "gone")
    clock.advance(days=1)
    store.upsert("user", "brief", "Back again")  # expired: a new fact, untagged
    assert store.get("user", "brief").tags == ()
    assert [tag for _, tag in tag_rows(store)] == ["c"]
    store.restore("user", "gone")  # history keeps no tags: restored untagged
    assert store.get("user", "gone").tags == ()


def test_an_agent_cannot_retag_a_protected_fact(store):
    store.upsert("user", "name", "Marta", protect=True, tags=["person"])
    with pytest.raises(ProtectedFact):
        store.upsert("user", "name", "Marta", tags=["other"], allow_protected=False)
    with pytest.raises(ProtectedFact):
        store.tag("user", "name", "other", allow_protected=False)
    with pytest.raises(ProtectedFact):
        store.untag("user", "name", "person", allow_protected=False)
    kept = store.upsert_many(
        [{"slot": "user", "key": "name", "value": "Marta", "tags": ["other"]}],
        allow_protected=False,
        skip_protected=True,
    )
    assert kept[0].fact.tags == ("person",)
    assert store.get("user", "name").tags == ("person",)


def test_export_and_import_carry_tags(store, tmp_path, clock):
    store.upsert("user", "city", "Lives in Porto", tags=["geo", "home"])
    store.upsert("user", "job", "Works at ACME")
    records = store.export()
    facts = {r["key"]: r for r in records if r.get("type") == "fact"}
    assert facts["city"]["tags"] == ["geo", "home"] and "tags" not in facts["job"]
    other = Store(tmp_path / "other.db", create=True, clock=clock)
    other.import_records([json.dumps(r) for r in records])
    assert other.get("user", "city").tags == ("geo", "home")
    assert other.get("user", "job").tags == ()
    # the file's tags win for a fact it updates
    records = [dict(r, tags=["moved"]) if r.get("key") == "city" else r for r in records]
    records = [
        dict(r, updated_at=r["updated_at"] + 1) if r.get("key") == "city" else r for r in records
    ]
    other.import_records([json.dumps(r) for r in records], partial=True)
    assert other.get("user", "city").tags == ("moved",)


def test_an_export_without_tags_imports_and_a_bad_tag_in_one_is_refused(store):
    line = {"type": "fact", "slot": "user", "key": "k", "value": "v"}
    store.import_records([json.dumps(line)], partial=True)
    assert store.get("user", "k").tags == ()
    with pytest.raises(InvalidInput, match="line 1.*invalid tag") as caught:
        store.import_records([json.dumps({**line, "key": "k2", "tags": ["Bad Tag"]})], partial=True)
    assert "\n" not in str(caught.value) and store.get("user", "k2") is None


def plan_of(store, sql) -> list[str]:
    return [row[-1] for row in store.conn.execute("EXPLAIN QUERY PLAN " + sql)]


def test_a_filtered_search_and_listing_read_the_tag_indexes(store):
    """The statements query_facts and list_facts run (traced, values bound) seek the tags:
    a search's few candidates by the primary key (fact_seq, tag), a listing by the (tag,
    fact_seq) index; neither scans memory_fact_tags."""
    store.upsert_many(
        [{"slot": "user", "key": f"k{i}", "value": f"note {i} about porto"} for i in range(300)]
    )
    store.tag("user", "k7", "rare")
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        found = store.query_facts("porto", tags=["rare"], track_access=False)
        listed = store.list_facts(tags=["rare"])
    finally:
        store.conn.set_trace_callback(None)
    assert [h.fact.key for h in found] == ["k7"] and [f.key for f in listed] == ["k7"]
    search_sql = next(s for s in statements if "FROM memory_fact_tags t WHERE" in s)
    plan = plan_of(store, search_sql)
    assert "SEARCH t USING PRIMARY KEY (fact_seq=? AND tag=?)" in plan, plan
    list_sql = next(s for s in statements if "FROM memory_facts WHERE" in s and "tag =" in s)
    plan = plan_of(store, list_sql)
    assert any("memory_fact_tags USING COVERING INDEX memory_fact_tags_tag" in p for p in plan), (
        plan
    )
    assert not any(p.startswith("SCAN memory_fact_tags") for p in plan), plan


def run_cli(*args, path):
    from click.testing import CliRunner

    from slotmem.cli import cli

    return CliRunner().invoke(cli, [*args, "-d", str(path)], catch_exceptions=False)


def test_the_command_line_tags_filters_and_refuses_a_bad_tag(db_path):
    assert (
        run_cli(
            "remember",
            "user/employer",
            "ACME in Porto",
            "--tag",
            "work",
            "--tag",
            "marta",
            path=db_path,
        ).exit_code
        == 0
    )
    assert run_cli("remember", "user", "city", "Porto", "--tag", "geo", path=db_path).exit_code == 0
    listed = run_cli("list", "--tag", "marta", "--json", path=db_path)
    assert [(f["key"], f["tags"]) for f in json.loads(listed.stdout)] == [
        ("employer", ["marta", "work"])
    ]
    found = run_cli("search", "porto", "--tag", "geo", "--json", path=db_path)
    assert [h["key"] for h in json.loads(found.stdout)] == ["city"]
    assert "marta,work" in run_cli("list", "--tag", "work", path=db_path).stdout
    tagged = run_cli("tag", "user", "city", "marta,home", path=db_path)
    assert tagged.stdout.strip() == "user/city: geo, home, marta"
    untagged = run_cli("untag", "user/city", "home", "--json", path=db_path)
    assert json.loads(untagged.stdout)["fact"]["tags"] == ["geo", "marta"]
    with Store(db_path) as store:
        before = tag_rows(store)
    for args in (
        ("tag", "user/city", "Bad"),
        ("tag", "user/city", "ok,a b"),
        ("remember", "user/x", "y", "--tag", "No"),
        ("list", "--tag", "-x"),
        ("search", "porto", "--tag", "x" * 65),
    ):
        result = run_cli(*args, path=db_path)
        assert result.exit_code == 2, (args, result.output)
        error = [line for line in result.stderr.splitlines() if line.startswith("Error")]
        assert len(error) == 1 and "invalid tag" in error[0], result.stderr
    with Store(db_path) as store:
        assert tag_rows(store) == before and store.get("user", "x") is None


def test_mcp_remember_recall_and_list_with_tags(db_path, clock):
    import asyncio

    from mcp import Client

    from slotmem.agents.mcp_server import build_server

    server = build_server(Store(db_path, create=True, clock=clock))

    async def steps():
        async with Client(server) as client:
            one = await client.call_tool(
                "remember",
                {"slot": "user", "key": "job", "value": "Marta works in Porto", "tags": ["marta"]},
            )
            many = await client.call_tool(
                "remember_many",
                {
                    "facts": [
                        {
                            "slot": "user",
                            "key": "city",
                            "value": "Marta lives in Porto",
                            "tags": ["marta", "geo"],
                        },
                        {"slot": "user", "key": "trip", "value": "A trip to Porto"},
                    ]
                },
            )
            recalled = await client.call_tool("recall", {"query": "porto", "tags": ["geo"]})
            listed = await client.call_tool("list", {"tags": ["marta"]})
            bad = await client.call_tool(
                "remember", {"slot": "user", "key": "k", "value": "v", "tags": ["Not OK"]}
            )
            bad_filter = await client.call_tool("list", {"tags": ["Not OK"]})
            return one, many, recalled, listed, bad, bad_filter

    one, many, recalled, listed, bad, bad_filter = asyncio.run(steps())
    assert one.structured_content["tags"] == ["marta"]
    assert [f["tags"] for f in many.structured_content["facts"]] == [["geo", "marta"], []]
    assert [f["key"] for f in recalled.structured_content["facts"]] == ["city"]
    assert {f["key"] for f in listed.structured_content["facts"]} == {"job", "city"}
    assert bad.is_error and bad_filter.is_error
    with Store(db_path) as store:
        assert store.get("user", "k") is None


def test_agent_memory_refuses_a_bad_tag_in_a_batch_and_writes_none(db_path):
    from slotmem.agents.tools import AgentMemory

    memory = AgentMemory(Store(db_path, create=True))
    with pytest.raises(InvalidInput, match="item 1: invalid tag|invalid tag"):
        memory.remember_many(
            [
                {"slot": "user", "key": "a", "value": "Alpha", "tags": ["ok"]},
                {"slot": "user", "key": "b", "value": "Beta", "tags": ["NOT"]},
            ]
        )
    assert memory.list_facts() == []
    assert memory.remember("user", "a", "Alpha", tags=["ok"])["tags"] == ["ok"]
    assert [f["key"] for f in memory.recall("alpha", tags=["ok"])] == ["a"]
    assert memory.recall("alpha", tags=["other"]) == []


def test_a_dedupe_merge_keeps_both_facts_tags(store, clock):
    store.upsert(
        "user",
        "coffee_pref",
        "Drinks a flat white every morning at the Corner Cafe!",
        tags=["coffee", "morning"],
    )
    clock.advance(days=1)
    store.upsert(
        "user",
        "drink.morning",
        "Every morning drinks a flat white at the Corner Cafe now.",
        tags=["cafe"],
    )
    store.dedupe(semantic=False)
    (survivor,) = store.list_facts("user")
    assert survivor.tags == ("cafe", "coffee", "morning")
    assert len(tag_rows(store)) == 3


def test_a_dedupe_merge_adds_no_more_tags_than_a_fact_may_have(store, clock):
    store.upsert(
        "user",
        "coffee_pref",
        "Drinks a flat white every morning at the Corner Cafe!",
        tags=[f"a{i:02}" for i in range(20)],
    )
    clock.advance(days=1)
    store.upsert(
        "user",
        "drink.morning",
        "Every morning drinks a flat white at the Corner Cafe now.",
        tags=[f"b{i:02}" for i in range(20)],
    )
    store.dedupe(semantic=False)
    (survivor,) = store.list_facts("user")
    assert len(survivor.tags) == 32
