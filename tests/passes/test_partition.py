"""Saved-tensor minimization: min-cut partitions save fewer bytes and never change gradients."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.backends import interpreter
from tracegrad.ir import Builder, Graph, verify
from tracegrad.ir import types as T
from tracegrad.passes import autodiff
from tracegrad.passes.partition import partition

F32 = T.float32


def _chain_graph():
    """x, W (inputs) -> h = x @ W -> a = tanh(h) -> sum(exp(a) * sigmoid(a)).

    The matmul output cannot be recomputed; everything after it can.
    """
    g = Graph("f")
    x = g.add_input(T.TensorType((8, 16), F32))
    w = g.add_input(T.TensorType((16, 32), F32))
    b = Builder(g)
    h = b.matmul(x, w)
    a = b.tanh(h)
    c = b.mul(b.exp(a), b.sigmoid(a))
    g.outputs = [b.sum(c)]
    return g, x, w


def _run_backward(fwd: Graph, joint, part, arrays):
    env_graph = Graph("fwd", list(fwd.inputs), list(fwd.nodes), list(part.saved))
    saved = interpreter.run(env_graph, arrays)
    return interpreter.run(part.backward, [np.array(1.0, np.float32)] + saved)


@pytest.mark.parametrize("policy", ["save_all", "min_bytes"])
def test_gradients_identical_under_every_policy(policy):
    fwd, x, w = _chain_graph()
    joint = autodiff(fwd, [x, w])
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((8, 16)).astype(np.float32),
              rng.standard_normal((16, 32)).astype(np.float32) * 0.3]
    base = partition(joint, policy="save_all")
    part = partition(joint, policy=policy)
    verify(part.backward)
    for a, b in zip(_run_backward(fwd, joint, base, arrays), _run_backward(fwd, joint, part, arrays)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_min_bytes_saves_less_than_save_all_by_recomputing_cheap_ops():
    fwd, x, w = _chain_graph()
    joint = autodiff(fwd, [x, w])
    base = partition(joint, policy="save_all")
    best = partition(joint, policy="min_bytes")
    # save_all keeps tanh's output, exp's output and sigmoid's output: 3 x f32[8,32]
    assert base.saved_bytes == 3 * 8 * 32 * 4
    # min_bytes keeps one f32[8,32] (the matmul output or tanh's, equal cost) and
    # recomputes exp and sigmoid from it
    assert best.saved_bytes == 8 * 32 * 4
    assert {n.op for n in best.recomputed} >= {"exp", "sigmoid"}


def test_program_inputs_are_free_and_bool_masks_are_cheap():
    g = Graph("relu")
    x = g.add_input(T.TensorType((64,), F32))
    b = Builder(g)
    y = b.relu(b.mul(x, 3.0))
    g.outputs = [b.sum(b.mul(y, y))]
    joint = autodiff(g, [x])
    best = partition(joint, policy="min_bytes")
    # everything is recomputable from x, which is free to keep
    assert best.saved_bytes == 0
    assert any(v is x for v in best.saved)


def test_explain_reports_saved_tensors_and_baseline():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(20, 30), tg.nn.ReLU(), tg.nn.Linear(30, 5))
    x, y = tg.randn(8, 20), tg.randint(0, 5, (8,))
    report = tg.explain(lambda x, y: tg.nn.functional.cross_entropy(model(x), y), x, y)
    assert report.saved_bytes <= report.save_all_bytes
    assert report.saved_bytes == sum(s.nbytes for s in report.saved_tensors if not s.is_input)
    # the hidden activation (8 x 30 f32) is the one activation worth saving
    acts = [s for s in report.saved_tensors if not s.is_input]
    assert any(s.shape == (8, 30) and s.dtype == "f32" for s in acts)
    text = str(report)
    assert "bytes saved for backward" in text and "forward:" in text and "backward:" in text
    # the report's backward program computes the same gradients as eager backward
    verify(report.backward)


def test_save_names_policy_keeps_named_values():
    x = tg.randn(4, 8, requires_grad=True)

    def f(x):
        h = tg.checkpoint_name(x.tanh() * 2.0, "act")
        return (h.exp() * h).sum()

    named = tg.explain(f, x, policy="save_names")
    assert any("named 'act'" in s.reason for s in named.saved_tensors)


def _model_case(name):
    from benchmarks import models
    tg.manual_seed(0)
    if name == "mlp":
        return models.mlp(), models.mlp_batch(batch=32), \
            lambda m, x, y: tg.nn.functional.cross_entropy(m(x), y)
    return (models.Transformer(seq=32, layers=1), models.transformer_batch(batch=2, seq=32),
            models.transformer_loss)


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_benchmark_models_gradients_unchanged_by_passes_and_policies(name, monkeypatch):
    """The benchmark models (smaller batch and sequence): eager gradients with every optional
    pass off, and the compiled backward program under save_all, equal the full pipeline's
    (float32: 1e-6 relative to the largest gradient)."""
    import tracegrad.passes
    from tracegrad.autograd import engine
    model, batch, loss_fn = _model_case(name)
    params = list(model.parameters())
    tg.set_executor("interpreter")

    def eager():
        engine.clear_cache()
        return [g.numpy() for g in tg.autograd.grad(loss_fn(model, *batch), params)]

    def compiled():
        out = tg.compile(lambda *b: loss_fn(model, *b), executor="interpreter")(*batch)
        return [g.numpy() for g in tg.autograd.grad(out, params)]

    reference = eager()
    runs = {"compiled min_bytes": compiled()}
    monkeypatch.setenv("TRACEGRAD_DISABLE_PASSES", "prune,simplify,cse,fuse")
    runs["eager, passes off"] = eager()
    original = tracegrad.passes.build_backward
    monkeypatch.setattr(tracegrad.passes, "build_backward",
                        lambda *a, **kw: original(*a, **{**kw, "policy": "save_all"}))
    runs["compiled save_all, passes off"] = compiled()
    for what, grads in runs.items():
        for k, (a, e) in enumerate(zip(grads, reference)):
            scale = float(np.abs(e).max())
            np.testing.assert_allclose(a, e, rtol=1e-6, atol=1e-6 * scale,
                                       err_msg=f"{name}, {what}: parameter {k}")


@pytest.mark.parametrize("policy", ["save_all", "min_bytes"])
def test_an_index_behind_its_bounds_check_costs_nothing_to_save(policy):
    """gather's backward reads only its index; the index is a program input, and its
    index_check returns it unchanged (ALIAS), so the backward reads the input: 0 bytes saved
    (the index_check output, 4x2 int64 = 64 bytes, was counted before).  The check itself
    stays in the forward and still raises."""
    x = tg.randn(4, 5, requires_grad=True)
    t = tg.tensor([[0, 4], [1, 1], [2, 3], [4, 0]])
    r = tg.explain(lambda x, t: x.gather(1, t).sum(), x, t, policy=policy)
    assert r.saved_bytes == 0
    assert "index_check" in str(r.forward)
    grad_prog = tg.compile(lambda x, t: x.gather(1, t).sum())
    grad_prog(x, t).backward()
    want = np.zeros((4, 5), np.float32)
    np.add.at(want, (np.arange(4)[:, None], t.numpy()), 1.0)
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with pytest.raises(IndexError):
        grad_prog(x, tg.tensor([[0, 5], [1, 1], [2, 3], [4, 0]]))
