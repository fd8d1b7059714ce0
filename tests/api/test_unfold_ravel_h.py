"""Tensor.unfold, ravel, moveaxis and H against torch 2.13 (values recorded from torch 2.13.0
CPU with the same calls; their grad_fn names are in test_autograd_fidelity3.py, the op sweep's
samples and errors of unfold in tests/opdb/strided.py)."""
import warnings

import numpy as np
import pytest

import tracegrad as tg


def test_unfold_windows_and_their_summed_gradient():
    x = tg.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.unfold(1, 2, 1)
    # torch 2.13: [[[0, 1], [1, 2]], [[3, 4], [4, 5]]], grad_fn UnfoldBackward0
    np.testing.assert_array_equal(y.detach().numpy(), [[[0, 1], [1, 2]], [[3, 4], [4, 5]]])
    (y * tg.arange(8.0).reshape(2, 2, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 3, 3], [4, 11, 7]])   # torch 2.13


@pytest.mark.parametrize("args, want", [
    ((0, 3, 2), [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]]),
    ((0, 3, 4), [[0, 1, 2], [4, 5, 6]]),
    ((-1, 2, 2), [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]),
])
def test_unfold_steps(args, want):
    np.testing.assert_array_equal(tg.arange(10.0).unfold(*args).numpy(), want)   # torch 2.13


def test_unfold_of_a_transposed_view_and_a_0d_tensor():
    x = tg.arange(12.0).reshape(3, 4).t()
    u = x.unfold(1, 2, 1)
    assert u.shape == (4, 2, 2)                                      # torch 2.13
    np.testing.assert_array_equal(u[0].numpy(), [[0, 4], [4, 8]])
    np.testing.assert_array_equal(tg.tensor(5.0).unfold(0, 1, 1).numpy(), [5.0])
    assert tg.arange(10.0).unfold(0, 0, 1).shape == (11, 0)


def test_writes_through_unfold_reach_the_input():
    # torch 2.13: x = [0, 1, 100, 3, 4, 5] (windows apart) and [0, 100, 2, 3, 4, 5] (overlapping)
    x = tg.arange(6.0)
    x.unfold(0, 2, 2)[1, 0] = 100
    np.testing.assert_array_equal(x.numpy(), [0, 1, 100, 3, 4, 5])
    x = tg.arange(6.0)
    x.unfold(0, 2, 1)[1, 0] = 100
    np.testing.assert_array_equal(x.numpy(), [0, 100, 2, 3, 4, 5])
    a = tg.arange(6.0, requires_grad=True).clone()
    a.unfold(0, 3, 3).mul_(2)
    np.testing.assert_array_equal(a.detach().numpy(), [0, 2, 4, 6, 8, 10])
    assert type(a.grad_fn).__name__ == "CopySlices"


def test_unfold_under_compile_matches_eager():
    def f(x):
        return (x.unfold(1, 3, 2) ** 2).sum()
    x = tg.arange(14.0).reshape(2, 7).requires_grad_()
    f(x).backward()
    want = x.grad.numpy().copy()
    x.grad = None
    step = tg.compile(lambda t: (f(t).backward(), t.grad)[1])
    np.testing.assert_array_equal(step(x).numpy(), want)


def test_ravel_and_moveaxis():
    x = tg.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(x.t().ravel().numpy(), [0, 3, 1, 4, 2, 5])
    assert tg.ravel(tg.tensor(2.0)).shape == (1,)
    assert tg.moveaxis(tg.ones(2, 3, 4), 0, -1).shape == (3, 4, 2)
    assert x.moveaxis((0, 1), (1, 0)).shape == (3, 2)


def test_h_is_the_conjugate_transpose_of_a_matrix():
    c = tg.tensor([[1 + 2j, 3j]])
    np.testing.assert_array_equal(c.H.numpy(), [[1 - 2j], [-3j]])    # torch 2.13
    with pytest.warns(UserWarning, match="Tensor.H is deprecated on 0-D tensors"):
        assert tg.tensor(3.0).H.item() == 3.0
    # torch 2.13's messages
    with pytest.raises(RuntimeError, match=r"only supported on matrices \(2-D tensors\). Got "
                                           r"3-D tensor. For batches of matrices, consider "
                                           r"using tensor.mH"):
        tg.ones(2, 2, 2).H
    with pytest.raises(RuntimeError, match=r"Got 1-D tensor.\n  at .*test_unfold_ravel_h.py"):
        tg.ones(3).H
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tg.ones(2, 3).H.shape == (3, 2)


# ---- reshape, flatten and ravel: a view or a copy, as torch decides ------------------------------
_COPYING = [("reshape", lambda t: t.reshape(4)), ("tg.reshape", lambda t: tg.reshape(t, (4,))),
            ("flatten", lambda t: t.flatten()), ("ravel", lambda t: t.ravel())]


@pytest.mark.parametrize("make", [m for _, m in _COPYING], ids=[n for n, _ in _COPYING])
def test_a_copying_reshape_does_not_write_back(make):
    # torch 2.13: x stays [[0, 1], [2, 3]]; the node under the result is CloneBackward0
    x = tg.arange(4.0).reshape(2, 2)
    y = make(x.t())
    y[1] = 100
    np.testing.assert_array_equal(x.numpy(), [[0, 1], [2, 3]])
    w = tg.ones(2, 2, requires_grad=True)
    names = [type(n).__name__ for n, _ in make(w.t()).grad_fn.next_functions]
    assert names == ["CloneBackward0"]


def test_a_viewing_reshape_of_a_non_contiguous_tensor_writes_back():
    # torch 2.13: x = [[0, 1], [100, 3]] (x[:, :1] reshaped is a view, ReshapeAliasBackward0)
    x = tg.arange(4.0).reshape(2, 2)
    x[:, :1].reshape(2)[1] = 100
    np.testing.assert_array_equal(x.numpy(), [[0, 1], [100, 3]])


@pytest.mark.parametrize("make, contiguous, strides", [
    # torch 2.13's is_contiguous() and stride() of views of x = arange(4.).reshape(2, 2)
    (lambda x: x, True, (2, 1)),
    (lambda x: x[:, :1], False, (2, 1)),
    (lambda x: x.t(), False, (1, 2)),
    (lambda x: x[:1].t(), True, (1, 2)),        # size-1 dims do not count
    (lambda x: x[1:], True, (2, 1)),
    (lambda x: x[:, ::2], False, (2, 2)),
    (lambda x: x.expand(3, 2, 2), False, (0, 2, 1)),
    (lambda x: x.t() * 1, True, (2, 1)),        # an op's result is row-major
    (lambda x: x[0, 0], True, ()),
])
def test_is_contiguous_and_stride_as_torch(make, contiguous, strides):
    v = make(tg.arange(4.0).reshape(2, 2))
    assert v.is_contiguous() is contiguous
    assert v.stride() == strides


def test_stride_of_one_dim():
    x = tg.arange(4.0).reshape(2, 2)
    assert (x.stride(1), x.stride(-1), x.t().stride(0)) == (1, 1, 1)   # torch 2.13
    assert tg.tensor(1.0).stride() == ()
    with pytest.raises(IndexError, match=r"expected to be in range of \[-2, 1\], but got 2"):
        x.stride(2)
