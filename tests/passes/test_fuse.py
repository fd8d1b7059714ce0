"""Fusion regions: formed on elementwise chains, shown in the text, values unchanged."""
import numpy as np

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
