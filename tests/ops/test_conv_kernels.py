"""The NumPy kernels of conv and max_pool route large float32/float64 inputs to XLA
(ir/ops/_xla_handoff.py); both routes against each other and a float64 reference, the
pool's window loop against argmax over the stacked windows, finite differences through the
routed kernel, and the backward program of a conv net built once across steps."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad.autograd import backward_program
from tracegrad.ir.ops import _xla_handoff as handoff
from tracegrad.ir.ops import conv as C

CONVS = [   # x, w shapes, attributes (each C/groups x kernel >= XLA_MIN_CONTRACTION: XLA)
    ((3, 8, 11, 9), (6, 8, 3, 3), dict(stride=(1, 1), padding=((1, 1), (1, 1)))),
    ((2, 8, 12, 10), (4, 4, 3, 3), dict(stride=(2, 3), padding=((2, 0), (1, 1)), groups=2)),
    ((2, 6, 9, 9), (5, 6, 3, 3), dict(dilation=(2, 1), padding=((-1, 2), (0, 0)))),
    ((2, 5, 6, 7), (3, 5, 3, 3), dict(lhs_dilation=(2, 2), padding=((2, 2), (2, 1)))),
    ((2, 48, 17), (8, 48, 1), dict(stride=(2,), padding=((0, 0),))),
    # col2im with groups and kernel dilation; im2col channels last with groups; 3-d col2im
    ((2, 8, 7, 9), (6, 4, 3, 2), dict(dilation=(2, 1), padding=((4, 4), (1, 1)), groups=2)),
    ((2, 16, 5, 4), (32, 8, 2, 2), dict(groups=2)),
    ((1, 3, 4, 5, 3), (2, 3, 2, 2, 2), dict(lhs_dilation=(1, 2, 1),
                                           padding=((1, 1), (0, 1), (1, 0)))),
]
# which NumPy form each CONVS entry takes (`_prefer_col2im`): both forms are covered
COL2IM = [True, False, False, True, False, True, False, True]


def _attrs(nd, a):
    return dict(stride=a.get("stride", (1,) * nd), padding=a.get("padding", ((0, 0),) * nd),
                dilation=a.get("dilation", (1,) * nd),
                lhs_dilation=a.get("lhs_dilation", (1,) * nd), groups=a.get("groups", 1))


@pytest.mark.parametrize("xs,ws,a", CONVS)
def test_conv_routes_agree(xs, ws, a, monkeypatch):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    attrs = _attrs(len(xs) - 2, a)
    monkeypatch.setattr(C, "XLA_MIN_CONTRACTION", 10 ** 9)     # im2col, float64: reference
    ref = C._conv_numpy(np, x, w, **attrs)
    monkeypatch.undo()
    routed = []
    on_xla = handoff.run
    monkeypatch.setattr(handoff, "run", lambda *a: routed.append(a[0]) or on_xla(*a))
    y64 = C._conv_numpy(np, x, w, **attrs)
    y32 = C._conv_numpy(np, x.astype(np.float32), w.astype(np.float32), **attrs)
    assert y64.dtype == np.float64 and y32.dtype == np.float32 and y32.shape == ref.shape
    np.testing.assert_allclose(y64, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y32, ref, rtol=1e-4, atol=1e-4)
    assert routed == [C._conv_jax, C._conv_jax]


def test_conv_numpy_forms_are_both_covered():
    for (xs, ws, a), col2im in zip(CONVS, COL2IM):
        at = _attrs(len(xs) - 2, a)
        assert C._prefer_col2im(xs, ws, at["stride"], at["padding"], at["dilation"],
                                at["lhs_dilation"]) is col2im, (xs, ws, a)
    rng = np.random.default_rng(6)   # channels-last im2col: C/groups >= output width
    x, w = rng.standard_normal((2, 16, 5, 4)), rng.standard_normal((32, 8, 2, 2))
    got = C._conv_im2col(x, w, (1, 1), (1, 1), 2)
    ref = np.einsum("ngchw,gochw->ngo", np.stack([  # every output position, by hand
        np.stack([x[:, :, i:i + 2, j:j + 2] for j in range(3)], -1) for i in range(4)], -2)
        .reshape(2, 2, 8, 2, 2, 4, 3).transpose(0, 5, 6, 1, 2, 3, 4).reshape(-1, 2, 8, 2, 2),
        w.reshape(2, 16, 8, 2, 2)).reshape(2, 4, 3, 32).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_conv_on_numpy_has_finite_difference_gradients(monkeypatch):
    # both NumPy forms: the forward by im2col, the input gradient (padding 2, lhs dilation
    # by the stride 1) by col2im; the backward program runs on the interpreter here
    monkeypatch.setattr(C, "XLA_MIN_CONTRACTION", 10 ** 9)
    rng = np.random.default_rng(7)
    x = tg.tensor(rng.standard_normal((2, 4, 6, 5)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((6, 2, 3, 3)), requires_grad=True)
    assert tg.autograd.gradcheck(lambda x, w: F.conv2d(x, w, padding=1, groups=2, dilation=(1, 2)),
                                 (x, w), eps=1e-6, atol=1e-5)
    wt = tg.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)   # lhs dilation 2
    assert tg.autograd.gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1),
                                 (x, wt), eps=1e-6, atol=1e-5)


def test_conv_through_xla_has_finite_difference_gradients():
    rng = np.random.default_rng(1)
    x = tg.tensor(rng.standard_normal((2, 4, 6, 5)), requires_grad=True)
    w = tg.tensor(rng.standard_normal((3, 4, 3, 3)), requires_grad=True)   # 36 products
    assert tg.autograd.gradcheck(lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=1),
                                 (x, w), eps=1e-6, atol=1e-5)


def _stack_argmax(windows):
    stacked = np.stack(windows, axis=-1)
    return stacked.max(axis=-1), stacked.argmax(axis=-1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_window_argmax_is_argmax_over_the_stack(dtype):
    rng = np.random.default_rng(2)
    windows = [rng.integers(-3, 3, (4, 5, 6)).astype(dtype) for _ in range(5)]   # many ties
    if dtype != np.int32:
        for i, w in enumerate(windows):
            w[rng.random(w.shape) < 0.1] = np.nan if i % 2 else -np.inf
    values, arg = C._window_argmax(windows)
    ref_values, ref_arg = _stack_argmax(windows)
    np.testing.assert_array_equal(values, ref_values)     # NaNs compare equal here
    np.testing.assert_array_equal(arg, ref_arg)


def test_a_forked_child_keeps_conv_and_pool_on_numpy(monkeypatch):
    # jax started by the parent does not survive fork(): a DataLoader worker's convs and
    # pools run their NumPy kernels, with the same values
    rng = np.random.default_rng(4)
    x, w = rng.standard_normal((2, 4, 9, 9)), rng.standard_normal((3, 4, 3, 3))
    attrs = _attrs(2, dict(stride=(1, 1)))
    want = C._conv_numpy(np, x, w, **attrs)
    pooled = rng.standard_normal((2, 4, 160, 160))
    pool = dict(kernel_size=(2, 2), stride=(2, 2), padding=((0, 0), (0, 0)), dilation=(1, 1))
    want_pool = C._max_pool_kernel(np, pooled, **pool)
    monkeypatch.setattr(handoff, "_forked", [True])
    monkeypatch.setattr(handoff, "run", lambda *a: pytest.fail("handed to XLA in a child"))
    np.testing.assert_allclose(C._conv_numpy(np, x, w, **attrs), want, rtol=1e-12, atol=1e-12)
    got = C._max_pool_kernel(np, pooled, **pool)
    np.testing.assert_array_equal(got[0], want_pool[0])
    np.testing.assert_array_equal(got[1], want_pool[1])


@pytest.mark.parametrize("kernel,stride,padding,dilation", [
    ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1)),
    ((3, 3), (2, 1), ((1, 2), (1, 1)), (1, 2)),
])
def test_max_pool_routes_agree(kernel, stride, padding, dilation, monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.integers(-4, 4, (4, 8, 48, 44)).astype(np.float32)   # ties everywhere
    x[rng.random(x.shape) < 0.01] = np.nan
    attrs = dict(kernel_size=kernel, stride=stride, padding=padding, dilation=dilation)
    assert x.size >= C.XLA_MIN_POOL_SIZE
    routed = C._max_pool_kernel(np, x, **attrs)
    monkeypatch.setattr(C, "XLA_MIN_POOL_SIZE", 10 ** 12)
    ref = C._max_pool_kernel(np, x, **attrs)
    assert [a.dtype for a in routed] == [np.float32, np.int64]
    np.testing.assert_array_equal(routed[0], ref[0])
    np.testing.assert_array_equal(routed[1], ref[1])
    # every index names an input element holding the value (NaN: a NaN)
    picked = np.take_along_axis(x.reshape(4, 8, -1), ref[1].reshape(4, 8, -1), -1)
    np.testing.assert_array_equal(picked.reshape(ref[0].shape), ref[0])


def test_conv_net_backward_program_is_built_once():
    # conv's and max_pool's padding attribute is a tuple of pairs: their plans are cached,
    # so the tape key is the same every step
    tg.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(4 * 4 * 4, 3))
    x, y = tg.randn(5, 1, 8, 8), tg.tensor([0, 1, 2, 1, 0])
    backward_program.clear_cache()
    for _ in range(3):
        model.zero_grad()
        F.cross_entropy(model(x), y).backward()
    assert backward_program.cache_info()["programs"] == 1
    (prog,) = backward_program._cache.values()
    assert prog.runs == 3



# `make test`: the odd entries (both NumPy forms, groups, kernel and input
# dilation, 3-d); each
# case is two XLA compiles (~3.5 s): `make test-all` runs the even ones too
@pytest.mark.parametrize("xs,ws,a", [pytest.param(*c, marks=[pytest.mark.slow] * (k % 2 == 0))
                                     for k, c in enumerate(CONVS)])
def test_jax_conv_im2col_agrees_with_xla_conv(xs, ws, a, monkeypatch):
    import jax
    import jax.numpy as jnp
    rng = np.random.default_rng(4)
    x = rng.standard_normal(xs) + 1j * rng.standard_normal(xs)
    w = rng.standard_normal(ws) - 0.5j * rng.standard_normal(ws)
    attrs = _attrs(len(xs) - 2, a)
    with jax.enable_x64(True):
        xla = np.asarray(C._conv_jax(jnp, jnp.asarray(x), jnp.asarray(w), **attrs))
        monkeypatch.setattr(C, "XLA_MIN_CONTRACTION", 10 ** 9)    # every conv as im2col
        im2col = np.asarray(C._conv_jax(jnp, jnp.asarray(x), jnp.asarray(w), **attrs))
        half = np.asarray(C._conv_jax(jnp, jnp.asarray(x.real, jnp.bfloat16),
                                      jnp.asarray(w.real, jnp.bfloat16), **attrs))
    assert im2col.dtype == np.complex128 and half.dtype == jnp.bfloat16
    np.testing.assert_allclose(im2col, xla, rtol=1e-12, atol=1e-12)
    ref = C._conv_numpy(np, x.real, w.real, **attrs)
    np.testing.assert_allclose(half.astype(np.float64), ref, rtol=0.05, atol=0.3)


def test_in_place_ops_and_views_of_a_conv_output_from_xla():
    # the routed kernel returns a read-only view of XLA's buffer; tensors on it behave as usual
    rng = np.random.default_rng(5)
    x = tg.tensor(rng.standard_normal((4, 8, 10, 10)).astype(np.float32))
    w = tg.tensor(rng.standard_normal((6, 8, 3, 3)).astype(np.float32))
    y = F.conv2d(x, w)
    expected = np.maximum(y.numpy(), 0) + 1
    view = y[1]
    F.relu(y, inplace=True).add_(1)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(view.numpy(), expected[1])
