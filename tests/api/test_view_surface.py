"""Tensor.unfold, ravel, moveaxis, H, stride, view(dtype) and reshape's view-or-copy rule
against torch 2.13 (values recorded from torch 2.13.0
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
    with pytest.raises(RuntimeError, match=r"Got 1-D tensor.\n  at .*test_view_surface.py"):
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


# ---- view(dtype): the bytes read as another dtype ---------------------------------------------
def test_view_dtype_values_as_torch():
    # torch 2.13's values
    b = tg.tensor([1.0, -2.0])
    np.testing.assert_array_equal(b.view(tg.int32).numpy(), [1065353216, -1073741824])
    np.testing.assert_array_equal(b.view(tg.int16).numpy(), [0, 16256, 0, -16384])
    assert b.view(tg.uint8).shape == (8,)
    two = tg.tensor([1.0, 2.0]).view(tg.float64)
    assert two.shape == (1,) and two.dtype is tg.float64
    assert two.item() == np.array([1.0, 2.0], np.float32).view(np.float64)[0]
    np.testing.assert_array_equal(tg.tensor([0, 1, 2], dtype=tg.uint8).view(tg.bool).numpy(),
                                  [False, True, True])
    np.testing.assert_array_equal(tg.tensor([True, False]).view(tg.uint8).numpy(), [1, 0])
    np.testing.assert_array_equal(tg.tensor([1.5]).view(tg.bfloat16).float().numpy(), [0, 1.5])
    np.testing.assert_array_equal(tg.tensor([1 + 2j]).view(tg.float32).numpy(), [1, 2])
    np.testing.assert_array_equal(tg.tensor([1.0, 2.0]).view(tg.complex64).numpy(), [1 + 2j])
    assert tg.arange(6).reshape(2, 3).view(tg.int32).shape == (2, 6)
    assert tg.zeros(0, 4).view(tg.float64).shape == (0, 2)
    assert tg.tensor(1.0).view(dtype=tg.int32).item() == 1065353216


def test_view_dtype_never_requires_grad():
    a = tg.tensor([1.0, 2.0], requires_grad=True)
    for dt in (tg.float32, tg.float16, tg.int32):   # torch 2.13: False, grad_fn None
        v = a.view(dt)
        assert not v.requires_grad and v.grad_fn is None


def test_writes_go_both_ways_through_a_dtype_view():
    # torch 2.13: w = [1., 0.]; y = [9.1835e-41, 2.]; the view after y.mul_(2) reads
    # [1073741824, 1082130432]; y.view(int32).add_(1) under no_grad bumps both versions to 1
    w = tg.zeros(2)
    w.view(tg.int32)[0] = 1065353216
    np.testing.assert_array_equal(w.numpy(), [1.0, 0.0])
    y = tg.tensor([1.0, 2.0])
    y.view(tg.int16)[1] = 1
    # the first float's high half set to 1: bits 0x00010000 (torch prints 9.1835e-41)
    np.testing.assert_array_equal(y.numpy(), np.array([0x10000, 0x40000000],
                                                      np.int32).view(np.float32))
    y = tg.tensor([1.0, 2.0])
    v = y.view(tg.int32)
    y.mul_(2)
    np.testing.assert_array_equal(v.numpy(), [1073741824, 1082130432])
    y = tg.tensor([1.0, 2.0])
    with tg.no_grad():
        u = y.view(tg.int32)
        u.add_(1)
    assert (y._version, u._version) == (1, 1)
    np.testing.assert_array_equal(y.numpy(), np.array([1065353217, 1073741825],
                                                      np.int32).view(np.float32))


def test_view_dtype_errors_as_torch():
    # torch 2.13's messages (RuntimeError each)
    with pytest.raises(RuntimeError, match=r"self.dim\(\) cannot be 0 to view Float as Short "
                                           r"\(different element sizes\)"):
        tg.tensor(1.0).view(tg.int16)
    with pytest.raises(RuntimeError, match=r"self.size\(-1\) must be divisible by 2 to view "
                                           r"Float as Double \(different element sizes\), "
                                           r"but got 3\n  at .*test_view_surface.py"):
        tg.ones(3).view(tg.float64)
    with pytest.raises(RuntimeError, match=r"self.stride\(-1\) must be 1 to view Float as "
                                           r"Short \(different element sizes\), but got 3"):
        tg.ones(2, 3).t().view(tg.int16)
    with pytest.raises(TypeError, match="must be torch.dtype, not str"):
        tg.ones(2).view(dtype="int32")
    # torch keeps the base's history when bits are written through; refused here
    x = tg.tensor([1.0, 2.0], requires_grad=True).clone()
    with pytest.raises(NotImplementedError, match=r"view\(dtype\): writing through a dtype "
                                                  r"view of a tensor that requires grad"):
        x.view(tg.int32).add_(1)


def test_view_dtype_on_jax_matches_numpy():
    def views(f32, c64, u8, b, f16):
        return (f32.view(tg.int16), f32.view(tg.float64), c64.view(tg.float32),
                f32.view(tg.complex64), u8.view(tg.bool), b.view(tg.uint8), f16.view(tg.int16),
                f32.view(tg.uint8), u8.view(tg.int32))
    args = (tg.tensor([[1.0, -2.0], [0.5, 3.0]]), tg.tensor([1 + 2j, -3j]),
            tg.tensor([0, 1, 2, 0], dtype=tg.uint8), tg.tensor([True, False]),
            tg.tensor([1.5, -0.25], dtype=tg.float16))
    eager = [o.numpy() for o in views(*args)]
    compiled = [o.numpy() for o in tg.compile(views, executor="jax")(*args)]
    for e, c in zip(eager, compiled):
        assert e.dtype == c.dtype and e.shape == c.shape
        np.testing.assert_array_equal(e, c)
    np.testing.assert_array_equal(eager[8], np.array([0, 1, 2, 0], np.uint8).view(np.int32))
