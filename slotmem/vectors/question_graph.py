"""The default model's graph for questions: its weights multiplied in int8 blocks.

The ONNX file (``embedders.MODEL_PACKAGE``) keeps each weight as int8 with a float scale per
column, turned into float32 before each MatMul: onnxruntime folds that at load and then
multiplies float32 matrices, reading 42 MB of weights for every question, more than this
machine's 32 MB cache; a question of a few words took 3-4.5 ms, most of it in 42 MatMuls
(docs/benchmarks.md, "Questions in int8 blocks"). ``rewrite`` gives the same graph with:

- each of the 36 weight MatMuls as onnxruntime's ``MatMulNBits`` (8 bits, the int8 weights
  themselves, blocks of ``BLOCK`` rows each with the column's scale, ``accuracy_level`` 4: the
  question's activations quantized to int8 per block, the products summed in integers);
- the two int8 embedding tables looked up before they are scaled (the rows a question uses,
  not the whole table at each run), so the graph needs no constant folding to be quick.

A question then takes 0.4-0.7x the CPU; its vector is not the full-precision one (cosine
0.9990 or more to it on the benchmark's questions): questions only, never a stored fact's
vector (``embedders.MiniLM.load``). The file is read and written here with a few lines of
protobuf's wire format, not the ``onnx`` package; the file's hash is checked before
(``embedders.check_sha256``), and any other shape raises ValueError (the questions then run
on the full-precision session).
"""

from __future__ import annotations

from typing import Any

BLOCK = 32  # rows per scale block (128: 0.78-0.86x the time, cosine p50 0.9982-0.9991, not 0.9997)
MATMULS, TABLES = 36, 2  # what the default model's graph holds (anything else: ValueError)

# field numbers of onnx.proto
_MODEL_GRAPH, _MODEL_OPSET = 7, 8
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_RAW = 1, 2, 8, 9
_TENSOR_EXTERNAL, _TENSOR_LOCATION, _EXTERNAL = 13, 14, 1  # external_data, data_location
_FLOAT, _UINT8, _INT8 = 1, 2, 3  # TensorProto.DataType
_VARINT, _LEN = 0, 2  # wire types


def rewrite(model, block: int = BLOCK) -> tuple[bytes, dict[str, Any]]:
    """The model file ``model`` (bytes, or a memory map of it) with its weight MatMuls in int8
    blocks and its int8 tables looked up before scaling (see the module's docstring), and the
    arrays its large tensors (the blocks, the tables) hold: the graph names them as external
    data, handed to onnxruntime as arrays (``add_external_initializers``, which copies them)
    instead of through 24 MB of protobuf written and parsed (a cold start's 15 ms); the tables
    are views of ``model``. ValueError: not the expected graph."""
    import numpy as np

    fields = _fields(model)
    graphs = [value for number, wire, value in fields if number == _MODEL_GRAPH and wire == _LEN]
    if len(graphs) != 1:
        raise ValueError("not an ONNX model with one graph")
    graph = _fields(graphs[0])
    nodes = [_Node(value) for number, _, value in graph if number == _GRAPH_NODE]
    initializers = [_Tensor(value) for number, _, value in graph if number == _GRAPH_INITIALIZER]
    tensors = {tensor.name: tensor for tensor in initializers}
    made = {out: node for node in nodes for out in node.outputs}
    uses: dict[str, int] = {}
    for node in nodes:
        for name in node.inputs:
            uses[name] = uses.get(name, 0) + 1

    def scaled(name: str) -> tuple[_Tensor, _Tensor, list] | None:
        """(int8 tensor, scale, [Cast, Mul]) when ``name`` is Cast(int8 initializer) x scale
        used once, else None."""
        mul = made.get(name)
        if mul is None or mul.op != "Mul" or uses.get(name) != 1 or len(mul.inputs) != 2:
            return None
        for cast_out, scale_name in (mul.inputs, mul.inputs[::-1]):
            cast, scale = made.get(cast_out), tensors.get(scale_name)
            if cast is None or cast.op != "Cast" or scale is None or uses.get(cast_out) != 1:
                continue
            weight = tensors.get(cast.inputs[0])
            if weight is not None and weight.type == _INT8 and scale.type == _FLOAT:
                return weight, scale, [cast, mul]
        return None

    apart: dict[str, Any] = {}  # name -> array, of the tensors kept out of the graph's bytes
    dropped: set[int] = set()  # ids of the nodes replaced
    added_nodes: dict[int, list[bytes]] = {}  # id of a replaced node -> what goes in its place
    added_tensors: list[list] = []
    unused: set[str] = set()
    matmuls = tables = 0
    for node in nodes:
        if node.op == "MatMul" and len(node.inputs) == 2:
            found = scaled(node.inputs[1])
            if found is None:
                continue
            weight, scale, parts = found
            q = weight.array(np)
            if (
                q.ndim != 2
                or q.shape[0] % block
                or scale.dims not in ([q.shape[1]], [1, q.shape[1]])
            ):
                raise ValueError(f"weight {weight.name} of shape {q.shape} does not fit blocks")
            k, n = q.shape
            # q + 128 as uint8 (the offset MatMulNBits subtracts) is q's bits with the top one flipped
            blocks = (np.ascontiguousarray(q.T).view(np.uint8) ^ 0x80).reshape(n, k // block, block)
            scales = np.repeat(scale.array(np).reshape(-1).astype(np.float32), k // block)
            names = (f"{weight.name}_blocks", f"{scale.name}_blocks")
            apart[names[0]] = blocks
            added_tensors += [[_external(names[0], blocks)], _tensor(names[1], scales, _FLOAT)]
            added_nodes[id(node)] = [
                _node(
                    "MatMulNBits",
                    [node.inputs[0], *names],
                    node.outputs,
                    f"{node.name}_blocks",
                    "com.microsoft",
                    K=k,
                    N=n,
                    bits=8,
                    block_size=block,
                    accuracy_level=4,
                )
            ]
            matmuls += 1
        elif node.op == "Gather" and len(node.inputs) == 2 and node.axis_zero():
            found = scaled(node.inputs[0])
            if found is None:
                continue
            table, scale, parts = found
            values = table.array(np)
            if scale.array(np).shape != (values.shape[0], 1):
                raise ValueError(f"table {table.name}: a scale per row expected")
            apart[table.name] = values
            index, name = node.inputs[1], node.outputs[0]
            added_nodes[id(node)] = [
                _node("Gather", [table.name, index], [f"{name}_q"], f"{node.name}_q"),
                _node("Gather", [scale.name, index], [f"{name}_scale"], f"{node.name}_scale"),
                _node("Cast", [f"{name}_q"], [f"{name}_f"], f"{node.name}_f", to=_FLOAT),
                _node("Mul", [f"{name}_f", f"{name}_scale"], [name], f"{node.name}_scaled"),
            ]
            tables += 1
        else:
            continue
        dropped.update(id(part) for part in parts)
        if node.op == "MatMul":  # the Cast's and the Mul's inputs, when nothing else reads them
            unused.update(name for name in (weight.name, scale.name) if uses.get(name) == 1)
    if (matmuls, tables) != (MATMULS, TABLES):
        raise ValueError(
            f"{matmuls} weight MatMuls and {tables} int8 tables, not the default model"
        )

    pieces: list = []  # the new graph's fields, headers and views of ``model`` (one copy, at the end)
    node_at, initializer_at = iter(nodes), iter(initializers)
    for number, wire, value in graph:
        if number == _GRAPH_NODE:
            node = next(node_at)
            if id(node) in dropped:
                continue
            if id(node) in added_nodes:
                pieces += [_field(_GRAPH_NODE, made_node) for made_node in added_nodes[id(node)]]
                continue
        elif number == _GRAPH_INITIALIZER:
            name = next(initializer_at).name
            if name in unused:
                continue
            if name in apart:  # a table
                pieces.append(_field(_GRAPH_INITIALIZER, _external(name, apart[name])))
                continue
        pieces += _raw(number, wire, value)
    for tensor in added_tensors:
        pieces += [_varint_bytes(_GRAPH_INITIALIZER << 3 | _LEN), _varint_bytes(_size(tensor))]
        pieces += tensor
    out: list = []
    for number, wire, value in fields:
        if number == _MODEL_GRAPH:
            out += [_varint_bytes(number << 3 | _LEN), _varint_bytes(_size(pieces))]
            out += pieces
        else:
            out += _raw(number, wire, value)
    opset = _encode([(1, "com.microsoft"), (2, 1)])  # OperatorSetIdProto: domain, version
    return b"".join([*out, _field(_MODEL_OPSET, opset)]), apart


class _Node:
    def __init__(self, data):
        fields = _fields(data)
        self.inputs = [_text(v) for n, _, v in fields if n == _NODE_INPUT]
        self.outputs = [_text(v) for n, _, v in fields if n == _NODE_OUTPUT]
        self.name = next((_text(v) for n, _, v in fields if n == _NODE_NAME), "")
        self.op = next((_text(v) for n, _, v in fields if n == _NODE_OP), "")
        self.domain = next((_text(v) for n, _, v in fields if n == _NODE_DOMAIN), "")
        self.attributes = [v for n, _, v in fields if n == _NODE_ATTRIBUTE]

    def axis_zero(self) -> bool:
        """Whether its attributes are none or ``axis`` = 0 alone (a Gather along the rows)."""
        for attribute in self.attributes:
            fields = {n: v for n, _, v in _fields(attribute)}  # AttributeProto: name 1, i 3
            if _text(fields.get(1, b"")) != "axis" or fields.get(3, 0) != 0:
                return False
        return True


class _Tensor:
    def __init__(self, data):
        fields = _fields(data)
        self.name = next((_text(v) for n, _, v in fields if n == _TENSOR_NAME), "")
        self.type = next((v for n, w, v in fields if n == _TENSOR_TYPE and w == _VARINT), 0)
        self.dims: list[int] = []
        for n, w, v in fields:
            if n == _TENSOR_DIMS:
                self.dims += [v] if w == _VARINT else [x for _, _, x in _varints(v)]
        self.raw = next((v for n, w, v in fields if n == _TENSOR_RAW and w == _LEN), None)

    def array(self, np) -> Any:
        dtype = {_FLOAT: "<f4", _INT8: "i1", _UINT8: "u1"}.get(self.type)
        if dtype is None or self.raw is None:
            raise ValueError(f"tensor {self.name}: type {self.type} without raw data")
        return np.frombuffer(self.raw, dtype=dtype).reshape(self.dims)


def _node(op: str, inputs, outputs, name: str, domain: str = "", **ints: int) -> bytes:
    fields: list[tuple[int, object]] = [(_NODE_INPUT, i) for i in inputs]
    fields += [(_NODE_OUTPUT, o) for o in outputs]
    fields += [(_NODE_NAME, name), (_NODE_OP, op)]
    for key, value in ints.items():  # AttributeProto: name 1, i 3, type 20 (INT = 2)
        fields.append((_NODE_ATTRIBUTE, _encode([(1, key), (3, value), (20, 2)])))
    if domain:
        fields.append((_NODE_DOMAIN, domain))
    return _encode(fields)


def _tensor(name: str, array, data_type: int) -> list:
    """A TensorProto as pieces to join (its data not copied)."""
    return [_header(name, array, data_type), *_raw(_TENSOR_RAW, _LEN, memoryview(array).cast("B"))]


def _external(name: str, array) -> bytes:
    """A TensorProto whose data is kept apart (``rewrite``'s arrays), named ``name``."""
    data_type = {"uint8": _UINT8, "int8": _INT8}[array.dtype.name]
    location = _encode([(1, "location"), (2, name)])  # StringStringEntryProto: key, value
    where = [(_TENSOR_EXTERNAL, location), (_TENSOR_LOCATION, _EXTERNAL)]
    return _header(name, array, data_type) + _encode(where)


def _header(name: str, array, data_type: int) -> bytes:
    fields: list[tuple[int, object]] = [(_TENSOR_DIMS, int(d)) for d in array.shape]
    return _encode([*fields, (_TENSOR_TYPE, data_type), (_TENSOR_NAME, name)])


def _size(pieces: list) -> int:
    return sum(map(len, pieces))


# protobuf's wire format: a field is a varint key (number << 3 | wire type), then a varint
# (type 0), 8 bytes (1), a varint length and that many bytes (2) or 4 bytes (5)


def _fields(data) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of each field of a message, in order (``value``: an int, or a
    memoryview of ``data``)."""
    if isinstance(data, int):
        raise ValueError("a message field written as a number")  # noqa: TRY004 - bad bytes
    view = memoryview(data)
    out, i, end = [], 0, len(view)
    while i < end:
        key, i = _varint(view, i)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == _VARINT:
            value, i = _varint(view, i)
        elif wire == _LEN:
            size, i = _varint(view, i)
            if i + size > end:
                raise ValueError("a field runs past its message")
            value, i = view[i : i + size], i + size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if i + size > end:
                raise ValueError("a field runs past its message")
            value, i = view[i : i + size], i + size
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, wire, value))
    if i != end:
        raise ValueError("a field runs past its message")
    return out


def _varints(data) -> list[tuple[int, int, int]]:
    view, out, i = memoryview(data), [], 0
    while i < len(view):
        value, i = _varint(view, i)
        out.append((0, _VARINT, value))
    return out


def _varint(view, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= len(view) or shift > 63:
            raise ValueError("a varint runs past its message")
        byte = view[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _varint_bytes(value: int) -> bytes:
    value &= (1 << 64) - 1  # a negative int64 as protobuf writes it (ten bytes)
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _raw(number: int, wire: int, value) -> list:
    """A field as pieces to join: its key (and length) and ``value`` itself, not copied."""
    key = _varint_bytes(number << 3 | wire)
    if wire == _VARINT:
        return [key + _varint_bytes(value)]
    if wire == _LEN:
        return [key + _varint_bytes(len(value)), value]
    return [key, value]


def _field(number: int, value) -> bytes:
    """A field of ``value``: an int as a varint, text or bytes as a length-delimited one."""
    if isinstance(value, int):
        return b"".join(_raw(number, _VARINT, value))
    return b"".join(_raw(number, _LEN, value.encode() if isinstance(value, str) else value))


def _encode(fields) -> bytes:
    return b"".join(_field(number, value) for number, value in fields)


def _text(value) -> str:
    if isinstance(value, int):
        raise ValueError("a text field written as a number")  # noqa: TRY004 - bad bytes
    try:
        return bytes(value).decode()
    except UnicodeDecodeError:
        raise ValueError("a text field that is not UTF-8") from None
