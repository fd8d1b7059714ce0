"""Fusion regions: formed on elementwise chains, shown in the text, values unchanged."""
import numpy as np
import pytest

from tracegrad.backends import interpreter, jax_backend
from tracegrad.ir import Builder, Graph, print_graph, verify
from tracegrad.ir import types as T
from tracegrad.passes import fuse

F32 = T.float32


def _graph():
    g = Graph("f")
    x = g.add_input(T.TensorType((64, 32), F32))
    w = g.add_input(T.TensorType((32, 16), F32))
    b = Builder(g)
    h = b.matmul(x, w)                                   # not fusible
    t = b.tanh(h)
    y = b.mul(b.add(t, 1.0), b.sigmoid(h))               # elementwise chain, t used twice
    s = b.sum(b.mul(y, t), (1,), True)                   # a reduction closes the region
    u = b.amax(b.mul(b.exp(h), 2.0), (0,), False)         # reduced across row blocks
    g.outputs = [s, b.exp(h), u, b.sum(b.tanh(b.add(h, 1.0)))]
    return g


def test_regions_formed_and_printed():
    g = _graph()
    f, report = fuse(g)
    verify(f)
    assert report.regions >= 1 and report.fused_nodes >= 5
    text = print_graph(f)
    assert "fusion=0" in text
    region0 = [n.op for n in f.nodes if n.region == 0]
    assert {"tanh", "add", "sigmoid", "mul", "sum"} <= set(region0)
    assert all(n.region is None for n in f.nodes if n.op == "batched_matmul")
    # the region's nodes were scheduled next to each other
    idx = [i for i, n in enumerate(f.nodes) if n.region == 0]
    assert idx == list(range(idx[0], idx[0] + len(idx)))


def test_blocked_interpreter_and_jax_agree_with_unfused():
    g = _graph()
    f, _ = fuse(g)
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal((64, 32)).astype(np.float32),
           rng.standard_normal((32, 16)).astype(np.float32)]
    ref = interpreter.run(g, ins, blocked=False)
    for out in (interpreter.run(f, ins), jax_backend.run(f, ins)):
        for a, b in zip(ref, out):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_blocked_evaluation_with_small_blocks(monkeypatch):
    monkeypatch.setattr(interpreter, "BLOCK_ELEMENTS", 40)   # many blocks, ragged last one
    monkeypatch.setattr(interpreter, "MIN_BLOCKED_ELEMENTS", 0)
    g = _graph()
    f, _ = fuse(g)
    blocked = [s for s in interpreter.Schedule(f).steps if s[0] is None]
    assert len(blocked) >= 2 and any(r.rows > r.step for _, r, *_ in blocked)
    rng = np.random.default_rng(1)
    ins = [rng.standard_normal((64, 32)).astype(np.float32),
           rng.standard_normal((32, 16)).astype(np.float32)]
    for a, b in zip(interpreter.run(g, ins, blocked=False), interpreter.run(f, ins)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _layout_graph():
    """Regions whose inputs meet the merged row dims in every way `BlockedRegion` allows:
    rowed, broadcast over leading 1s, lower rank, 0-d; sums and amax within a row and
    across rows (with and without extra dims), a rowed expand, a keepdim=False export."""
    g = Graph("layouts")
    x = g.add_input(T.TensorType((6, 5, 8), F32))
    s = g.add_input(T.TensorType((6, 5, 1), F32))     # per-row statistic
    bias = g.add_input(T.TensorType((1, 1, 8), F32))  # broadcast over the leading dims
    w = g.add_input(T.TensorType((8,), F32))          # lower rank
    h = g.add_input(T.TensorType((6, 5, 8), F32))
    b = Builder(g)
    m0 = b.matmul(h, b.transpose(h, 1, 2))            # (6, 5, 5): not fusible, splits regions
    t = b.tanh(b.add(b.mul(x, w), bias))
    u = b.mul(b.expand(s, (6, 5, 8)), t)
    v = b.sub(u, b.mul(t, 2.0))
    g.outputs = [b.sum(v, (0, 1), True),             # across the merged rows
                 b.sum(b.mul(v, x), (2,), False),      # within a row, rank drops
                 b.amax(b.exp(v), (0, 1, 2), True),    # across rows and the row dim
                 b.add(v, 1.0), m0]
    return g


def test_blocked_region_layouts_agree_with_node_by_node(monkeypatch):
    monkeypatch.setattr(interpreter, "BLOCK_ELEMENTS", 16)   # 2 rows of 8 per block
    monkeypatch.setattr(interpreter, "MIN_BLOCKED_ELEMENTS", 0)
    g = _layout_graph()
    f, _ = fuse(g)
    verify(f)
    regions = [s[1] for s in interpreter.Schedule(f).steps if s[0] is None]
    assert regions and max(r.rows // r.step for r in regions) >= 10
    assert any(kind in ("sum", "amax") for r in regions for _, _, kind, _, _ in r.exports)
    rng = np.random.default_rng(2)
    ins = [rng.standard_normal(v.shape).astype(np.float32) for v in g.inputs]
    ref = interpreter.run(g, ins, blocked=False)
    for a, b in zip(ref, interpreter.run(f, ins)):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(ref, jax_backend.run(f, ins)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


# ---- adversarial region shapes for BlockedRegion ----------------------------------------------
def _odd_graphs():
    """name -> a graph builder; each meets BlockedRegion with a shape or dtype it must split
    (or refuse to split) correctly."""
    def inp(g, shape, dtype=F32):
        return g.add_input(T.TensorType(shape, dtype))

    def size_one_dims(g, b):
        x, y = inp(g, (5, 1, 3, 1)), inp(g, (5, 1, 3, 1))
        t = b.exp(b.mul(x, y))
        return [b.add(t, 1.0), b.sum(t, (0,), False)]

    def leading_one(g, b):
        x = inp(g, (1, 7, 3))
        return [b.tanh(b.add(b.mul(x, 2.0), 1.0)), b.amax(b.neg(b.abs(x)), (1,), False)]

    def broadcast_layouts(g, b):
        t = inp(g, (4, 3, 5))
        for shape in ((), (5,), (3, 1), (1, 3, 5), (4, 1, 1), (4, 3, 1), (1, 1, 1)):
            t = b.add(b.mul(t, 0.5), inp(g, shape))
        return [b.sin(t)]

    def reductions_without_keepdim(g, b):
        x = inp(g, (6, 4, 3))
        t = b.exp(b.mul(x, 0.3))
        return [b.sum(t, (2,), False), b.sum(b.add(t, 1.0), (0, 1), False),
                b.amax(b.sin(x), (0,), False), b.sum(b.cos(x), (-1, -3), False),
                b.sum(b.exp(b.mul(x, 0.1)), (1,), False)]

    def zero_dim_outputs(g, b):
        x = inp(g, (8, 3))
        return [b.sum(b.mul(b.exp(x), 2.0), (0, 1), False),
                b.amax(b.abs(b.sub(x, 1.0)), (0, 1), False)]

    def nan_in_amax(g, b):
        x = inp(g, (8, 3))
        t = b.log(x)                              # NaN where x < 0: amax must keep it
        return [b.amax(b.mul(t, 1.0), (0,), False), b.amax(b.add(t, 0.0), (0, 1), True)]

    def bool_and_int_values(g, b):
        x, y, m = inp(g, (7, 5)), inp(g, (7, 5)), inp(g, (7, 1), T.bool_)
        i, j = inp(g, (7, 5), T.int64), inp(g, (7, 5), T.int64)
        gt = b.gt(x, y)
        k = b.add(b.mul(i, j), i)
        return [b.where(gt, b.exp(x), b.neg(y)), b.sum(b.convert(gt, F32), (0,), False),
                b.sum(b.where(m, x, b.neg(x)), (0, 1), False), b.sum(k, (0,), False),
                b.mul(k, 3), b.amax(b.lt(x, 1.0), (0,), False), b.sum(b.gt(b.exp(x), 1.0))]

    def low_precision(g, b):
        h, bf, x = inp(g, (64, 8), T.float16), inp(g, (33, 6), T.bfloat16), inp(g, (64, 8))
        t = b.add(b.mul(h, h), 1.0)
        u = b.tanh(b.mul(bf, 3.0))
        return [b.sum(t, (0,), False), b.exp(b.neg(t)), b.amax(u, (0,), False),
                b.sum(u, (1,), True), b.sum(b.mul(b.exp(h), x), (0,), False)]

    def empty_rows(g, b):
        x = inp(g, (6, 0))
        return [b.exp(b.mul(x, 2.0)), b.sum(b.exp(x), (1,), False),
                b.sum(b.exp(b.neg(x)), (0,), False)]

    def expands_and_complex(g, b):
        x, s, r, z = inp(g, (6, 5)), inp(g, (5,)), inp(g, (6, 1)), inp(g, (6, 5), T.complex64)
        e = b.expand(b.exp(s), (6, 5))
        f = b.expand(b.exp(r), (6, 5))
        c = b.mul(b.exp(z), z)
        return [b.mul(b.add(e, x), f), e, b.sum(c, (0,), False), b.conj(c)]

    return {f.__name__: f for f in (size_one_dims, leading_one, broadcast_layouts,
                                     reductions_without_keepdim, zero_dim_outputs, nan_in_amax,
                                     bool_and_int_values, low_precision, empty_rows,
                                     expands_and_complex)}


ODD = _odd_graphs()


@pytest.mark.parametrize("name", sorted(ODD))
def test_blocked_regions_of_odd_shapes_agree_with_node_by_node(name, monkeypatch):
    monkeypatch.setattr(interpreter, "MIN_BLOCKED_ELEMENTS", 0)
    g = Graph(name)
    g.outputs = ODD[name](g, Builder(g))
    verify(g)
    f, _ = fuse(g)
    verify(f)
    rng = np.random.default_rng(3)
    ins = []
    for v in g.inputs:
        if v.dtype is T.bool_:
            ins.append(rng.random(v.shape) > 0.5)
        elif v.dtype is T.int64:
            ins.append(rng.integers(-5, 5, v.shape))
        else:
            a = rng.standard_normal(v.shape) + (1j * rng.standard_normal(v.shape)
                                                if v.dtype.is_complex else 0)
            ins.append(a.astype(v.dtype.numpy))
    ref = interpreter.run(g, ins, blocked=False)
    low = name == "low_precision"
    for block in (1, 7):          # one row per block; ragged blocks
        monkeypatch.setattr(interpreter, "BLOCK_ELEMENTS", block)
        assert any(s[0] is None for s in interpreter.Schedule(f).steps) or name == "empty_rows"
        for a, b in zip(ref, interpreter.run(f, ins)):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(b.astype(np.complex128), a.astype(np.complex128),
                                       rtol=1e-2 if low else 1e-5, atol=1e-2 if low else 1e-6)


def test_blocked_float16_sum_across_rows_keeps_float32_accuracy(monkeypatch):
    # NumPy's float16 sum adds in float32; block partials added in float16 stop at 2048
    # (2048 + 1 rounds to 2048), so 4096 ones summed to 2048 one row per block
    monkeypatch.setattr(interpreter, "MIN_BLOCKED_ELEMENTS", 0)
    monkeypatch.setattr(interpreter, "BLOCK_ELEMENTS", 1)
    for dtype in (T.float16, T.bfloat16):
        g = Graph("half_sum")
        x = g.add_input(T.TensorType((4096, 1), dtype))
        b = Builder(g)
        g.outputs = [b.sum(b.add(b.mul(x, 0.0), 1.0), (0,), False)]
        f, _ = fuse(g)
        assert any(s[0] is None for s in interpreter.Schedule(f).steps)
        out, = interpreter.run(f, [np.full((4096, 1), 3.0, dtype.numpy)])
        assert out.dtype == dtype.numpy and float(out[0]) == 4096.0
