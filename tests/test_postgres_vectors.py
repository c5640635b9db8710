"""The semantic leg on PostgreSQL (pgvector): hybrid search equals the file's on the same facts
and the same (fake, deterministic) embeddings, contexts too; and the leg's upkeep (writes,
deletes, model switches, a failing model, backfill, doctor) as the file's."""

import llm
import pytest
from test_postgres_contract import corpus, queries
from test_semantic import Plugin

from slotmem import SlotmemError, Store
from slotmem.agents.context import build_context
from slotmem.vectors import embedders


@pytest.fixture(autouse=True)
def fake_models():
    llm.pm.register(Plugin(), name="fake-embeddings")
    yield
    llm.pm.unregister(name="fake-embeddings")


@pytest.fixture
def mem(pg_store):
    pg_store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
    pg_store.upsert("project", "stack", "Python with FastAPI and PostgreSQL.")
    pg_store.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
    pg_store.semantic.reindex("fake-64")
    return pg_store


@pytest.fixture(scope="module")
def both(tmp_path_factory, pg_server):
    """The contract corpus in a file and on the server, both reindexed with fake-64."""
    from conftest import Clock

    clock = Clock()
    facts = corpus()
    path = tmp_path_factory.mktemp("vectors") / "m.db"
    plugin = Plugin()
    llm.pm.register(plugin, name="fake-embeddings-module")
    try:
        with (
            Store(path, create=True, clock=clock) as file,
            Store(f"{pg_server.url}?memory=vectors_contract", create=True, clock=clock) as server,
        ):
            for store in (file, server):
                store.semantic.reindex("fake-64")  # on first: upserts write their vectors
                store.upsert_many(facts)
            for i, item in enumerate(facts[:40]):
                for store in (file, server):
                    store.rate(item["slot"], item["key"], (i % 7) - 3)
            for item in facts[::5]:
                for store in (file, server):
                    store.tag(item["slot"], item["key"], "fifth")
            server.refresh_statistics()
            yield file, server
    finally:
        llm.pm.unregister(name="fake-embeddings-module")


def ranked(store, text, **options):
    return [
        (hit.fact.slot, hit.fact.key, round(hit.score, 9), round(hit.relevance, 9))
        for hit in store.query_facts(text, track_access=False, **options)
    ]


PARAPHRASES = ["when do we ship", "release friday", "beverage", "drink in the garden", "tea?"]


def test_hybrid_top_10s_are_the_files(both):
    file, server = both
    assert server.semantic.leg() is not None and file.semantic.leg() is not None
    answered = 0
    for text in queries() + PARAPHRASES:
        expected = ranked(file, text)
        assert ranked(server, text) == expected, text
        answered += bool(expected)
    assert answered >= 50
    # the hybrid leg ran: a lexical search alone ranks differently
    assert any(ranked(file, text) != ranked(file, text, semantic=False) for text in queries()[:10])


def test_hybrid_top_10s_with_slots_floors_tags_and_windows(both, clock):
    file, server = both
    for text in queries()[:15] + PARAPHRASES:
        for options in (
            {"slots": ["user", "friends"]},
            {"slots": "agent.*"},
            {"min_relevance": 0.3},
            {"min_score": 0.2},
            {"limit": 3},
            {"tags": ["fifth"]},
        ):
            assert ranked(server, text, **options) == ranked(file, text, **options), (text, options)


def test_hybrid_hits_carry_their_tags(both):
    file, server = both

    def tagged(store, text):
        return [(h.fact.key, h.fact.tags) for h in store.query_facts(text, track_access=False)]

    found = [tagged(server, text) for text in PARAPHRASES]
    assert found == [tagged(file, text) for text in PARAPHRASES]
    assert any(tags == ("fifth",) for hits in found for _, tags in hits)


def test_hybrid_explanations_and_nearest_neighbours_agree(both, monkeypatch):
    from slotmem.vectors import simhash

    file, server = both
    monkeypatch.setattr(simhash, "CANDIDATES", 1000)  # the file's kNN exact, as the server's
    mine = server.query_facts("marta coffee lisbon", explain=True, track_access=False)
    theirs = file.query_facts("marta coffee lisbon", explain=True, track_access=False)
    assert [h.explanation for h in mine] == [h.explanation for h in theirs]
    blob = file.semantic.query_vector("marta coffee lisbon")
    # in one slot the file's signatures bring every fact: its kNN is exact, and so is ours
    for slots in (["user"], ["agent.notes", "friends"]):
        assert server.semantic.knn(blob, slots, 10) == file.semantic.knn(blob, slots, 10)
    # over every slot the file's signatures are approximate (16 per shard); ours are exact here
    seqs = [row[0] for row in file.conn.execute("SELECT seq FROM memory_facts")]
    exact = sorted(file.semantic.distances(blob, seqs).items(), key=lambda item: item[1])
    assert server.semantic.knn(blob, None, 64) == exact[:64]


def test_contexts_are_the_files(both):
    file, server = both
    for text in ["Where does Marta live?", "when do we ship", "kubernetes deploy friday", "chess"]:
        assert build_context(server, text, track_access=False) == build_context(
            file, text, track_access=False
        ), text


def test_hybrid_finds_a_paraphrase_lexical_cannot(mem):
    assert mem.query_facts("when do we ship?", semantic=False) == []
    hits = mem.query_facts("when do we ship?")
    assert hits[0].fact.key == "deploy.schedule"
    assert mem.stats()["semantic"] == "on (fake-64)"
    assert mem.query_facts("ship", slots=["user"], min_score=0.01) == []


def test_writes_deletes_and_restores_keep_the_vectors(mem):
    mem.upsert("user", "boat", "I ship parcels")
    mem.upsert("user", "drinks", "Coffee, black.")
    mem.delete("project", "stack")
    state = mem.semantic.status()
    assert (state["facts"], state["embedded"], state["index_rows"], state["stale"]) == (3, 3, 3, 0)
    mem.restore("user", "drinks")  # the tea again
    assert mem.semantic.status()["stale"] == 0
    assert mem.query_facts("beverage")[0].fact.value.startswith("The user prefers green tea")


def test_a_model_switch_drops_the_old_vectors(mem):
    report = mem.semantic.reindex("fake-32")
    assert (report["dimensions"], report["switched"], report["embedded"]) == (32, True, 3)
    rows = mem.conn.execute(
        "SELECT DISTINCT m.model, m.dimensions FROM memory_embeddings e "
        "JOIN memory_embedding_models m ON m.id = e.model"
    ).fetchall()
    assert [(r["model"], r["dimensions"]) for r in rows] == [("fake-32", 32)]
    assert mem.query_facts("when do we ship?")[0].fact.key == "deploy.schedule"
    assert mem.semantic.reindex()["embedded"] == 0  # nothing stale


def test_a_failing_model_writes_the_fact_and_a_search_backfills_it(mem, monkeypatch, caplog):
    real = embedders.embed

    def broken(model, texts, *, question=False):
        raise embedders.ModelError("embedding service unreachable")

    monkeypatch.setattr(embedders, "embed", broken)
    mem.upsert("user", "sport", "Runs a marathon every spring")
    assert mem.get("user", "sport") is not None
    assert mem.semantic.status()["stale"] == 1
    assert mem.query_facts("marathon")[0].fact.key == "sport"  # lexical meanwhile
    monkeypatch.setattr(embedders, "embed", real)
    mem.query_facts("anything at all")  # the search's backfill embeds it
    assert mem.semantic.status()["stale"] == 0


def test_doctor_reports_and_repair_rebuilds_the_index(mem):
    rows = {row["check"]: row for row in mem.doctor()}
    assert rows["semantic search"]["ok"]
    assert "fake-64, 3 vectors, 0 missing or stale" in rows["semantic search"]["detail"]
    mem.conn.execute("DROP INDEX memory_embeddings_vec")
    assert mem.semantic.leg() is None  # off: the index is missing; lexical serves
    assert mem.query_facts("deploy")[0].fact.key == "deploy.schedule"
    assert "rebuilt the vector index from the stored vectors" in mem.repair()
    assert mem.query_facts("when do we ship?")[0].fact.key == "deploy.schedule"


def test_without_pgvector_reindex_is_one_line_and_the_memory_serves(pg_store, monkeypatch):
    pg_store.upsert("user", "city", "Lisbon")
    monkeypatch.setattr(pg_store.semantic, "extension", lambda: None)
    monkeypatch.setattr(
        pg_store.semantic, "vec_error", lambda: "the pgvector extension is not available"
    )
    with pytest.raises(SlotmemError, match="cannot build the vector index"):
        pg_store.semantic.reindex("fake-64")
    assert pg_store.semantic.model_id() is None
    assert pg_store.query_facts("Lisbon")[0].fact.key == "city"
    assert pg_store.stats()["semantic"].startswith("semantic search is not enabled")


def test_an_import_is_embedded_by_searches_then_reindex(mem, pg_url, clock):
    import json

    records = mem.export()
    with Store(pg_url.replace("?memory=", "?memory=x"), create=True, clock=clock) as other:
        other.semantic.reindex("fake-64")
        other.import_records([json.dumps(record) for record in records])
        assert other.semantic.status()["stale"] == 3  # written without vectors
        assert other.query_facts("when do we ship?")[0].fact.key == "deploy.schedule"
        assert other.semantic.status()["stale"] == 0  # the search embedded them first


def test_reindex_and_search_commands_on_a_server(pg_url):
    from click.testing import CliRunner

    from slotmem.cli import cli

    run = CliRunner().invoke
    written = run(
        cli, ["remember", "project/deploy.schedule", "We deploy on Fridays", "-d", pg_url]
    )
    assert written.exit_code == 0, written.output
    result = run(cli, ["reindex", "-m", "fake-64", "-d", pg_url])
    assert result.exit_code == 0, result.output
    assert "1 facts embedded with fake-64 (64 dimensions)" in result.output
    result = run(cli, ["search", "when do we ship?", "-d", pg_url])
    assert result.exit_code == 0 and "deploy.schedule" in result.output
    assert "semantic: on (fake-64)" in run(cli, ["stats", "-d", pg_url]).output
