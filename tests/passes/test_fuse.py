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
    g = _graph()
    f, _ = fuse(g)
    rng = np.random.default_rng(1)
    ins = [rng.standard_normal((64, 32)).astype(np.float32),
           rng.standard_normal((32, 16)).astype(np.float32)]
    for a, b in zip(interpreter.run(g, ins, blocked=False), interpreter.run(f, ins)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
