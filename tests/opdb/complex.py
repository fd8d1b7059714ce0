"""Complex numbers: conj, real, imag, angle, sgn, complex, polar, view_as_real/complex, vdot.

Gradients follow torch's convention (for a real loss L of z = x + iy the gradient is
dL/dx + i dL/dy); the generic suite compares them with finite differences along the real and
imaginary parts and with the conjugated `jax.vjp` (jax's convention is the conjugate of
torch's).  Every other op that takes complex tensors has `complex_samples` in its own family
module; torch 2.13's values for a few of them are in tests/ops/test_complex.py.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg

from .core import (C64, C128, F32, F64, ErrorInput, OpInfo, Sample, cnonzero, cuniform, ints,
                   nonzero, positive, uniform)
from .core import (ComplexEdgeGrad, ComplexForwardAD, ComplexSecondOrder,  # point-check records
                   ComplexTorchGrad, Z00)

A = np.array
COMPLEX_OUT = {"gradcheck": "a complex result: tg.autograd.gradcheck is real-only (the FD "
                            "column runs the real/imaginary finite differences)",
               "gradgradcheck": "a complex result (as gradcheck)",
               "low_precision": "no complex32: float16 has no complex counterpart (torch's "
                                "complex32 is not supported)"}


def _at_zero(x):
    """`x` with 0 replaced by 1, and the mask of zeros: references whose jax gradient at 0
    would be NaN pick torch's 0 there instead."""
    zero = x == 0
    return zero, x + zero   # x + 1 where x == 0, x elsewhere


def _angle_ref(xp, x):
    if x.dtype.kind != "c":   # pi for x < 0, else 0; gradient 0 (torch)
        return xp.where(x < 0, math.pi, 0.0 * x)
    zero, safe = _at_zero(x)
    return xp.where(zero, 0.0, xp.angle(safe))


def _sgn_ref(xp, x):
    if x.dtype.kind != "c":
        return xp.sign(x)
    zero, safe = _at_zero(x)
    return xp.where(zero, 0.0, safe / xp.abs(safe))


def _real_out(gen, zeros=False):
    """Complex samples whose result is real (float32 for complex64): (3, 4), 0-d, and with
    `zeros` a sample holding 0 (where torch's gradient is 0; no finite differences)."""
    def samples(rng, dtype):
        real = dtype.to_real()
        out = [Sample((gen(rng, (3, 4), dtype),), dtype=real),
               Sample((gen(rng, (), dtype),), dtype=real)]
        if zeros:
            out.append(Sample((A([0j, 3 + 4j, -1j, -2.0], dtype.numpy),), dtype=real, fd=False))
        return out
    return samples


def _complex_unary(gen=cuniform):
    return lambda rng, dtype: [Sample((gen(rng, (3, 4), dtype),)),
                               Sample((gen(rng, (2, 1, 3), dtype),))]


def _real_unary(gen=uniform, int_out=None):
    """Real samples: (3, 4) and 0-d; an int64 input giving `int_out` (float32 samples)."""
    def samples(rng, dtype):
        out = [Sample((gen(rng, (3, 4), dtype),)), Sample((gen(rng, (), dtype),))]
        if int_out is not None and dtype is F32:
            out.append(Sample((ints(rng, (3, 4), 1, 4),), dtype=int_out))
        return out
    return samples


def _parts_samples(first=uniform):
    """Two real tensors making one complex: same shape, broadcasting; result complex."""
    def samples(rng, dtype):
        c = dtype.to_complex()
        return [Sample((first(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)), dtype=c),
                Sample((first(rng, (3, 1), dtype), uniform(rng, (4,), dtype)), dtype=c)]
    return samples


def _parts_errors(name):
    f32, f64 = np.ones((3,), np.float32), np.ones((3,), np.float64)
    return lambda: [ErrorInput((f32, f64), TypeError, (name, "same dtype", "f32[3]", "f64[3]")),
                    ErrorInput((np.ones((3,), np.int64),) * 2, TypeError,
                               (name, "float32 or float64", "i64[3]"))]


def _view_as_real_samples(rng, dtype):
    real = dtype.to_real()
    return [Sample((cuniform(rng, (3, 4), dtype),), dtype=real),
            Sample((cuniform(rng, (), dtype),), dtype=real)]


def _view_as_complex_samples(rng, dtype):
    c = dtype.to_complex()
    return [Sample((uniform(rng, (3, 2), dtype),), dtype=c),
            Sample((uniform(rng, (2, 3, 2), dtype),), dtype=c)]


def _vdot_samples(rng, dtype):
    gen = cuniform if dtype.is_complex else uniform
    return [Sample((gen(rng, (4,), dtype), gen(rng, (4,), dtype))),
            Sample((gen(rng, (1,), dtype), gen(rng, (1,), dtype)))]


def _vdot_errors():
    c, f = np.ones((3,), np.complex64), np.ones((3,), np.float32)
    return [ErrorInput((c, np.ones((3,), np.complex128)), TypeError, ("vdot", "same dtype")),
            ErrorInput((np.ones((2, 3), np.complex64), c), ValueError, ("vdot", "1D")),
            ErrorInput((c, f), TypeError, ("vdot", "same dtype", "c64[3]", "f32[3]"))]


OPS = [
    # conj of a real tensor: the tensor's values (torch returns the tensor itself)
    OpInfo("conj", tg.conj, lambda xp, x: xp.conj(x), _real_unary(),
           complex_samples=_complex_unary(),
           point_checks=(
               # |z|^2 -> 2z (with G_REAL[0] = 1)
               ComplexTorchGrad("abs_squared", lambda z: (z * z.conj()).real.sum().reshape(1), 1,
                                [[2 + 4j, -1 + 0.6j, 1.4 - 2.2j]]),
               ComplexTorchGrad("conj", tg.conj, 1, [[1 + 0.5j, 0.3 - 0.2j, -0.7 - 1j]]),
               ComplexSecondOrder("conj_real_imag", lambda z, w: z.conj() * z.real + z.imag * w),
               ComplexForwardAD("conj", tg.conj, np.conj),
           )),
    OpInfo("conj_physical", lambda x: x.conj_physical(), lambda xp, x: xp.conj(x),
           _real_unary(), complex_samples=_complex_unary()),
    # tg.real, not x.real: Tensor.real of a real tensor is the tensor itself (no op), as torch
    OpInfo("real", tg.real, lambda xp, x: xp.real(x), _real_unary(),
           complex_samples=_real_out(cuniform),
           point_checks=(
               ComplexTorchGrad("real", lambda z: z.real, 1, [[1, -2, 0.5]]),
               ComplexForwardAD("real", lambda z: z.real, np.real),
           )),
    OpInfo("imag", lambda x: x.imag, lambda xp, x: xp.imag(x), lambda rng, dtype: [],
           dtypes=(), complex_samples=_real_out(cuniform),
           error_inputs=lambda: [ErrorInput((np.ones((3,), np.float32),), RuntimeError,
                                            ("imag", "non-complex", "f32[3]"))],
           point_checks=(
               ComplexTorchGrad("imag", lambda z: z.imag, 1, [[1j, -2j, 0.5j]]),
           )),
    OpInfo("angle", tg.angle, _angle_ref, _real_unary(nonzero, int_out=F32),
           complex_samples=_real_out(cnonzero, zeros=True),
           notes="complex: gradient i z / |z|^2, 0 at z = 0; real: 0 everywhere, as torch",
           point_checks=(
               ComplexTorchGrad("angle", tg.angle, 1,
                                [[-0.4 + 0.2j, 1.764705882353 + 2.941176470588j,
                         0.323529411765 + 0.205882352941j]]),
               ComplexSecondOrder("angle", lambda z, w: z.angle() * w.real),
               ComplexForwardAD("angle", tg.angle, np.angle),
           )),
    OpInfo("sgn", tg.sgn, _sgn_ref, _real_unary(nonzero),
           complex_samples=lambda rng, dtype: [Sample((cnonzero(rng, (3, 4), dtype),)),
                                               Sample((A([0j, 3 + 4j], dtype.numpy),),
                                                      fd=False)],
           notes="z / |z|; gradient 0 at z = 0 and for real inputs (sign), as torch",
           point_checks=(
               ComplexTorchGrad("sgn", tg.sgn, 1,
                                [[0.4472135955 - 0.22360679775j, 0.287512333915 + 0.479187223192j,
                           -0.034739002436 - 0.022106637914j]]),
               ComplexSecondOrder("sgn", lambda z, w: z.sgn() * w),
               ComplexForwardAD("sgn", tg.sgn, lambda z: z / np.abs(z)),
               ComplexEdgeGrad("sgn_at_0", lambda z: z.sgn().real.sum(), Z00, [0, 0]),
           )),
    OpInfo("complex", tg.complex, lambda xp, re, im: re + 1j * im, _parts_samples(),
           error_inputs=_parts_errors("complex"), skips=COMPLEX_OUT),
    OpInfo("polar", tg.polar, lambda xp, r, theta: r * xp.cos(theta) + 1j * r * xp.sin(theta),
           _parts_samples(positive), error_inputs=_parts_errors("polar"), skips=COMPLEX_OUT),
    OpInfo("view_as_real", tg.view_as_real,
           lambda xp, x: xp.stack([xp.real(x), xp.imag(x)], axis=-1), lambda rng, dtype: [],
           dtypes=(), complex_samples=_view_as_real_samples,
           error_inputs=lambda: [ErrorInput((np.ones((3,), np.float32),), TypeError,
                                            ("view_as_real", "complex", "f32[3]"))]),
    OpInfo("view_as_complex", tg.view_as_complex, lambda xp, x: x[..., 0] + 1j * x[..., 1],
           _view_as_complex_samples, skips=COMPLEX_OUT,
           error_inputs=lambda: [ErrorInput((np.ones((3, 3), np.float32),), ValueError,
                                            ("view_as_complex", "size 2", "f32[3,3]"))]),
    # dot does not conjugate, vdot conjugates its first argument (torch, numpy.vdot)
    OpInfo("vdot", tg.vdot, lambda xp, a, b: xp.vdot(a, b), _vdot_samples,
           complex_samples=_vdot_samples, error_inputs=_vdot_errors,
           point_checks=(
               ComplexTorchGrad("vdot", lambda a, b: tg.vdot(a, b).reshape(1), 2,
                                [[0.5 - 0.25j, 0.95 + 1.1j, -1.25 + 0.5j],
                                 [2 + 1.5j, -0.35 + 0.55j, 0.15 - 1.45j]]),
           )),
]
