"""IR: types and promotion, builder, printer, verifier."""
import pytest

from tracegrad.ir import Builder, Graph, IRError, ShapeError, print_graph, verify
from tracegrad.ir import types as T
from tracegrad.ir.graph import Node


def test_promote_types_follows_torch():
    assert T.promote_types(T.int64, T.float16) is T.float16
    assert T.promote_types(T.float16, T.bfloat16) is T.float32
    assert T.promote_types(T.uint8, T.int8) is T.int16
    assert T.promote_types(T.bool_, T.int32) is T.int32
    assert T.promote_types(T.float32, T.float64) is T.float64


def test_result_type_tiers():
    # dimensioned beats zero-dim of the same category; scalars only lift the category
    assert T.result_type([T.float32], [T.float64], []) is T.float32
    assert T.result_type([T.int64], [T.float64], []) is T.float64
    assert T.result_type([T.int32], [], [2.5]) is T.float32
    assert T.result_type([T.int32], [], [7]) is T.int32
    assert T.result_type([T.float16], [], [2.5]) is T.float16


def _mlp_graph():
    g = Graph("f")
    x = g.add_input(T.TensorType((4, 3), T.float32))
    w = g.add_input(T.TensorType((3, 2), T.float32))
    b = Builder(g)
    h = b.matmul(x, w)
    y = b.sum(b.tanh(h), 1)
    g.outputs = [b.mul(y, 2.0)]
    return g


def test_builder_infers_types_and_printer_shows_them():
    g = _mlp_graph()
    verify(g)
    text = print_graph(g)
    assert text.splitlines()[0] == "graph @f(%0: f32[4,3], %1: f32[3,2]) {"
    assert "%2: f32[4,2] = batched_matmul(%0, %1)" in text
    assert "%4: f32[4] = sum(%3) {dim=(1,), keepdim=false}" in text
    assert "full() {size=(), fill_value=2.0, dtype=f32}" in text
    assert text.splitlines()[-2] == "  return %6"


def test_builder_rejects_bad_shapes_naming_both():
    g = Graph("bad")
    x = g.add_input(T.TensorType((4, 3), T.float32))
    y = g.add_input(T.TensorType((5,), T.float32))
    with pytest.raises(ShapeError, match=r"add: shapes f32\[4,3\], f32\[5\] do not broadcast"):
        Builder(g).add(x, y)
    with pytest.raises(ShapeError, match=r"inner dimensions differ, got f32\[4,3\] @ f32\[5,1\]"):
        Builder(g).matmul(x, Builder(g).reshape(y, (5, 1)))


def test_verifier_catches_use_before_def_and_wrong_types():
    g = _mlp_graph()
    g.nodes.reverse()
    with pytest.raises(IRError, match="used before it is defined"):
        verify(g)
    g = _mlp_graph()
    n = g.nodes[0]
    g.nodes[0] = Node(n.op, n.inputs, n.attrs, [T.TensorType((4, 5), T.float32)])
    g.nodes[0].outputs = [g.nodes[0].outputs[0]]
    with pytest.raises(IRError, match="differ from inferred"):
        verify(g)


def test_verifier_catches_unknown_op_and_attrs():
    g = Graph("u")
    x = g.add_input(T.TensorType((2,), T.float32))
    g.nodes.append(Node("frobnicate", [x], {}, [x.type]))
    with pytest.raises(IRError, match="unknown op 'frobnicate'"):
        verify(g)
    g.nodes = [Node("sum", [x], {"dim": (0,)}, [T.TensorType((), T.float32)])]
    with pytest.raises(IRError, match="attributes"):
        verify(g)
