"""Large uniform draws of the NumPy kernel run on XLA (ir/ops/random.py XLA_MIN_UNIFORM):
the same bits as the NumPy cipher, normal draws untouched, and none in a forked child."""
import multiprocessing
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.ir import types as T
from tracegrad.ir.ops import _xla_handoff as H
from tracegrad.ir.ops import random as R

KEY = np.array([0x12345678, 0x9ABCDEF0], np.uint32)


def _numpy_only(monkeypatch, **attrs):
    monkeypatch.setattr(R, "XLA_MIN_UNIFORM", 1 << 62)
    try:
        return R._random_kernel(np, KEY, **attrs)
    finally:
        monkeypatch.undo()


@pytest.mark.parametrize("dtype", [T.float32, T.float64, T.float16, T.bfloat16])
def test_routed_uniform_draws_are_the_numpy_bits(monkeypatch, dtype):
    attrs = dict(size=(3, 5000), dtype=dtype, distribution="uniform")
    routed = []
    on_xla = H.run
    monkeypatch.setattr(H, "run", lambda *a: routed.append(a[2]) or on_xla(*a))
    got = R._random_kernel(np, KEY, **attrs)
    monkeypatch.undo()
    assert routed == [attrs]
    want = _numpy_only(monkeypatch, **attrs)
    assert got.dtype == want.dtype and got.shape == (3, 5000)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert 0.0 <= float(want.astype(np.float64).min()) and float(want.astype(np.float64).max()) < 1


def test_normal_and_small_draws_stay_on_numpy(monkeypatch):
    monkeypatch.setattr(H, "run", lambda *a: pytest.fail("routed to XLA"))
    R._random_kernel(np, KEY, size=(20000,), dtype=T.float32, distribution="normal")
    R._random_kernel(np, KEY, size=(R.XLA_MIN_UNIFORM - 1,), dtype=T.float32,
                     distribution="uniform")
    monkeypatch.setattr(H, "_forked", [True])   # a DataLoader worker forked from this process
    R._random_kernel(np, KEY, size=(20000,), dtype=T.float32, distribution="uniform")


def _child_draw(q):
    tg.manual_seed(3)
    q.put(tg.rand(20000).sum().item())


def test_a_forked_child_draws_without_jax():
    tg.manual_seed(3)
    want = tg.rand(20000).sum().item()   # routed: jax runs in this process now
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # jax's "os.fork() was called" warning
        p = ctx.Process(target=_child_draw, args=(q,))
        p.start()
    p.join(120)
    assert p.exitcode == 0
    assert q.get(timeout=5) == want   # the same stream, drawn on NumPy in the child


@pytest.mark.parametrize("dtype,grid", [(tg.float16, 2.0 ** -11), (tg.bfloat16, 2.0 ** -8)])
def test_half_precision_rand_stays_below_one(dtype, grid):
    # a 2**-24 grid rounded to half precision gave 1.0 (found by the test above); drawn on
    # 11 / 8 significand bits: [0, 1) on a 2**-11 / 2**-8 grid.  The largest value is torch
    # 2.13's: torch.rand(2_000_000, dtype=float16 / bfloat16).max() = 0.99951171875 /
    # 0.99609375 (torch's values are not all on this grid: it is finer near 0)
    tg.manual_seed(0)
    u = tg.rand(200000, dtype=dtype).float().numpy().astype(np.float64)
    assert u.min() >= 0.0 and u.max() == 1.0 - grid
    np.testing.assert_array_equal(u / grid, np.round(u / grid))
