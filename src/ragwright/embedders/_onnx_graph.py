"""An exact rewrite of exported attention graphs that onnxruntime does not do itself.

PyTorch's exporter guards every attention softmax against fully masked rows::

    probs = Softmax(scores);  guarded = Where(IsNaN(probs), 0.0, probs)

``Where`` and ``IsNaN`` run over the whole ``(batch, heads, tokens, tokens)`` tensor and took 37%
of all-MiniLM-L6-v2's CPU time. A row is fully masked only when a text has no tokens at all,
which the embedder never sends, so the guard never changes a value: :func:`drop_nan_guards`
replaces each ``Where`` with an ``Identity`` (which onnxruntime then removes) and drops the
``IsNaN``. Were a NaN ever to appear anyway, it now reaches the output, where the embedder's
finiteness check reports it instead of returning zeros.

The model is edited at the protobuf wire level (the field numbers of onnx.proto), so no ``onnx``
package is needed; everything but the rewritten nodes is copied byte for byte.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

# Field numbers from onnx.proto.
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_OUTPUT = 1, 5, 12
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_DOMAIN = 1, 2, 3, 4, 7
_VALUE_INFO_NAME = 1
_TENSOR_DATA_LOCATION, _EXTERNAL = 14, 1
_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
# Nodes whose subgraphs could use names this pass does not see.
_SUBGRAPH_OPS = frozenset({"If", "Loop", "Scan", "SequenceMap"})


class WireFormatError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True, slots=True)
class _Field:
    number: int
    wire_type: int
    start: int  # where the field's key begins
    value_start: int  # where its payload begins (after the length, for length-delimited)
    end: int


@dataclass(frozen=True, slots=True)
class _Node:
    field: _Field
    op_type: str
    domain: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def drop_nan_guards(model: bytes) -> bytes | None:
    """The model without softmax NaN guards, or ``None`` when it has none (or is not plain)."""
    fields = list(_fields(model, 0, len(model)))
    graphs = [f for f in fields if f.number == _MODEL_GRAPH and f.wire_type == _LENGTH]
    if len(graphs) != 1:
        return None
    graph = graphs[0]
    graph_fields = list(_fields(model, graph.value_start, graph.end))
    if any(_is_external(model, f) for f in graph_fields if f.number == _GRAPH_INITIALIZER):
        return None  # loading from bytes would lose the folder of the external data
    nodes = [_parse_node(model, f) for f in graph_fields if f.number == _GRAPH_NODE]
    if any(node.op_type in _SUBGRAPH_OPS for node in nodes):
        return None
    graph_outputs = {
        name
        for f in graph_fields
        if f.number == _GRAPH_OUTPUT
        for name in _strings(model, f, _VALUE_INFO_NAME)
    }
    replacements = _guards(nodes, graph_outputs)
    if not replacements:
        return None
    parts: list[bytes | memoryview] = []
    view = memoryview(model)
    for f in graph_fields:
        if f.start in replacements:
            new_node = replacements[f.start]
            if new_node is not None:
                parts.append(_length_field(_GRAPH_NODE, new_node))
        else:
            parts.append(view[f.start : f.end])
    new_graph = b"".join(parts)
    rebuilt: list[bytes | memoryview] = []
    for f in fields:
        if f is graph:
            rebuilt.append(_length_field(_MODEL_GRAPH, new_graph))
        else:
            rebuilt.append(view[f.start : f.end])
    return b"".join(rebuilt)


def _guards(nodes: list[_Node], graph_outputs: set[str]) -> dict[int, bytes | None]:
    """Field offset -> replacement node bytes (``None``: drop) for every NaN guard found."""
    producers = {output: node for node in nodes for output in node.outputs}
    uses = Counter(name for node in nodes for name in node.inputs)
    replacements: dict[int, bytes | None] = {}
    for where in nodes:
        if where.op_type != "Where" or where.domain or len(where.inputs) != 3:
            continue
        condition, _, probs = where.inputs
        isnan = producers.get(condition)
        softmax = producers.get(probs)
        if (
            isnan is None
            or softmax is None
            or isnan.op_type != "IsNaN"
            or isnan.domain
            or isnan.inputs != (probs,)
            or softmax.op_type != "Softmax"
            or uses[condition] != 1
            or condition in graph_outputs
        ):
            continue
        replacements[isnan.field.start] = None
        replacements[where.field.start] = _identity_node(where.name, probs, where.outputs[0])
    return replacements


# -- protobuf wire format ---------------------------------------------------------------------


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise WireFormatError("truncated or oversized varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def _fields(data: bytes, start: int, end: int) -> Iterator[_Field]:
    position = start
    while position < end:
        key, value_start = _varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == _VARINT:
            _, field_end = _varint(data, value_start)
        elif wire_type == _FIXED64:
            field_end = value_start + 8
        elif wire_type == _FIXED32:
            field_end = value_start + 4
        elif wire_type == _LENGTH:
            length, value_start = _varint(data, value_start)
            field_end = value_start + length
        else:
            raise WireFormatError(f"unsupported wire type {wire_type}")
        if field_end > end:
            raise WireFormatError("a field runs past the end of its message")
        yield _Field(number, wire_type, position, value_start, field_end)
        position = field_end


def _strings(data: bytes, message: _Field, number: int) -> list[str]:
    return [
        bytes(data[f.value_start : f.end]).decode("utf-8")
        for f in _fields(data, message.value_start, message.end)
        if f.number == number and f.wire_type == _LENGTH
    ]


def _parse_node(data: bytes, field: _Field) -> _Node:
    values: dict[int, list[str]] = {}
    for f in _fields(data, field.value_start, field.end):
        if f.number in (_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_DOMAIN):
            text = bytes(data[f.value_start : f.end]).decode("utf-8")
            values.setdefault(f.number, []).append(text)
    return _Node(
        field=field,
        op_type="".join(values.get(_NODE_OP_TYPE, [])),
        domain="".join(values.get(_NODE_DOMAIN, [])),
        name="".join(values.get(_NODE_NAME, [])),
        inputs=tuple(values.get(_NODE_INPUT, [])),
        outputs=tuple(values.get(_NODE_OUTPUT, [])),
    )


def _is_external(data: bytes, tensor: _Field) -> bool:
    for f in _fields(data, tensor.value_start, tensor.end):
        if f.number == _TENSOR_DATA_LOCATION and f.wire_type == _VARINT:
            return _varint(data, f.value_start)[0] == _EXTERNAL
    return False


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _length_field(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | _LENGTH) + _encode_varint(len(payload)) + payload


def _identity_node(name: str, source: str, target: str) -> bytes:
    return b"".join(
        [
            _length_field(_NODE_INPUT, source.encode()),
            _length_field(_NODE_OUTPUT, target.encode()),
            _length_field(_NODE_NAME, name.encode()),
            _length_field(_NODE_OP_TYPE, b"Identity"),
        ]
    )
