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


# ---- bounds, escapes, long lines (issue 18) ----------------------------------------------
def _sum_program(dim_literal: str) -> str:
    return ("graph @g(%0: f32[3]) {\n  %1: f32[] = sum(%0) {dim=" + dim_literal
            + ", keepdim=false}\n  return %1\n}")


def test_deep_nesting_is_a_parse_error_not_a_recursion_error():
    with pytest.raises(IRParseError, match="2:61: nesting too deep"):
        parse(_sum_program("(" * 5000 + ")" * 5000))


@pytest.mark.parametrize("text", [
    _sum_program("(" + "9" * 5000 + ",)"),
    "graph @g(%0: f32[" + "9" * 5000 + "]) {\n  return %0\n}",
])
def test_huge_integers_are_a_parse_error_not_a_value_error(text):
    with pytest.raises(IRParseError, match="integer literal too large"):
        parse(text)


def test_a_dimension_past_the_size_bound_is_rejected():
    with pytest.raises(IRParseError, match=r"a dimension is a size in \[0, 2\*\*62\]"):
        parse("graph @g(%0: f32[9999999999999999999]) {\n  return %0\n}")


def test_names_with_line_breaks_and_parentheses_round_trip():
    g = Graph("we(ird\nname\u2028\x85")
    x = g.add_input(T.TensorType((3,), T.float32))
    n = Node("neg", [x], {}, [x.type], SourceLoc("a file\n(x).py", 12, "f(g)"), None, 4)
    m = Node("neg", [n.output], {}, [x.type], SourceLoc("#3, bwd of #1", -2, "h"), None, None)
    g.nodes += [n, m]
    g.outputs = [m.output]
    text = print_graph(g)
    assert len(text.splitlines()) == 5   # no character in a name breaks a line
    assert 'loc("a file\\n(x).py", 12, "f(g)")' in text
    assert parse(text) == g


def test_comments_are_not_padded_to_the_longest_line():
    g = Graph("g")
    x = g.add_input(T.TensorType((3,), T.float32))
    long = Node("sum", [x], {"dim": (0,) * 200, "keepdim": False}, [T.TensorType((), x.dtype)],
                SourceLoc("m.py", 1, "f"))
    short = Node("neg", [x], {}, [x.type], SourceLoc("m.py", 2, "f"))
    g.nodes += [long, short]
    g.outputs = [short.output]
    lines = print_graph(g).splitlines()
    assert lines[2] == "  %2: f32[3] = neg(%0)  # m.py:2 (f)"
    assert max(map(len, lines)) < 1000
