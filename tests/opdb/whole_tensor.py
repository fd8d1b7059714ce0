"""Floor division and the whole-tensor comparisons (ir/ops/division.py, closeness.py):
floor_divide (``//``), isclose, allclose, equal.  Registry composites, none differentiable
(their operands pass through stop_gradient).

References are NumPy's: `numpy.floor_divide` (Python's floor division, which torch's float
kernel matches: ``1.0 // 0.1`` is 9.0), `numpy.isclose` (torch's formula
``|a - b| <= atol + rtol * |b|``), `numpy.array_equal`.  allclose and equal return Python
bools; `fn` wraps them in a 0-d bool tensor for the generic checks.
"""
from __future__ import annotations

import numpy as np

import tracegrad as tg

from .core import BOOL, F32, I64, ErrorInput, OpInfo, Sample, complexify, ints, nonzero, uniform

A = np.array
NEAR_ROUNDING = "rounding to float16/bfloat16 moves values across the tolerance or an integer " \
                "quotient, so the low-precision result differs from float64's by design"


def _floor_divide_samples(rng, dtype):
    out = [Sample((uniform(rng, (3, 4), dtype, -5, 5), nonzero(rng, (3, 4), dtype))),
           Sample((uniform(rng, (2, 1, 4), dtype, -5, 5), nonzero(rng, (3, 1), dtype))),
           Sample((uniform(rng, (3, 4), dtype, -5, 5), 0.75)),
           Sample((-7.5, nonzero(rng, (4,), dtype))),
           Sample((A([1.0, -1.0, 7.0, -7.0], dtype.numpy), A([0.1, 0.1, 2.0, 2.0], dtype.numpy)))]
    if dtype is F32:
        out += [Sample((ints(rng, (3, 4), -9, 10), ints(rng, (3, 4), 1, 4)), dtype=I64),
                Sample((A([7, -7, 7, -7]), A([2, 2, -2, -2])), dtype=I64),
                Sample((ints(rng, (3,), -9, 10), 2.5), dtype=F32),         # int // float -> f32
                Sample((A([2 ** 62 + 1, -(2 ** 62) - 3]), A([3, 7])), dtype=I64)]   # exact
    return out


def _floor_divide_errors():
    shapes = ErrorInput((np.ones((3, 4), np.float32), np.ones((5,), np.float32)), ValueError,
                        ("floor_divide:", "f32[3,4]", "f32[5]", "broadcast"))
    return [shapes,
        ErrorInput((A([True, False]), A([True, True])), tg.DTypeError, ("floor_divide", "bool")),
        ErrorInput((A([1 + 1j]), A([1.0 + 0j])), tg.DTypeError, ("floor_divide", "complex")),
        ErrorInput((A([1, 2]), A([1, 0])), ZeroDivisionError, ("floor_divide", "by zero")),
        ErrorInput((2, 3), TypeError, ("floor_divide", "at least one tensor"))]


def _close_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    near = x + A(1e-6 * rng.choice([-1.0, 1.0, 30.0], (3, 4))).astype(dtype.numpy)
    special = A([np.nan, np.inf, -np.inf, 1.0, np.nan], dtype.numpy)
    other = A([np.nan, np.inf, np.inf, 1.0 + 2e-5, 1.0], dtype.numpy)
    return [Sample((x, near)),
            Sample((x, near), {"rtol": 0.0, "atol": 1e-5}),
            Sample((uniform(rng, (2, 1, 4), dtype), uniform(rng, (3, 1), dtype)), {"atol": 1.0}),
            Sample((special, other)),
            Sample((special, other), {"equal_nan": True}),
            Sample((x, x), {"rtol": 0.0, "atol": 0.0})]


def _close_errors(name):
    x = np.ones((3,), np.float32)
    return lambda: [
        ErrorInput((x, np.ones((3,), np.float64)), tg.DTypeError, (name, "one dtype", "f64[3]")),
        ErrorInput((x, x), ValueError, (name, "rtol must be greater than or equal to zero"),
                   {"rtol": -1.0}),
        ErrorInput((x, 1.0), TypeError, (f"{name}()", "'other'", "float"))]


def _isclose_ref(xp, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _equal_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    y = x.copy()
    y[1, 2] += 1
    return [Sample((x, x.copy())), Sample((x, y)), Sample((x, x[:2])),
            Sample((A([1.0, np.nan], dtype.numpy), A([1.0, np.nan], dtype.numpy))),
            Sample((A([1, 2]), A([1.0, 2.0], dtype.numpy)))]   # promotion: equal values


def _as_tensor(fn):
    return lambda *a, **kw: tg.tensor(fn(*a, **kw))


OPS = [
    OpInfo("floor_divide", tg.floor_divide, lambda xp, x, y: np.floor_divide(x, y),
           _floor_divide_samples, differentiable=False, error_inputs=_floor_divide_errors,
           skips={"low_precision": NEAR_ROUNDING}),
    OpInfo("isclose", tg.isclose, _isclose_ref, _close_samples, differentiable=False,
           out_dtype=BOOL, error_inputs=_close_errors("isclose"),
           skips={"low_precision": NEAR_ROUNDING},
           complex_samples=complexify(_close_samples, 4)),
    OpInfo("allclose", _as_tensor(tg.allclose),
           lambda xp, *a, **kw: np.asarray(np.all(_isclose_ref(xp, *a, **kw))), _close_samples,
           differentiable=False, out_dtype=BOOL, error_inputs=_close_errors("allclose"),
           complex_samples=complexify(_close_samples, 4),
           skips={"low_precision": NEAR_ROUNDING,
                  "compile": "returns a Python bool: needs concrete values (a graph break)"}),
    OpInfo("equal", _as_tensor(tg.equal),
           lambda xp, x, y: np.asarray(x.shape == y.shape and bool(np.all(x == y))),
           _equal_samples, differentiable=False, out_dtype=BOOL,
           error_inputs=lambda: [ErrorInput((np.ones(2, np.float32), [1.0, 2.0]), TypeError,
                                            ("equal()", "'other'", "list"))],
           complex_samples=3,
           skips={"compile": "returns a Python bool: needs concrete values (a graph break)"}),
]
