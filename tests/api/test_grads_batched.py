"""``tg.autograd.grad(..., is_grads_batched=True)``: one ``jax.vmap`` of the backward
program over the cotangents' batch dimension (tracegrad/autograd/batched_run.py), as torch
runs its backward under vmap; row by row where the program has host calls.

Expected values were recorded by running the same program under torch 2.13 (float32 ones
to float32 precision: XLA's and torch's sin/cos differ in the last bit).
"""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad import _state
from tracegrad.autograd import batched_run

# torch 2.13: grad((a.sin() * b).sum(0, keepdim=True), [a, b], [[1.], [2.]], batched)
A_ROWS = [[0.27015116810798645, -0.2080734223127365, -0.49499624967575073],
          [0.5403023362159729, -0.416146844625473, -0.9899924993515015]]
B_ROWS = [[1.8918883800506592], [3.7837767601013184]]


def _sin_graph():
    a = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tg.tensor([0.5], requires_grad=True)
    return a, b, (a.sin() * b).sum(0, keepdim=True)


@pytest.fixture
def count_vmapped(monkeypatch):
    """How many batched program runs `grad` made (one per call when it vmaps)."""
    calls = []
    real = batched_run.run_batched

    def counting(*args):
        calls.append(args[3])
        return real(*args)
    monkeypatch.setattr("tracegrad.autograd.engine.run_batched", counting)
    return calls


def test_values_follow_torch_from_one_vmapped_run(count_vmapped):
    a, b, out = _sin_graph()
    ga, gb = tg.autograd.grad(out, [a, b], tg.tensor([[1.0], [2.0]]), is_grads_batched=True)
    np.testing.assert_allclose(ga.numpy(), A_ROWS, rtol=1e-6)
    np.testing.assert_allclose(gb.numpy(), B_ROWS, rtol=1e-6)
    assert ga.dtype is tg.float32 and not ga.requires_grad
    assert len(count_vmapped) == 1   # the whole batch in one program run


def test_two_outputs_each_batched():
    # torch 2.13: [[5.0, 4.0], [0.0, 3.0], [7.0, 11.0]]
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y1, y2 = x * 3, (x ** 2).sum()
    g, = tg.autograd.grad([y1, y2], x, [tg.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                                       tg.tensor([1.0, 0.0, 2.0])], is_grads_batched=True)
    assert g.tolist() == [[5.0, 4.0], [0.0, 3.0], [7.0, 11.0]]


def test_unused_inputs_as_torch():
    a, b, out = _sin_graph()
    c = tg.tensor([1.0], requires_grad=True)
    cts = tg.tensor([[1.0], [2.0]])
    # torch 2.13: materialize_grads gives zeros of the input's own shape, [0.0] (not batched)
    ga, gc = tg.autograd.grad(out, [a, c], cts, is_grads_batched=True, allow_unused=True,
                              materialize_grads=True, retain_graph=True)
    assert gc.tolist() == [0.0]
    ga, gc = tg.autograd.grad(out, [a, c], cts, is_grads_batched=True, allow_unused=True,
                              retain_graph=True)
    assert gc is None
    # torch 2.13: "The differentiated Tensor at index 1 appears to not have been used in the
    # graph. Set allow_unused=True if this is the desired behavior." (ours: grad's words)
    with pytest.raises(RuntimeError, match=r"input 1.*not have been used in the graph. Set "
                                           r"allow_unused=True"):
        tg.autograd.grad(out, [a, c], cts, is_grads_batched=True)


def test_cotangents_of_another_dtype_are_cast():
    # torch 2.13: a float64 batch for a float32 output gives float32 gradients, A_ROWS
    a, b, out = _sin_graph()
    g, = tg.autograd.grad(out, a, tg.tensor([[1.0], [2.0]], dtype=tg.float64),
                          is_grads_batched=True)
    assert g.dtype is tg.float32
    np.testing.assert_allclose(g.numpy(), A_ROWS, rtol=1e-6)


def test_graph_is_freed_without_retain_graph():
    # torch 2.13: a second grad raises "Trying to backward through the graph a second time"
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    s = x.exp().sum(0, keepdim=True)
    g, = tg.autograd.grad(s, x, tg.tensor([[1.0], [2.0]]), is_grads_batched=True)
    np.testing.assert_allclose(g.numpy(), [np.exp([1.0, 2.0]), 2 * np.exp([1.0, 2.0])],
                               rtol=1e-6)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        tg.autograd.grad(s, x, tg.tensor([1.0]))


def test_a_hook_on_the_tape_runs_row_by_row(count_vmapped):
    # torch 2.13: values [14.7781, 109.1963] / [44.3343, 327.5889]; torch calls the hook once
    # with the batched gradient, tracegrad once per row (a documented deviation)
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    h = x * 2
    h.register_hook(lambda g: seen.append(tuple(g.shape)))
    g, = tg.autograd.grad(h.exp().sum(0, keepdim=True), x, tg.tensor([[1.0], [3.0]]),
                          is_grads_batched=True)
    np.testing.assert_allclose(g.numpy(), [[14.7781, 109.1963], [44.3343, 327.5889]], rtol=1e-5)
    assert seen == [(2,), (2,)] and count_vmapped == []


def test_create_graph_rows_are_differentiable():
    # torch 2.13: rows [[3.0, 12.0], [6.0, 24.0]], then x.grad [18.0, 36.0]
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    g, = tg.autograd.grad(x ** 3, x, tg.tensor([[1.0, 1.0], [2.0, 2.0]]),
                          is_grads_batched=True, create_graph=True)
    assert g.tolist() == [[3.0, 12.0], [6.0, 24.0]]
    g.sum().backward()
    assert x.grad.tolist() == [18.0, 36.0]


def test_vmapped_equals_the_interpreter_rows():
    # the reference executor runs the rows one by one: the same numbers
    W = tg.tensor(np.random.default_rng(0).standard_normal((5, 4)), requires_grad=True)
    v = tg.tensor(np.random.default_rng(1).standard_normal(5))
    z = (v @ W).tanh() * 3
    cts = tg.eye(4, dtype=tg.float64)
    g_jax, = tg.autograd.grad(z, W, cts, is_grads_batched=True, retain_graph=True)
    saved = _state.get_executor()
    tg.set_executor("interpreter")
    try:
        g_np, = tg.autograd.grad(z, W, cts, is_grads_batched=True)
    finally:
        tg.set_executor(saved)
    np.testing.assert_allclose(g_jax.numpy(), g_np.numpy(), rtol=1e-12, atol=1e-14)
    # each row is the VJP with one-hot cotangent k: v_i * 3 (1 - tanh^2) at column k
    t = np.tanh(v.numpy() @ W.detach().numpy())
    for k in range(4):
        expect = np.zeros((5, 4))
        expect[:, k] = v.numpy() * 3 * (1 - t[k] ** 2)
        np.testing.assert_allclose(g_np.numpy()[k], expect, rtol=1e-12)
