"""simplify and cse on hand-written IR: expected node counts, and values unchanged."""
import numpy as np

from tracegrad.backends import interpreter
from tracegrad.ir import Builder, Graph, print_graph, verify
from tracegrad.ir import types as T
from tracegrad.passes import cse, prune, simplify

F32 = T.float32


def _graph():
    g = Graph("f")
    x = g.add_input(T.TensorType((2, 3), F32))
    b = Builder(g)
    one, zero = b.full((), 1.0, F32), b.full((), 0.0, F32)
    y = b.mul(b.add(x, zero), one)                     # -> x
    y = b.reshape(b.reshape(y, (3, 2)), (6,))          # -> one reshape
    z = b.permute(b.permute(x, (1, 0)), (1, 0))        # -> x
    w = b.add(b.exp(x), b.exp(x))                      # duplicate exp
    c = b.add(b.full((), 2.0, F32), b.full((), 3.0, F32))   # -> full(5.0)
    g.outputs = [y, z, w, b.mul(x, c), b.neg(b.neg(x))]
    return g, x


def _run(g, x):
    return interpreter.run(g, [x])


def test_simplify_folds_identities_and_constants():
    g, _ = _graph()
    s, report = simplify(g)
    s, _ = prune(s)
    verify(s)
    text = print_graph(s)
    assert report.removed >= 6
    assert text.count("reshape(") == 1 and "permute(" not in text and "neg(" not in text
    assert "fill_value=5.0" in text
    assert [str(v.type) for v in s.outputs] == ["f32[6]", "f32[2,3]", "f32[2,3]", "f32[2,3]",
                                                 "f32[2,3]"]


def test_cse_merges_duplicates_only():
    g, _ = _graph()
    c, report = cse(g)
    c, _ = prune(c)
    verify(c)
    assert report.removed >= 1
    assert print_graph(c).count("exp(") == 1


def test_values_unchanged_by_simplify_and_cse():
    g, _ = _graph()
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    before = _run(g, x)
    s, _ = simplify(g)
    s, _ = cse(s)
    s, _ = prune(s)
    for a, b in zip(before, _run(s, x)):
        np.testing.assert_array_equal(a, b)


def test_mul_by_zero_is_not_folded():
    # inf * 0 is NaN: folding to 0 would change a gradient
    g = Graph("z")
    x = g.add_input(T.TensorType((2,), F32))
    b = Builder(g)
    g.outputs = [b.mul(x, b.full((), 0.0, F32))]
    s, report = simplify(g)
    assert report.removed == 0
    out = interpreter.run(s, [np.array([np.inf, 1.0], np.float32)])[0]
    assert np.isnan(out[0]) and out[1] == 0


def test_signed_zero_constants_are_not_merged():
    g = Graph("sz")
    x = g.add_input(T.TensorType((2,), F32))
    b = Builder(g)
    g.outputs = [b.div(x, b.full((), 0.0, F32)), b.div(x, b.full((), -0.0, F32))]
    c, report = cse(g)
    assert report.removed == 0
    a, m = interpreter.run(c, [np.array([1.0, 1.0], np.float32)])
    assert a[0] == np.inf and m[0] == -np.inf


def test_frozen_nodes_are_left_alone():
    g, _ = _graph()
    frozen = frozenset(id(n) for n in g.nodes)
    s, report = simplify(g, frozen=frozen)
    assert report.removed == 0 and s.nodes == g.nodes
