"""The IR text parses back to an equal graph; malformed text gets line:column errors."""
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tracegrad as tg
from tracegrad.ir import Builder, Graph, IRParseError, parse, print_graph
from tracegrad.ir import types as T
from tracegrad.ir.graph import Node, SourceLoc
from tracegrad.passes import fuse


def _sample_graph():
    g = Graph("sample")
    x = g.add_input(T.TensorType((4, 3), T.float32))
    s = g.add_input(T.TensorType((), T.float64))
    g.saved.add(id(s))
    b = Builder(g, loc=SourceLoc("dir with space/m, odd.py", 12, "step"), fwd_id=3)
    y = b.sum(b.mul(b.tanh(x), 2.0), (1,), True)
    z = b.convert(b.div(s, b.full((), -0.0, T.float64)), T.float32)
    g.outputs = [y, z, x]
    return g


def test_round_trip_hand_graph_with_every_feature():
    g = fuse(_sample_graph())[0]
    text = print_graph(g)
    assert "{saved}" in text and "fill_value=-0.0" in text and "bwd of #3" in text
    again = parse(text)
    assert again == g
    assert print_graph(again) == text


def test_round_trip_of_a_recorded_backward_program():
    from tracegrad.autograd import engine
    engine.clear_cache()
    w = tg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    (w @ w).relu().softmax(-1).sum().backward()
    (prog,) = engine._cache.values()
    assert parse(print_graph(prog.graph)) == prog.graph


def test_graph_names_that_are_not_identifiers_are_quoted():
    g = Graph("<lambda>_forward")
    v = g.add_input(T.TensorType((1,), T.float32))
    g.outputs = [v]
    text = print_graph(g)
    assert text.startswith('graph @"<lambda>_forward"(')
    assert parse(text) == g


@pytest.mark.parametrize("text, where, message", [
    ("graph @f(%0: f32[2]) {\n  %1: f32[2] = nope(%0)\n  return %1\n}", "2:16", "unknown op"),
    ("graph @f(%0: f32[2]) {\n  %1: f32[2] = exp(%5)\n}", "2:", "used before it is defined"),
    ("graph @f(%0: q32[2]) {\n}", "1:13", "unknown dtype 'q32'"),
    ("graph @f(%0: f32[2]) {\n  return %0\n", "2:1", "missing the closing"),
    ('graph @f() {\n  %0: f32[] = full() {size=(), fill_value=__import__("os"), dtype=f32}\n}',
     "2:", "unknown literal '__import__'"),
    ("graph @f(%0: f32[2]) {\n  %0: f32[2] = exp(%0)\n}", "2:", "defined twice"),
    ("graph @f(%0: f32[2]) {\n  %1: f32[2] = exp(%0) junk\n}", "2:", "unexpected text"),
    ("", "1:1", "empty"),
])
def test_malformed_text_gives_line_column_and_caret(text, where, message):
    with pytest.raises(IRParseError) as info:
        parse(text)
    msg = str(info.value)
    assert msg.startswith(where) and message in msg
    if "\n" in msg:
        assert msg.splitlines()[-1].strip() == "^"


_literals = st.recursive(
    st.one_of(st.integers(-10**12, 10**12), st.floats(allow_nan=True, allow_infinity=True),
              st.booleans(), st.none(), st.sampled_from(list(T.ALL_DTYPES)),
              st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)),
    lambda inner: st.lists(inner, max_size=4).map(tuple), max_leaves=8)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(_literals)
def test_attribute_literals_round_trip(value):
    g = Graph("lit")
    x = g.add_input(T.TensorType((2,), T.float32))
    n = Node("checkpoint_name", [x], {"name": value}, [x.type])
    g.nodes.append(n)
    g.outputs = [n.outputs[0]]
    again = parse(print_graph(g))
    assert again == g
    got = again.nodes[0].attrs["name"]
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(got)
