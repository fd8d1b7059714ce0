"""Differences from torch 2.13's autograd found by a behaviour probe, fixed (one section per
finding).

Every expected value and message below was recorded by running the same program under
torch 2.13 (CPU).
"""
import numpy as np
import pytest

import tracegrad as tg


# ---- 1. a custom Function's dirty output that is a view rewrites its base's history ---------

class _Inc(tg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        a.add_(1)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, g):
        return g * 3


class _MulW(tg.autograd.Function):
    @staticmethod
    def forward(ctx, a, w):
        ctx.save_for_backward(w)
        a.mul_(w)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, g):
        w, = ctx.saved_tensors
        return g * w, g


def test_dirty_view_output_rewrites_the_base_history():
    # torch 2.13: r is the view, versions 2; r.grad_fn AsStridedBackward0, y.grad_fn
    # CopySlices; y [2, 3, 3]; y.sum() -> x.grad [3, 3, 1]; r.sum() -> [3, 3, 0]
    x = tg.tensor([1., 2., 3.], requires_grad=True)
    y = x * 1
    v = y[:2]
    r = _Inc.apply(v)
    assert r is v and y._version == 2 and r._version == 2
    assert r.grad_fn.name() == "AsStridedBackward0"
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    np.testing.assert_array_equal(y.detach().numpy(), [2., 3., 3.])
    y.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), [3., 3., 1.])
    x.grad = None
    r.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3., 3., 0.])


def test_dirty_view_output_of_a_row_and_of_a_view_chain():
    # torch 2.13: x.grad [[0, 2, 4], [18, 24, 30]]; then [0, 2, 12, 18]
    x = tg.ones(2, 3, requires_grad=True)
    y = x * 2
    _Inc.apply(y[1])
    np.testing.assert_array_equal(y.detach().numpy(), [[2., 2., 2.], [3., 3., 3.]])
    (y * tg.arange(6.).reshape(2, 3)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0., 2., 4.], [18., 24., 30.]])
    x = tg.ones(4, requires_grad=True)
    y = x * 2
    _Inc.apply(y[1:].view(3)[1:])
    np.testing.assert_array_equal(y.detach().numpy(), [2., 2., 3., 3.])
    (y * tg.arange(4.)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 2., 12., 18.])


def test_dirty_view_output_other_views_and_repeated_writes():
    # torch 2.13: a base without grad gains it (w.grad [2, 3]); another view u of the base
    # reads the new value [2, 1] with AsStridedBackward0 (x.grad [0, 3, 1]); two Functions
    # writing overlapping views: y [2, 3, 2], x.grad [3, 9, 3], version 4
    y = tg.ones(3)
    w = tg.tensor([2., 5.], requires_grad=True)
    _MulW.apply(y[1:], w)
    assert y.requires_grad and y.grad_fn.name() == "torch::autograd::CopySlices"
    (y * tg.tensor([1., 2., 3.])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2., 3.])
    x = tg.ones(3, requires_grad=True)
    y = x * 1
    u = y[1:]
    _Inc.apply(y[:2])
    np.testing.assert_array_equal(u.detach().numpy(), [2., 1.])
    assert u.grad_fn.name() == "AsStridedBackward0"
    u.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0., 3., 1.])
    x = tg.ones(3, requires_grad=True)
    y = x * 1
    _Inc.apply(y[:2])
    _Inc.apply(y[1:])
    np.testing.assert_array_equal(y.detach().numpy(), [2., 3., 2.])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3., 9., 3.])
    assert y._version == 4


def test_dirty_view_of_a_leaf_raises():
    # torch 2.13: RuntimeError "a view of a leaf Variable that requires grad is being used in
    # an in-place operation." (x[:2], x.view(3)); a detached view is fine (no grad_fn)
    x = tg.ones(3, requires_grad=True)
    for make in (lambda: x[:2], lambda: x.view(3)):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad "
                                               "is being used in an in-place operation"):
            _Inc.apply(make())
    r = _Inc.apply(x.detach()[:2])
    assert r.grad_fn is None and not r.requires_grad
