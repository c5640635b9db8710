"""The file browsed with datasette and sqlite-utils, the real packages as a user runs them: both
find the full-text index by their own convention (migration 0008), and a file with the vector
index opens in datasette once sqlite-vec is loaded."""

import json
import sqlite3

import llm
import pytest
from click.testing import CliRunner

from slotmem import Store

datasette_cli = pytest.importorskip("datasette.cli").cli
sqlite_utils_cli = pytest.importorskip("sqlite_utils.cli").cli


@pytest.fixture
def memory(db_path):
    with Store(db_path, create=True) as store:
        store.upsert("project", "deploy.schedule", "We deploy on Tuesdays and Thursdays")
        store.upsert("project", "stack", "Python with FastAPI")
        store.upsert("agent", "lesson.deploy", "Never deploy on a Friday")
        store.upsert("user", "editor", "Maja uses Neovim")
        store.delete("user", "editor")  # the index follows every write
        store.upsert("user", "drink", "Maja drinks tea, not coffee")
    return db_path


def datasette(db_path, path, *options):
    result = CliRunner().invoke(datasette_cli, ["serve", str(db_path), *options, "--get", path])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def sqlite_utils(*args):
    result = CliRunner().invoke(sqlite_utils_cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_datasette_searches_the_full_text_index(memory):
    table = f"/{memory.stem}/memory_facts.json"
    found = datasette(memory, f"{table}?_search=deploy&_shape=array&_col=key")
    assert sorted(row["key"] for row in found) == ["deploy.schedule", "lesson.deploy"]
    assert datasette(memory, f"{table}?_search=coffee&_shape=array&_col=key")[0]["key"] == "drink"
    assert datasette(memory, f"{table}?_search=neovim&_shape=array") == []
    info = datasette(memory, f"/{memory.stem}.json")
    [facts] = [t for t in info["tables"] if t["name"] == "memory_facts"]
    assert facts["fts_table"] == "memory_facts_fts"


def test_sqlite_utils_searches_the_full_text_index(memory):
    found = sqlite_utils("search", memory, "memory_facts", "deploying", "-c", "key")
    assert sorted(row["key"] for row in found) == ["deploy.schedule", "lesson.deploy"]  # stems
    assert sqlite_utils("search", memory, "memory_facts", "neovim") == []


class FakeEmbeddings(llm.EmbeddingModel):
    model_id, dimensions = "browse-fake-8", 8

    def embed_batch(self, items):
        for text in items:
            yield [float(len(text) % (i + 2)) + 1.0 for i in range(self.dimensions)]


@pytest.fixture
def vectors(memory):
    class Plugin:
        @llm.hookimpl
        def register_embedding_models(self, register):
            register(FakeEmbeddings())

    llm.pm.register(Plugin(), name="browse-fake")
    try:
        with Store(memory) as store:
            if store.semantic.vec_error():
                pytest.skip(f"sqlite-vec cannot be loaded here: {store.semantic.vec_error()}")
            store.semantic.reindex("browse-fake-8")
            assert store.semantic.status()["index_rows"] == 4
    finally:
        llm.pm.unregister(name="browse-fake")
    return memory


def test_a_file_with_the_vector_index_opens_in_datasette_with_sqlite_vec(vectors):
    """The one command of docs/files.md: datasette agent.db --load-extension=<sqlite-vec>."""
    import sqlite_vec

    if not hasattr(sqlite3.Connection, "enable_load_extension"):
        pytest.skip("this Python's sqlite3 cannot load extensions, so neither can datasette")
    load = ["--load-extension", sqlite_vec.loadable_path()]
    info = datasette(vectors, f"/{vectors.stem}.json", *load)
    assert {"memory_vec", "memory_facts"} <= {t["name"] for t in info["tables"]}
    rows = datasette(vectors, f"/{vectors.stem}/memory_vec.json?_shape=array", *load)
    assert len(rows) == 4 and {row["slot"] for row in rows} == {"project", "agent", "user"}
    found = datasette(vectors, f"/{vectors.stem}/memory_facts.json?_search=tea&_shape=array", *load)
    assert [row["key"] for row in found] == ["drink"]


def test_without_sqlite_vec_datasette_refuses_the_file_and_sqlite_utils_searches(vectors):
    """What docs/files.md says works without sqlite-vec."""
    result = CliRunner().invoke(datasette_cli, ["serve", str(vectors), "--get", "/"])
    assert result.exit_code != 0 and "no such module: vec0" in result.output
    found = sqlite_utils("search", vectors, "memory_facts", "tea", "-c", "key")
    assert found == [{"key": "drink"}]
    assert sqlite_utils("rows", vectors, "memory_facts", "-c", "key", "--limit", "1")
