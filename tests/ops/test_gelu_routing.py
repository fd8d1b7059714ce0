"""GELU's NumPy kernel hands large float32/float64 inputs to XLA (ir/ops/special.py
XLA_MIN_GELU), both approximations: values against float64 references; small,
half-precision and forked-child calls stay on NumPy."""
import math

import numpy as np
import pytest
from scipy.special import erf

from tracegrad.ir.ops import _xla_handoff as H
from tracegrad.ir.ops import special as S
from tracegrad.ir.registry import get

KERNEL = get("gelu").kernel


def _reference(x, approximate="none"):
    x = x.astype(np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype, tol", [(np.float32, 2e-6), (np.float64, 1e-14)])
def test_large_inputs_run_on_xla_with_scipys_values(monkeypatch, dtype, tol, approximate):
    x = np.random.default_rng(0).standard_normal(S.XLA_MIN_GELU * 2).astype(dtype) * 4
    routed = []
    on_xla = H.run
    monkeypatch.setattr(H, "run", lambda *a: routed.append(a[0]) or on_xla(*a))
    got = KERNEL(np, x, approximate=approximate)
    assert routed == [S._gelu_jax] and got.dtype == dtype and got.shape == x.shape
    np.testing.assert_allclose(got, _reference(x, approximate), rtol=tol, atol=tol)


def test_other_calls_stay_on_numpy(monkeypatch):
    monkeypatch.setattr(H, "run", lambda *a: pytest.fail("routed to XLA"))
    big = np.linspace(-4, 4, S.XLA_MIN_GELU, dtype=np.float32)
    KERNEL(np, big[:100], approximate="none")
    KERNEL(np, big.astype(np.float16), approximate="none")
    monkeypatch.setattr(H, "_forked", [True])   # a DataLoader worker
    np.testing.assert_allclose(KERNEL(np, big, approximate="none"), _reference(big),
                               rtol=2e-6, atol=2e-6)
