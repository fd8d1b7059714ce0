"""Registry composites that used to be plain functions of tracegrad/_composite.py:
floor_divide (``//``) and isclose; allclose and equal return Python bools (no tensor for
the generic checks): tests/api/test_tensor_api.py covers them, with floor_divide's int64
exactness and torch's float kernel at its edge cases."""
from __future__ import annotations

import numpy as np

import tracegrad as tg

from .core import BINARY_SHAPES, BOOL, F32, ErrorInput, OpInfo, Sample, grid, uniform


def _divisors(rng, shape, dtype):
    """Magnitudes in [0.5, 2], either sign: no zero divisor, quotients away from ties."""
    return (uniform(rng, shape, dtype, 0.5, 2.0) * rng.choice([-1, 1], shape)).astype(dtype.numpy)


def _floor_divide_samples(rng, dtype):
    out = [Sample((uniform(rng, a, dtype, -6.0, 6.0), _divisors(rng, b, dtype)))
           for a, b in BINARY_SHAPES]
    out.append(Sample((uniform(rng, (3, 4), dtype, -6.0, 6.0), 2.5)))
    out.append(Sample((7.0, _divisors(rng, (3, 4), dtype))))
    ints = rng.integers(-50, 50, (3, 4))
    out.append(Sample((ints, np.where(ints % 7 == 0, 3, ints % 7)), dtype=tg.int64))
    return out


def _isclose_samples(rng, dtype):
    out = []
    for a, b in BINARY_SHAPES[:-1]:   # (a 0-d array would reach isclose as a NumPy scalar)
        x = grid(rng, a, dtype)
        near = (grid(rng, b, dtype) + rng.choice([0.0, 1e-9, 1e-3], b)).astype(dtype.numpy)
        out.append(Sample((x, near)))
    x = grid(rng, (3, 4), dtype)
    out.append(Sample((x, x + np.asarray(2e-5, dtype.numpy)), {"rtol": 0.0, "atol": 1e-4}))
    return out


OPS = [
    OpInfo("floor_divide", lambda x, y: x // y, lambda xp, x, y: xp.floor_divide(x, y),
           _floor_divide_samples, differentiable=False,
           error_inputs=lambda: [ErrorInput((np.array([True]), np.array([True])),
                                            tg.DTypeError, ("floor_divide", "bool"))],
           skips={"low_precision": "a floor at a different rounding of the quotient is off "
                                   "by one, however small the tolerance"}),
    OpInfo("isclose", tg.isclose, lambda xp, x, y, **kw: xp.isclose(x, y, **kw),
           _isclose_samples, differentiable=False, out_dtype=BOOL, dtypes=(F32, tg.float64),
           error_inputs=lambda: [ErrorInput((np.ones(2, np.float32), 1.0), TypeError,
                                            ("isclose()", "'other' must be a Tensor"))],
           complex_samples=2),
]

NOT_IN_OPDB = {
    "allclose": "returns a Python bool: tests/api/test_tensor_api.py",
    "equal": "returns a Python bool: tests/api/test_tensor_api.py",
    "stop_gradient": "internal: the operands of floor_divide / isclose pass through it",
}
