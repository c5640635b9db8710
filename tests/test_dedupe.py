"""Near-duplicate facts: found by words or by vectors, merged keeping what the owner would."""

import json

import llm
import pytest
from click.testing import CliRunner

from slotmem import InvalidInput
from slotmem.cli import cli
from slotmem.search.duplicates import THRESHOLDS
from tests.conftest import BOTH_BACKENDS, fts_integrity_error
from tests.test_semantic import Plugin

FACTS = [
    ("user", "coffee_pref", "Drinks a flat white every morning at the Corner Cafe."),
    ("user", "friend.marta.city", "Marta lives in Porto."),
    ("user", "friend.jonas.city", "Jonas lives in Porto."),  # not a duplicate of Marta's
    ("user", "friend.marta.job", "Marta works as a nurse."),
    ("project", "stack", "The Comet service runs on Django and PostgreSQL."),
    ("user", "drink.morning", "Every morning drinks a flat white at the Corner Cafe."),
]


@pytest.fixture
def mem(store, clock):
    for slot, key, value in FACTS:
        store.upsert(slot, key, value)
        clock.advance(ms=10)
    return store


def pairs(store, **options):
    return [(p.slot, p.keep.key, p.drop.key) for p in store.duplicates(**options)]


@BOTH_BACKENDS
def test_lexical_pairs(mem):
    assert pairs(mem, semantic=False) == [("user", "drink.morning", "coffee_pref")]
    assert pairs(mem, slot="project", semantic=False) == []
    every = pairs(mem, threshold=0, semantic=False)  # every candidate, whatever its score
    assert ("user", "friend.jonas.city", "friend.marta.city") in every
    assert ("user", "friend.jonas.city", "friend.marta.city") not in pairs(
        mem, threshold=0.01, semantic=False
    )
    with pytest.raises(InvalidInput, match="threshold"):
        mem.duplicates(threshold=1.5)


@BOTH_BACKENDS
def test_merge_keeps_the_newer_value_both_access_counts_and_the_other_history(mem, clock):
    mem.upsert("user", "coffee_pref", "Drinks a flat white every morning at the Corner Cafe!")
    mem.query_facts("Corner Cafe flat white")
    mem.query_facts("Corner Cafe flat white")
    mem.pin("user", "coffee_pref")  # (a protected fact is kept instead: test_protection.py)
    clock.advance(days=1)
    mem.upsert("user", "drink.morning", "Every morning drinks a flat white at the Corner Cafe now.")
    old, new = mem.get("user", "coffee_pref"), mem.get("user", "drink.morning")
    dry = mem.dedupe(semantic=False, dry_run=True)
    assert [(c.action, c.key) for c in dry.changes] == [("merged", "coffee_pref")]
    assert mem.get("user", "coffee_pref") is not None
    report = mem.dedupe(semantic=False)
    assert report.to_dict()["changes"] == dry.to_dict()["changes"]
    assert mem.get("user", "coffee_pref") is None
    kept = mem.get("user", "drink.morning")
    assert kept.value == new.value and kept.id == new.id
    assert kept.access_count == old.access_count + new.access_count
    assert kept.pinned_at == old.pinned_at
    history = mem.history("user", "drink.morning")
    assert [(e.reason, e.key, e.value) for e in history[:3]] == [
        ("merge", "drink.morning", old.value),
        ("update", "drink.morning", FACTS[0][2]),  # coffee_pref's own history, copied
        ("update", "drink.morning", FACTS[5][2]),
    ]
    assert mem.history("user", "coffee_pref")[0].changed_by == "dedupe:user/drink.morning"
    assert mem.restore("user", "coffee_pref").fact.value == old.value  # a way back
    assert fts_integrity_error(mem) is None


PROJECTS = [
    "Vertex",
    "Comet",
    "Atlas",
    "Nimbus",
    "Orion",
    "Pulsar",
    "Quasar",
    "Nova",
    "Zephyr",
    "Helix",
]
PHASES = ["design", "testing", "launch", "discovery", "maintenance"]


def test_two_people_in_one_city_are_not_a_pair_a_clipped_rewording_is(store, clock):
    """The score weighs what one fact says that the other lacks by how rare it is in the
    slot: a name only one of them holds keeps them apart, a word that a whole family of facts
    is phrased with ("status", "project") does not."""
    store.upsert("user", "friend.marta.city", "Marta lives in Porto.")
    store.upsert("user", "friend.jonas.city", "Jonas lives in Porto.")
    for i, name in enumerate(PROJECTS):
        store.upsert("project", f"project.{name.lower()}.status", f"{name} is in {PHASES[i % 5]}.")
    clock.advance(ms=10)
    store.upsert("project", "vertex_phase", "Current phase of Vertex: design.")
    assert pairs(store, semantic=False) == [("project", "vertex_phase", "project.vertex.status")]
    llm.pm.register(Plugin(), name="fake-embeddings-dedupe")
    try:
        store.semantic.reindex("fake-64")
        found = pairs(store, threshold=0.01)
        assert ("user", "friend.jonas.city", "friend.marta.city") not in found
        assert not any(
            drop.startswith("project.") and keep.startswith("project.") for _, keep, drop in found
        )  # nor two projects in one phase
    finally:
        llm.pm.unregister(name="fake-embeddings-dedupe")


@BOTH_BACKENDS
def test_a_protected_fact_is_never_merged_into_an_agents_copy(mem, clock, monkeypatch):
    """Chosen as the one to keep or protected after the pairs were chosen (dedupe reads the
    pair again inside its transaction), the person's fact stays and the agent's copy goes."""
    mem.protect("user", "coffee_pref")  # the person's; the agent's copy is newer
    [pair] = mem.duplicates("user", semantic=False)
    assert (pair.keep.key, pair.drop.key) == ("coffee_pref", "drink.morning")
    mem.unprotect("user", "coffee_pref")
    [chosen] = mem.duplicates("user", semantic=False)  # unprotected: the newer copy is kept
    assert chosen.keep.key == "drink.morning"

    def then_protected(*args, **kwargs):
        mem.protect("user", "coffee_pref")  # the person protects it meanwhile
        return [chosen]

    monkeypatch.setattr(mem, "duplicates", then_protected)
    assert len(mem.dedupe("user", semantic=False).changes) == 1
    assert mem.get("user", "drink.morning") is None
    kept = mem.get("user", "coffee_pref")
    assert (kept.value, kept.protected) == (FACTS[0][2], True)


@BOTH_BACKENDS
def test_expired_facts_are_not_paired(mem, clock):
    mem.upsert("user", "drink.morning", FACTS[5][2], ttl=60)
    clock.advance(ms=60_000)
    assert pairs(mem, semantic=False) == []


@BOTH_BACKENDS
def test_vector_pairs(mem):
    llm.pm.register(Plugin(), name="fake-embeddings-dedupe")
    try:
        # the key's words are embedded with the value: a key of other words is a conflict
        mem.upsert("project", "comet.stack", "The Comet service runs on Django and PostgreSQL")
        mem.semantic.reindex("fake-64")
        found = mem.duplicates()
        assert {p.method for p in found} == {"vector"}
        assert ("project", "comet.stack", "stack") in [
            (p.slot, p.keep.key, p.drop.key) for p in found
        ]
        assert all(THRESHOLDS["vector"] <= p.similarity <= 1 for p in found)
        assert ("user", "friend.jonas.city", "friend.marta.city") not in pairs(mem, threshold=0.01)
        mem.dedupe()
        assert mem.get("project", "stack") is None
        status = mem.semantic.status()
        assert status["index_rows"] == status["embedded"]
    finally:
        llm.pm.unregister(name="fake-embeddings-dedupe")


def test_the_same_pairs_by_meaning_in_a_file_and_on_a_server(tmp_path, pg_url, clock):
    """The same facts and the same (fake) vectors: the server's pgvector leg proposes the
    candidates the file's vectors do, and the shared score keeps the same pairs, scores too."""
    from slotmem import Store

    llm.pm.register(Plugin(), name="fake-embeddings-dedupe")
    try:
        with (
            Store(tmp_path / "m.db", create=True, clock=clock) as file,
            Store(pg_url, create=True, clock=clock) as server,
        ):
            for store in (file, server):
                store.semantic.reindex("fake-64")
            for i, name in enumerate(PROJECTS):
                for store in (file, server):
                    store.upsert(
                        "project", f"project.{name.lower()}.status", f"{name} is {PHASES[i % 5]}."
                    )
                clock.advance(ms=10)  # the newer of two is the one kept: no ties on time
            for slot, key, value in [
                *FACTS,
                ("project", "comet.stack", "The Comet service runs on Django and PostgreSQL"),
                ("project", "vertex_phase", "Vertex is in design."),
            ]:
                for store in (file, server):
                    store.upsert(slot, key, value)
                clock.advance(ms=10)

            def found(store, **options):
                return [
                    (p.slot, p.keep.key, p.drop.key, p.similarity, p.method)
                    for p in store.duplicates(**options)
                ]

            everything = found(file, threshold=0)
            assert {method for *_, method in everything} == {"vector"}
            assert len(everything) > 5  # every candidate, whatever its score
            assert found(server, threshold=0) == everything
            assert found(server) == found(file) != []
            assert found(server, semantic=False) == found(file, semantic=False)
            assert server.dedupe(dry_run=True).to_dict() == file.dedupe(dry_run=True).to_dict()
    finally:
        llm.pm.unregister(name="fake-embeddings-dedupe")


def test_cli(mem):
    runner = CliRunner()
    db = str(mem.path)
    listed = runner.invoke(cli, ["dedupe", "--dry-run", "-d", db])
    assert listed.exit_code == 0 and "coffee_pref" in listed.output
    assert "1 pairs. Dry run: nothing was merged." in listed.output
    rows = json.loads(runner.invoke(cli, ["dedupe", "--dry-run", "--json", "-d", db]).output)
    assert rows[0]["keep"] == "drink.morning" and rows[0]["method"] == "lexical"
    none = runner.invoke(cli, ["dedupe", "--dry-run", "--slot", "project", "-d", db])
    assert none.output == "no near-duplicate pairs\n"
    merged = runner.invoke(cli, ["dedupe", "-d", db])
    assert merged.exit_code == 0 and "merged" in merged.output and "1 merged" in merged.output
    bad = runner.invoke(cli, ["dedupe", "--threshold", "2", "-d", db])
    assert bad.exit_code == 2
