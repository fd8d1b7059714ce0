"""The branch-free NumPy kernels of where and leaky_relu (ir/ops/_select.py) give np.where's
bits: every dtype width, broadcasting, NaN, signed zeros and infinities, every slope."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.ir.ops import _select as S

SPECIAL = [np.nan, -0.0, 0.0, np.inf, -np.inf]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.int8,
                                   np.uint16, np.bool_])
def test_select_is_np_where_bit_for_bit(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 5000)) * 3).astype(dtype)
    y = rng.standard_normal((1, 5000)).astype(dtype)          # broadcast against x
    c = rng.random((3, 1)) > 0.5                               # and a broadcast mask
    c = np.broadcast_to(c, (3, 5000)) ^ (rng.random((3, 5000)) > 0.7)
    if np.dtype(dtype).kind == "f":
        x[0, :5] = SPECIAL
    got, want = S.select(np, c, x, y), np.where(c, x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_select_leaves_small_mixed_and_jax_inputs_to_where():
    x = np.arange(10.0)
    assert np.array_equal(S.select(np, x > 4, x, 0.0), np.where(x > 4, x, 0.0))   # scalar


@pytest.mark.parametrize("slope", [0.0, 1e-2, 0.2, 1.0, 1.5, -0.3])
def test_leaky_relu_kernel_is_the_where_form(slope):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(10000), SPECIAL]).astype(np.float32)
    s = np.float32(slope)
    with np.errstate(invalid="ignore"):
        got, want = S.leaky_relu(np, x, s), np.where(x > 0, x, x * s)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_eager_ops_use_them_with_torch_values():
    # torch 2.13: F.leaky_relu(tensor([-2., -0., 0., 3.]), 0.2) -> [-0.4, -0., 0., 3.]
    x = tg.tensor([-2.0, -0.0, 0.0, 3.0] * 2048)
    y = tg.nn.functional.leaky_relu(x, 0.2).numpy()[:4]
    np.testing.assert_array_equal(y, np.array([-0.4, -0.0, 0.0, 3.0], np.float32))
    assert np.signbit(y[1]) and not np.signbit(y[2])
    w = tg.where(x > 0, x, tg.zeros(8192)).numpy()[:4]
    np.testing.assert_array_equal(w, [0.0, 0.0, 0.0, 3.0])
