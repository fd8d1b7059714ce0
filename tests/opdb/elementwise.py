"""Elementwise math, special functions, activations, logical and bitwise ops, and casts.

Trigonometric and hyperbolic functions, the exp/log family, rounding, erf/gamma functions,
activations, binary math, clamp, lerp/addcmul/addcdiv, NaN handling, logical and bitwise ops,
dtype casts.

References are written once against `xp` (NumPy for values, jax.numpy under `jax.vjp` for
gradients); special functions come from scipy.special / jax.scipy.special.  Where torch picks a
subgradient or a value at a point the formula leaves undefined, the reference is written so that
jax differentiates it to torch's value (torch 2.13 checked by hand), and the OpInfo's `notes` say
what it is.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg

from .core import (BOOL, C64, F32, F64, I64, ErrorInput, OpInfo, Sample, _binary_samples,
                   _bools, _broadcast_errors, _no_bool, _not_a_tensor, _unary_samples, cnonzero,
                   complexify, cuniform, grid, ints, nonzero, positive, uniform, with_imag)
from .core import (ComplexEdgeGrad, ComplexSecondOrder, ComplexTorchGrad,  # point-check records
                   Subgradient)

F = tg.nn.functional
A = np.array
NAN, INF = math.nan, math.inf


def _sp(xp):
    """scipy.special for NumPy, jax.scipy.special for jax.numpy."""
    if xp is np:
        import scipy.special
        return scipy.special
    import jax.scipy.special
    return jax.scipy.special


def _in(low, high):
    return lambda rng, shape, dtype: uniform(rng, shape, dtype, low, high)


def _float_only(name):
    return lambda: [_not_a_tensor(name),
                    ErrorInput((np.ones((3,), np.int64),), TypeError,
                               (name, "floating-point", "i64[3]"))]


def _unary(name, fn, ref, gen=uniform, int_out=F32, kink=None, errors=None, extra=None, **kw):
    """One unary op: (3, 4), 0-d, (2, 3, 1), an int64 input, `kink` values and `extra` samples."""
    base = _unary_samples(gen, int_out, kink)

    def samples(rng, dtype):
        return base(rng, dtype) + (extra(rng, dtype) if extra else [])
    return OpInfo(name, fn, ref, samples, error_inputs=errors or (lambda: [_not_a_tensor(name)]),
                  **kw)


NO_ERRORS = lambda: []  # noqa: E731  (a Tensor-method `fn` cannot be called on a str)


def _values(*vals, fd=True, **kwargs):
    """A sample of fixed values (edge cases), in the dtype under test."""
    return lambda rng, dtype: [Sample((A(vals, dtype.numpy),), kwargs, fd=fd)]


# ---- trigonometric, hyperbolic, exp/log (int and bool promote to float32) -----------------------
def _int_sample(low, high):
    """An int64 input in [low, high): these ops' int inputs promote to float32."""
    return lambda rng, dtype: ([Sample((ints(rng, (3, 4), low, high),), dtype=F32)]
                               if dtype is F32 else [])


TRIG_OPS = [
    _unary("sin", tg.sin, lambda xp, x: xp.sin(x), complex_samples=2,
           point_checks=(
               ComplexTorchGrad("sin", tg.sin, 1,
                                [[3.558671906596 + 2.035536295642j,
                                  0.304410216522 + 0.139675728544j,
                           -0.032859641993 + 1.878466787148j]]),
           )),
    _unary("cos", lambda x: x.cos(), lambda xp, x: xp.cos(x), errors=NO_ERRORS, complex_samples=2),
    _unary("tan", tg.tan, lambda xp, x: xp.tan(x), gen=_in(-1.2, 1.2), complex_samples=2),
    _unary("asin", tg.asin, lambda xp, x: xp.arcsin(x), gen=_in(-0.9, 0.9), int_out=None,
           extra=_int_sample(-1, 2), notes="gradient inf at |x| = 1, as torch", complex_samples=2,
           point_checks=(
               Subgradient("asin", "asin", lambda x: tg.asin(x), ([1.0, -1.0, 0.0],),
                           ([INF, INF, 1.0],), "inf at +-1"),
               ComplexTorchGrad("asin", tg.asin, 1,
                                [[0.307994211894 - 0.35512030998j, 0.276845850757 + 0.262872872224j,
                          -0.66532533208 + 0.450258641684j]]),
           )),
    _unary("acos", lambda x: x.acos(), lambda xp, x: xp.arccos(x), gen=_in(-0.9, 0.9),
           int_out=None, extra=_int_sample(-1, 2), errors=NO_ERRORS,
           notes="gradient -inf at |x| = 1, as torch", complex_samples=2,
           point_checks=(
               Subgradient("acos", "acos", lambda x: tg.acos(x), ([1.0, -1.0, 0.0],),
                           ([-INF, -INF, -1.0],), "-inf at +-1"),
           )),
    _unary("atan", tg.atan, lambda xp, x: xp.arctan(x), complex_samples=2),
    _unary("sinc", tg.sinc, lambda xp, x: xp.sinc(x), complex_samples=None,
           extra=_values(0.0, 1e-4, -1.0),
           notes="gradient 0 at x = 0, as torch; second derivative there -pi^2/3 (torch: NaN)",
           point_checks=(
               Subgradient("sinc", "sinc", lambda x: tg.sinc(x), ([0.0, 1.0],), ([0.0, -1.0],),
                           "sinc'(0) = 0, sinc'(1) = -1"),
           )),
    _unary("sinh", tg.sinh, lambda xp, x: xp.sinh(x), complex_samples=2),
    _unary("cosh", tg.cosh, lambda xp, x: xp.cosh(x), complex_samples=2),
    _unary("asinh", tg.asinh, lambda xp, x: xp.arcsinh(x), complex_samples=2),
    _unary("acosh", tg.acosh, lambda xp, x: xp.arccosh(x), gen=_in(1.1, 3.0),
           notes="gradient inf at x = 1, as torch", complex_samples=2,
           point_checks=(
               ComplexTorchGrad("acosh", tg.acosh, 1,
                                [[0.35512030998 + 0.307994211894j,
                                  -0.262872872224 + 0.276845850757j,
                         0.450258641684 + 0.66532533208j]]),
           )),
    _unary("atanh", tg.atanh, lambda xp, x: xp.arctanh(x), gen=_in(-0.9, 0.9), int_out=None,
           extra=_int_sample(0, 1), notes="gradient inf at |x| = 1, as torch", complex_samples=2,
           point_checks=(
               Subgradient("atanh", "atanh", lambda x: tg.atanh(x), ([1.0, 0.0],), ([INF, 1.0],),
                           "inf at 1"),
           )),
    _unary("exp2", tg.exp2, lambda xp, x: xp.exp2(x), complex_samples=2),
    _unary("expm1", tg.expm1, lambda xp, x: xp.expm1(x),
           extra=_values(1e-7, -1e-8, 0.0), complex_samples=2),   # no cancellation near 0
    _unary("log2", tg.log2, lambda xp, x: xp.log2(x), gen=positive, complex_samples=2),
    _unary("log10", lambda x: x.log10(), lambda xp, x: xp.log10(x), gen=positive,
           errors=NO_ERRORS, complex_samples=2),
    _unary("log1p", tg.log1p, lambda xp, x: xp.log1p(x), gen=_in(-0.5, 2.0),
           extra=_values(1e-7, -1e-8, 0.0), complex_samples=2),
    _unary("rsqrt", tg.rsqrt, lambda xp, x: 1.0 / xp.sqrt(x), gen=positive,
           notes="rsqrt(0) = inf with gradient -inf, as torch", complex_samples=2),
    _unary("reciprocal", lambda x: x.reciprocal(), lambda xp, x: 1.0 / x, gen=nonzero,
           errors=NO_ERRORS, complex_samples=2,
           point_checks=(
               ComplexTorchGrad("reciprocal", tg.reciprocal, 1,
                                [[0.04 - 0.22j, -0.934256055363 + 0.501730103806j,
                    -0.707266435986 - 0.123875432526j]]),
           )),
]


# ---- square, rounding, frac ---------------------------------------------------------------------
def _square_extra(rng, dtype):
    if dtype is not F32:
        return []
    return [Sample((rng.random((3,)) > 0.5,), dtype=I64),                 # torch: bool -> int64
            Sample((ints(rng, (3,), dtype=np.int32),), dtype=tg.int32)]


def _rounding_ref(fn):
    # integers come back unchanged (NumPy's floor would make them float64)
    return lambda xp, x, **kw: x if x.dtype.kind in "iu" else fn(xp, x, **kw)


def _round_extra(rng, dtype):
    return [Sample((A([0.5, 1.5, 2.5, -0.5, -1.5, 0.25], dtype.numpy),), fd=False),  # to even
            Sample((uniform(rng, (3, 4), dtype, -50.0, 50.0),), {"decimals": 1}),
            Sample((A([15.0, 25.0, 1234.0, -7.0], dtype.numpy),), {"decimals": -1}, fd=False)]


def _round_errors():
    return [ErrorInput((np.ones((3,), bool),), TypeError, ("round", "bool", "b1[3]")),
            ErrorInput((np.ones((3,), np.int64),), TypeError, ("round", "decimals=1", "i64[3]"),
                       {"decimals": 1}),
            ErrorInput((np.ones((3,), np.float32),), TypeError, ("round", "decimals", "float"),
                       {"decimals": 1.5})]


ZERO_GRAD = "gradient 0 everywhere (also at the jumps), as torch"

ROUNDING_OPS = [
    _unary("square", tg.square, lambda xp, x: x * x, int_out=I64, extra=_square_extra,
           complex_samples=2),
    _unary("floor", tg.floor, _rounding_ref(lambda xp, x: xp.floor(x)), int_out=I64,
           errors=_no_bool("floor"), notes=ZERO_GRAD,
           point_checks=(
               Subgradient("floor", "floor", lambda x: tg.floor(x), ([-1.0, 0.5, 1.0],),
                           ([0.0, 0.0, 0.0],), "0 everywhere, also at the jumps"),
           )),
    _unary("ceil", lambda x: x.ceil(), _rounding_ref(lambda xp, x: xp.ceil(x)), int_out=I64,
           errors=_no_bool("ceil"), notes=ZERO_GRAD),
    _unary("trunc", tg.trunc, _rounding_ref(lambda xp, x: xp.trunc(x)), int_out=I64,
           errors=_no_bool("trunc"), notes=ZERO_GRAD),
    _unary("round", lambda x, **kw: x.round(**kw),
           _rounding_ref(lambda xp, x, decimals=0: xp.round(x, decimals)), int_out=I64,
           extra=_round_extra, errors=_round_errors, notes=ZERO_GRAD,
           point_checks=(
               Subgradient("round", "round", lambda x: tg.round(x), ([0.5, 1.5, 1.0],),
                           ([0.0, 0.0, 0.0],), "0 everywhere, also at the jumps"),
           )),
    _unary("frac", tg.frac, lambda xp, x: x - xp.trunc(x), int_out=None,
           extra=_values(-1.5, 1.25, 3.0, fd=False), errors=_float_only("frac"),
           notes="gradient 1 everywhere (also at integers), as torch",
           point_checks=(
               Subgradient("frac", "frac", lambda x: tg.frac(x), ([-1.0, 0.5, 1.0],),
                           ([1.0, 1.0, 1.0],), "1 everywhere, also at the jumps"),
           )),
]


# ---- special functions --------------------------------------------------------------------------
def _polygamma_errors():
    x = np.ones((3,), np.float32)
    return [ErrorInput((x, 0), ValueError, ("polygamma", "n must be", "0")),
            ErrorInput((x, 1.5), ValueError, ("polygamma", "1.5"))]


def _igamma_samples(rng, dtype):
    """x (the differentiated argument) against shape parameters a given as plain numbers (the
    gradient for a raises in torch: tests/api/test_igamma.py), broadcasting both ways."""
    a = lambda *s: uniform(rng, s, F64, 0.3, 4.0).tolist()  # noqa: E731
    x = lambda *s: uniform(rng, s, dtype, 0.1, 5.0)  # noqa: E731
    out = [Sample((x(3, 4), a(4))), Sample((x(2, 3), a(2, 3))), Sample((x(), a())),
           Sample((x(4), a(3, 1))), Sample((x(5), [0.5, 1.0, 2.0, 10.0, 30.0]))]
    if dtype is F32:   # an int64 x promotes with the float a: float32 (torch)
        out.append(Sample((ints(rng, (3,), 0, 5), a(3)), dtype=F32))
    return out


def _igamma(name, scipy_name):
    def fn(x, a):
        if not isinstance(a, tg.Tensor):   # plain numbers: a constant of x's float dtype
            a = tg.tensor(a, dtype=x.dtype if x.dtype.is_floating_point else tg.float32)
        return getattr(tg, name)(a, x)

    def ref(xp, x, a):
        dt = x.dtype if x.dtype.kind == "f" else np.float32
        return getattr(_sp(xp), scipy_name)(xp.asarray(np.asarray(a, dt)), x)

    def errors():
        i = np.ones((3,), np.int64)
        return [ErrorInput((i, i), TypeError,
                           (name, f'"{name}_cpu" not implemented for \'Long\'')),
                ErrorInput((np.ones(3, np.complex64), np.ones(3, np.complex64)), TypeError,
                           (name, "complex"))]
    return OpInfo(name, fn, ref, _igamma_samples, error_inputs=errors, tols={F32: (1e-5, 1e-4)},
                  low_precision={tg.float16: (2e-3, 2e-2), tg.bfloat16: (2e-2, 5e-2)},
                  notes="differentiable in x only: the gradient for a raises torch's "
                        "NotImplementedError (the derivative for 'input' is not implemented)")


SPECIAL_OPS = [
    _igamma("igamma", "gammainc"),
    _igamma("igammac", "gammaincc"),
    _unary("erf", tg.erf, lambda xp, x: _sp(xp).erf(x), extra=_values(-6.0, 6.0, 0.0)),
    _unary("erfc", lambda x: x.erfc(), lambda xp, x: _sp(xp).erfc(x),
           extra=_values(3.0, 5.0, -3.0), errors=NO_ERRORS),   # tails that 1 - erf loses
    _unary("erfinv", tg.erfinv, lambda xp, x: _sp(xp).erfinv(x), gen=_in(-0.95, 0.95),
           int_out=None, extra=_int_sample(0, 1),
           notes="erfinv(+-1) = +-inf with gradient inf, as torch",
           point_checks=(
               Subgradient("erfinv", "erfinv", lambda x: tg.erfinv(x), ([1.0, 0.0],),
                           ([INF, math.sqrt(math.pi) / 2],), "inf at 1"),
           )),
    _unary("lgamma", tg.lgamma, lambda xp, x: _sp(xp).gammaln(x), gen=_in(0.2, 4.0),
           extra=_values(-0.5, -1.5, -2.7, 10.0),
           notes="log|gamma(x)|; inf at 0 and the negative integers, gradient digamma(x)"),
    _unary("digamma", lambda x: x.digamma(), lambda xp, x: _sp(xp).digamma(x),
           gen=_in(0.2, 4.0), extra=_values(-0.5, -2.7, 10.0), errors=NO_ERRORS,
           notes="digamma(+-0) = -+inf (torch; jax gives NaN, so its kernel special-cases 0)"),
    # IR-only: the VJP of digamma (n = 1) and of itself (n + 1)
    OpInfo("polygamma", lambda x, n: tg._ops.polygamma(x, n),
           lambda xp, x, n: _sp(xp).polygamma(n, x),
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype, 0.3, 4.0), 1)),
                               Sample((uniform(rng, (), dtype, 0.3, 4.0), 2)),
                               Sample((ints(rng, (3,), 1, 4), 1), dtype=F32)],
           error_inputs=_polygamma_errors, tols={F32: (1e-5, 2e-5)}),
]


# ---- activations --------------------------------------------------------------------------------
def _logit_ref(xp, x, eps=None):
    if eps is not None:   # a closed interval: at x == eps the gradient is 1 / (x (1 - x))
        x = xp.where(x < eps, eps, xp.where(x > 1.0 - eps, 1.0 - eps, x))
    return xp.log(x / (1.0 - x))


def _logit_extra(rng, dtype):
    return [Sample((A([0.05, 0.3, 0.5, 0.7, 0.95], dtype.numpy),), {"eps": 0.2}),
            # at the bounds (exact in binary, so float32 and the float64 reference agree)
            Sample((A([0.25, 0.75, 0.01, 0.99], dtype.numpy),), {"eps": 0.25}, fd=False)]


def _softplus_ref(xp, x, beta=1.0, threshold=20.0):
    return xp.where(x * beta > threshold, x, xp.logaddexp(0.0, x * beta) / beta)


def _softplus_extra(rng, dtype):
    big = A([-100.0, -30.0, 0.0, 19.0, 30.0, 100.0], dtype.numpy)   # no overflow; linear part
    return [Sample((big,)), Sample((uniform(rng, (3, 4), dtype),), {"beta": 2.0, "threshold": 1.5}),
            Sample((uniform(rng, (3,), dtype),), {"beta": 0.5})]


def _gelu_ref(xp, x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1.0 + xp.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + _sp(xp).erf(x / math.sqrt(2.0)))


def _gelu_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -4.0, 4.0)
    return [Sample((x,)), Sample((x,), {"approximate": "tanh"}),
            Sample((uniform(rng, (), dtype),), {"approximate": "none"}),
            Sample((A([-10.0, 0.0, 10.0], dtype.numpy),), {"approximate": "tanh"})]


def _elu_ref(xp, x, alpha=1.0):
    return xp.where(x > 0, x, alpha * xp.expm1(x))


def _hardtanh_ref(xp, x, min_val=-1.0, max_val=1.0):
    # constants at and beyond the bounds: gradient 0 at the bounds, as torch
    return xp.where(x <= min_val, min_val, xp.where(x >= max_val, max_val, x))


def _hardtanh_samples(rng, dtype):
    out = [Sample((uniform(rng, (3, 4), dtype),)),
           Sample((uniform(rng, (2, 3), dtype, -3, 3), -0.5, 2.0)),
           Sample((A([-1.0, 1.0, 0.0, -2.0], dtype.numpy),), fd=False)]    # at the bounds: 0
    if dtype is F32:   # ints keep their dtype
        out.append(Sample((ints(rng, (3, 4)), -1.0, 2.0), dtype=I64))
    return out


def _hardtanh_errors():
    x = np.ones((3,), np.float32)
    return [ErrorInput((x, 1.0, -1.0), ValueError, ("hardtanh", "min_val", "max_val")),
            ErrorInput((np.ones((3,), bool),), TypeError, ("hardtanh", "bool"))]


def _relu6_samples(rng, dtype):
    out = [Sample((uniform(rng, (3, 4), dtype, -2.0, 8.0),)),
           Sample((A([0.0, 6.0, 3.0, 7.0, -1.0], dtype.numpy),), fd=False)]   # at 0 and 6: 0
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4), -2, 9),), dtype=I64))
    return out


def _inplace_relu6(x):
    """F.relu6(..., inplace=True) on a copy: the result is the copy, now clamped."""
    y = x * 1.0
    out = F.relu6(y, True)
    assert out is y
    return y


def _kink(*vals, kw=None):
    return lambda rng, dtype: [Sample((A(vals, dtype.numpy),), kw or {}, fd=False)]


ACTIVATION_OPS = [
    _unary("logit", tg.logit, _logit_ref, gen=_in(0.1, 0.9), int_out=None, extra=_logit_extra,
           notes="with eps: gradient 1/(x(1-x)) on the closed [eps, 1-eps], 0 outside; "
                 "without eps: NaN outside [0, 1], as torch"),
    OpInfo("softplus", F.softplus, _softplus_ref,
           lambda rng, dtype: _unary_samples(uniform)(rng, dtype) + _softplus_extra(rng, dtype),
           error_inputs=_float_only("softplus"),
           notes="linear (gradient 1) where beta * x > threshold, as torch"),
    OpInfo("gelu", F.gelu, _gelu_ref, _gelu_samples, tols={F32: (2e-5, 2e-5)},
           error_inputs=lambda: _float_only("gelu")() + [
               ErrorInput((np.ones((3,), np.float32),), ValueError,
                          ("gelu", "approximate", "'foo'"), {"approximate": "foo"})]),
    _unary("silu", F.silu, lambda xp, x: x / (1.0 + xp.exp(-x)), int_out=None,
           extra=_values(-30.0, 0.0, 30.0), errors=_float_only("silu")),
    _unary("mish", F.mish, lambda xp, x: x * xp.tanh(xp.logaddexp(0.0, x)), int_out=None,
           extra=_values(-30.0, 0.0, 30.0), errors=_float_only("mish")),
    OpInfo("elu", F.elu, _elu_ref,
           lambda rng, dtype: (_unary_samples(nonzero)(rng, dtype)
                               + [Sample((nonzero(rng, (3, 4), dtype), 0.5))]
                               + _kink(0.0, -1.0, 1.0, kw={"alpha": 2.0})(rng, dtype)),
           error_inputs=_float_only("elu"), notes="gradient alpha at 0, as torch",
           point_checks=(
               Subgradient("elu", "nn.functional.elu", lambda x: F.elu(x), ([-1.0, 0.0, 1.0],),
                           ([math.exp(-1.0), 1.0, 1.0],), "1 at 0"),
           )),
    OpInfo("leaky_relu", F.leaky_relu, lambda xp, x, s=0.01: xp.where(x > 0, x, x * s),
           lambda rng, dtype: (_unary_samples(nonzero)(rng, dtype)
                               + [Sample((nonzero(rng, (3, 4), dtype), 0.2))]
                               + _kink(0.0, -1.0, 1.0)(rng, dtype)),
           error_inputs=_float_only("leaky_relu"), notes="gradient negative_slope at 0, as torch",
           point_checks=(
               Subgradient("leaky_relu", "nn.functional.leaky_relu", lambda x: F.leaky_relu(x),
                           ([-1.0, 0.0, 1.0],), ([0.01, 0.01, 1.0],), "negative_slope at 0"),
           )),
    OpInfo("hardtanh", F.hardtanh, _hardtanh_ref, _hardtanh_samples, error_inputs=_hardtanh_errors,
           notes="gradient 0 at min_val and max_val (open interval, unlike clamp), as torch",
           point_checks=(
               Subgradient("hardtanh", "nn.functional.hardtanh", lambda x: F.hardtanh(x),
                           ([-2.0, -1.0, 0.0, 1.0, 2.0],), ([0.0, 0.0, 1.0, 0.0, 0.0],),
                           "0 at either bound (unlike clamp)"),
           )),
    OpInfo("relu6", F.relu6, lambda xp, x: _hardtanh_ref(xp, x, 0.0, 6.0), _relu6_samples,
           error_inputs=lambda: [_not_a_tensor("relu6")],
           notes="hardtanh(x, 0, 6): gradient 0 at 0 and at 6, as torch",
           point_checks=(
               Subgradient("relu6", "nn.functional.relu6", lambda x: F.relu6(x),
                           ([-1.0, 0.0, 3.0, 6.0, 7.0],), ([0.0, 0.0, 1.0, 0.0, 0.0],),
                           "0 at 0 and at 6"),
           )),
    OpInfo("relu6_inplace", _inplace_relu6, lambda xp, x: _hardtanh_ref(xp, x, 0.0, 6.0),
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype, -2.0, 8.0),))],
           covers=("relu6", "hardtanh")),
]


# ---- NaN/Inf handling and tests (forward only for the tests) ------------------------------------
F32_MAX = float(np.finfo(np.float32).max)


def _nan_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    x[0, 0], x[1, 1], x[2, 2] = NAN, INF, -INF
    return [Sample((x,), {"posinf": 3.0, "neginf": -4.0}),
            Sample((x,), {"nan": 1.5, "posinf": 1e30, "neginf": -2.0}),
            Sample((uniform(rng, (), dtype),), {"posinf": 1.0, "neginf": -1.0}),
            Sample((ints(rng, (3,)),), dtype=I64) if dtype is F32 else
            Sample((A([NAN, 1.0], dtype.numpy),), {"neginf": 0.0, "posinf": 0.0})]


def _classify_samples(rng, dtype):
    x = uniform(rng, (2, 4), dtype)
    x[0, :3] = NAN, INF, -INF
    out = [Sample((x,)), Sample((uniform(rng, (), dtype),))]
    if dtype is F32:
        out += [Sample((ints(rng, (3,)),)), Sample((rng.random((3,)) > 0.5,))]
    return out


def _classify_complex(rng, dtype):
    """NaN or inf in either part (torch: isnan if a part is NaN, isinf if a part is inf)."""
    x = cuniform(rng, (2, 4), dtype)
    x[0] = complex(NAN, 1.0), complex(1.0, INF), complex(-INF, NAN), complex(0.0, -2.0)
    return [Sample((x,)), Sample((cuniform(rng, (), dtype),))]


def _nan_to_num_complex(rng, dtype):
    """NaN and +-inf in either part; the defaults (the dtype's largest finite value) for
    complex128 only (the reference runs in complex128)."""
    z = cuniform(rng, (2, 4), dtype)
    z[0] = complex(NAN, 1.0), complex(1.0, INF), complex(-INF, NAN), complex(INF, -INF)
    out = [Sample((z,), {"nan": 0.5, "posinf": 7.0, "neginf": -7.0})]
    return out + [Sample((z,))] * (dtype is not C64)


def _classify(name, ref):
    return OpInfo(name, getattr(tg, name), ref, _classify_samples, differentiable=False,
                  out_dtype=BOOL, complex_samples=_classify_complex)


NAN_OPS = [
    OpInfo("nan_to_num", tg.nan_to_num,
           lambda xp, x, nan=0.0, posinf=None, neginf=None: xp.nan_to_num(
               x, nan=nan, posinf=posinf, neginf=neginf),
           _nan_samples, notes="gradient 0 at NaN and +-inf, 1 elsewhere, as torch",
           point_checks=(
               Subgradient("nan_to_num", "nan_to_num", lambda x: tg.nan_to_num(x),
                           ([NAN, INF, -INF, 1.0],), ([0.0, 0.0, 0.0, 1.0],),
                           "0 where the input was nan or +-inf"),
           )),
    # default posinf/neginf: the float32 range (the reference runs in float64, so float32 only)
    OpInfo("nan_to_num_defaults", lambda x: tg.nan_to_num(x).detach(),
           lambda xp, x: xp.nan_to_num(x, posinf=F32_MAX, neginf=-F32_MAX),
           lambda rng, dtype: [Sample((A([NAN, INF, -INF, 1.0, -2.5], np.float32),))],
           differentiable=False, dtypes=(F32,), covers=("nan_to_num",),
           skips={"low_precision": "posinf/neginf default to the dtype's largest finite value, "
                                   "so float16/bfloat16 differ from float64 by design"}),
    # complex: each part on its own; torch records no gradient for a complex result
    # (tests/ops/test_complex.py checks the error), so forward only
    OpInfo("nan_to_num_complex", lambda x, **kw: tg.nan_to_num(x.detach(), **kw),
           lambda xp, x, **kw: xp.nan_to_num(x, **kw), lambda rng, dtype: [],
           differentiable=False, dtypes=(), covers=("nan_to_num",),
           complex_samples=_nan_to_num_complex),
    _classify("isnan", lambda xp, x: xp.isnan(x)),
    _classify("isinf", lambda xp, x: xp.isinf(x)),
    _classify("isfinite", lambda xp, x: xp.isfinite(x)),
]


def _pair(dtype, xs, ys, fd=True):
    """A binary sample of fixed values (edge cases), in the dtype under test."""
    return Sample((A(xs, dtype.numpy), A(ys, dtype.numpy)), fd=fd)


# ---- binary math --------------------------------------------------------------------------------
def _atan2_ref(xp, y, x):
    # torch: both gradients 0 at x == y == 0 (jnp.arctan2 gives 0/0 there)
    origin = (y == 0) & (x == 0)
    return xp.where(origin, 0.0, xp.arctan2(xp.where(origin, 1.0, y), xp.where(origin, 1.0, x)))


def _atan2_samples(rng, dtype):
    out = _binary_samples(uniform)(rng, dtype)
    out.append(Sample((A([0.0, 1.0, -1.0], dtype.numpy), A([0.0, 0.0, 2.0], dtype.numpy)),
                      fd=False))
    if dtype is F32:
        out.append(Sample((ints(rng, (3,)), ints(rng, (3,), 1, 3)), dtype=F32))
    return out


def _mod_samples(rng, dtype):
    out = _binary_samples(uniform, nonzero)(rng, dtype)
    out.append(_pair(dtype, [5.5, -5.5, 5.5, -5.5], [2.0, 2.0, -2.0, -2.0]))
    if dtype is F32:
        out.append(Sample((A([-3, 3, -3, 3, 7]), A([2, -2, -2, 2, 3])), dtype=I64))
    return out


def _mod_errors(name):
    i = np.ones((3,), np.int64)
    return lambda: _broadcast_errors(name)() + [
        ErrorInput((i, A([1, 0, 2])), ZeroDivisionError, (name, "division by zero")),
        ErrorInput((np.ones((3,), bool), np.ones((3,), bool)), TypeError, (name, "bool"))]


def _float_binary_errors(name):
    i = np.ones((3,), np.int64)
    return lambda: _broadcast_errors(name)() + [
        ErrorInput((i, i), TypeError, (name, "floating-point", "i64[3]"))]


def _logaddexp_samples(rng, dtype):
    out = _binary_samples(uniform)(rng, dtype)
    out.append(_pair(dtype, [100.0, -100.0, 0.0], [-100.0, -100.0, 700.0]))
    return out


def _logaddexp_complex(rng, dtype):
    """Complex pairs (broadcasting, a real tensor meeting a complex one) and large real parts;
    imaginary parts in [-1, 1), so torch's result is the principal log of the sum."""
    big = (with_imag(rng, A([100.0, -100.0, 0.0]), dtype),
           with_imag(rng, A([-100.0, -100.0, 700.0]), dtype))
    return [Sample((cuniform(rng, (3, 4), dtype), cuniform(rng, (3, 4), dtype))),
            Sample((cuniform(rng, (2, 1, 4), dtype), uniform(rng, (3, 1), dtype.to_real()))),
            Sample(big)]


def _logaddexp_ref(xp, x, y):
    if not any(np.iscomplexobj(a) for a in (x, y)):
        return xp.logaddexp(x, y)
    m = xp.maximum(xp.real(x), xp.real(y))    # a real shift: no overflow at 700
    return xp.log(xp.exp(x - m) + xp.exp(y - m)) + m


def _xlogy_ref(xp, x, y):
    # torch: 0 where x == 0; d/dx = log(y) there too, except 0 where also y <= 0
    return xp.where((x == 0) & (y <= 0), 0.0, x * xp.log(xp.where((x == 0) & (y <= 0), 1.0, y)))


def _xlogy_samples(rng, dtype):
    out = _binary_samples(uniform, positive)(rng, dtype)
    # (x == y == 0 has d/dy = NaN: tests/ops SUBGRADIENTS)
    out.append(_pair(dtype, [0.0, 0.0, 0.0, -2.0], [0.5, 2.0, -1.0, 3.0], fd=False))
    if dtype is F32:
        out.append(Sample((ints(rng, (3,), 0, 3), ints(rng, (3,), 1, 4)), dtype=F32))
    return out


def _copysign_samples(rng, dtype):
    out = _binary_samples(nonzero)(rng, dtype)
    # signed zeros and NaN in `other` give their sign bit (torch 2.13: [-1, 2, -0, 3])
    out.append(_pair(dtype, [1.0, -2.0, 0.0, 3.0], [-0.0, 0.0, -1.0, math.nan], fd=False))
    if dtype is F32:   # integers give floats (torch)
        out.append(Sample((A([1, -2, 0]), A([-1, 1, -1])), dtype=F32, fd=False))
    return out


def _copysign_ref(xp, x, y):
    # at input == 0 a constant (+-0): torch's gradient 0 there (jax's copysign gives +-1)
    return xp.where(x == 0, xp.copysign(xp.zeros_like(x), y), xp.copysign(x, y))


def _heaviside_ref(xp, x, v):
    return xp.where(x == 0, v, (x > 0).astype(x.dtype))


def _heaviside_samples(rng, dtype):
    # torch 2.13: [0, 0.5, 1, 0] for x = [-1, 0, 2, nan], values = 0.5 (NaN gives 0)
    x = A([-1.0, 0.0, 2.0, math.nan, 0.0, -0.0], dtype.numpy)
    out = [Sample((x, A([0.5], dtype.numpy))), Sample((x, uniform(rng, (6,), dtype))),
           Sample((A([-1.0, 0.0], dtype.numpy), A([[1.0], [2.0]], dtype.numpy)))]
    if dtype is F32:   # integers stay integers (torch: [0, 7, 1])
        out.append(Sample((A([-1, 0, 2]), A([7])), dtype=I64))
    return out


def _heaviside_errors():
    return [ErrorInput((np.ones(3, np.float32), np.ones(1, np.int64)), RuntimeError,
                       ("heaviside", "different dtypes", "f32[3]", "i64[1]")),
            ErrorInput((np.ones((3, 4), np.float32), np.ones((5,), np.float32)), ValueError,
                       ("heaviside:", "f32[3,4]", "f32[5]", "broadcast"))]


def _xlogy_nan():
    # xlogy(0, nan) = nan: NaN in y wins over x == 0
    return OpInfo("xlogy_nan", lambda x, y: tg.isnan(tg.xlogy(x, y)),
                  lambda xp, x, y: xp.isnan(xp.where(x == 0, y * 0.0, x * xp.log(y))),
                  lambda rng, dtype: [Sample((A([0.0, 0.0, 1.0, 1.0], dtype.numpy),
                                              A([NAN, 0.0, 0.0, NAN], dtype.numpy)))],
                  differentiable=False, covers=("xlogy",), out_dtype=BOOL, dtypes=(F64,))


BINARY_MATH_OPS = [
    OpInfo("atan2", tg.atan2, _atan2_ref, _atan2_samples, error_inputs=_broadcast_errors("atan2"),
           notes="both gradients 0 at input == other == 0, as torch",
           point_checks=(
               Subgradient("atan2", "atan2", lambda y, x: tg.atan2(y, x), ([0.0, 1.0], [0.0, 1.0]),
                           ([0.0, 0.5], [0.0, -0.5]), "0 for both at (0, 0)"),
           )),
    OpInfo("fmod", tg.fmod, lambda xp, x, y: xp.fmod(x, y), _mod_samples,
           error_inputs=_mod_errors("fmod"),
           notes="d/dother = -trunc(input / other); integer division by zero raises "
                 "ZeroDivisionError eagerly (jax gives an unspecified value)",
           point_checks=(
               Subgradient("fmod", "fmod", lambda x, y: tg.fmod(x, y),
                           ([3.0, -3.0, 2.0], [2.0, 2.0, 2.0]),
                           ([1.0, 1.0, 1.0], [-1.0, 1.0, -1.0]), "d/dy = -trunc(x / y)"),
           )),
    OpInfo("remainder", tg.remainder, lambda xp, x, y: xp.remainder(x, y),
           _mod_samples, error_inputs=_mod_errors("remainder"),
           notes="d/dother = -floor(input / other)",
           point_checks=(
               Subgradient("remainder", "remainder", lambda x, y: tg.remainder(x, y),
                           ([3.0, -3.0, 2.0], [2.0, 2.0, 2.0]),
                           ([1.0, 1.0, 1.0], [-1.0, 2.0, -1.0]), "d/dy = -floor(x / y)"),
           )),
    OpInfo("logaddexp", tg.logaddexp, _logaddexp_ref, _logaddexp_samples,
           error_inputs=_float_binary_errors("logaddexp"), complex_samples=_logaddexp_complex,
           notes="NaN gradient where both inputs are the same infinity, as torch",
           point_checks=(
               ComplexTorchGrad("logaddexp", tg.logaddexp, 2,
                                [[0.906404206245 - 1.268545160091j,
                                  0.040580377902 + 0.038356291054j,
                                  -0.969697148496 + 0.885477444679j],
                                 [0.093595793755 + 0.768545160091j,
                                  0.259419622098 + 0.161643708946j,
                                  0.269697148496 + 0.114522555321j]]),
               ComplexSecondOrder("logaddexp", lambda z, w: tg.logaddexp(z, z * w)),
               ComplexEdgeGrad("logaddexp_large", lambda z: tg.logaddexp(z[0], z[1]).real,
                               [1000 + 1j, 999 - 1j],
                               [1.021415364229 - 0.403438706142j,
                                -0.021415364229 + 0.403438706142j]),
               ComplexEdgeGrad("logaddexp_large_imag", lambda z: tg.logaddexp(z[0], z[1]).imag,
                               [1000 + 1j, 999 - 1j],
                               [0.403438706142 + 1.021415364229j,
                                -0.403438706142 - 0.021415364229j]),
           )),
    OpInfo("hypot", tg.hypot, lambda xp, x, y: xp.sqrt(x * x + y * y),
           _binary_samples(nonzero), error_inputs=_float_binary_errors("hypot"),
           notes="gradient NaN at input == other == 0 (0/0), as torch",
           point_checks=(
               Subgradient("hypot", "hypot", lambda x, y: tg.hypot(x, y), ([0.0, 3.0], [0.0, 4.0]),
                           ([NAN, 0.6], [NAN, 0.8]), "nan at (0, 0) (undefined)"),
           )),
    OpInfo("xlogy", tg.xlogy, _xlogy_ref, _xlogy_samples, error_inputs=_broadcast_errors("xlogy"),
           notes="0 where input == 0 (NaN if other is NaN); there d/dinput = 0 and "
                 "d/dother = 0, as torch",
           point_checks=(
               Subgradient("xlogy", "xlogy", lambda x, y: tg.xlogy(x, y),
                           ([0.0, 0.0, 1.0], [0.0, 2.0, 2.0]),
                           ([0.0, math.log(2.0), math.log(2.0)], [NAN, 0.0, 0.5]),
                           "d/dx = log(y) but 0 at x = y = 0; d/dy = x / y, nan at (0, 0)"),
           )),
    _xlogy_nan(),
    OpInfo("copysign", tg.copysign, _copysign_ref, _copysign_samples,
           error_inputs=_broadcast_errors("copysign"),
           notes="integer operands give floats; d/dinput = result / input, 0 at input == 0, "
                 "and d/dother = 0, as torch",
           point_checks=(
               # torch 2.13: grads [-1, 1, 0, 1] and [0, 0, 0, 0]
               Subgradient("copysign", "copysign", lambda x, y: tg.copysign(x, y),
                           ([1.0, -2.0, 0.0, 3.0], [-1.0, -1.0, -1.0, 2.0]),
                           ([-1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0]),
                           "0 at input == 0 (torch masks result / input there)"),
           )),
    OpInfo("copysign_", lambda x, y: (x * 1.0).copysign_(y), lambda xp, x, y: xp.copysign(x, y),
           lambda rng, dtype: [Sample((nonzero(rng, (3, 4), dtype), nonzero(rng, (4,), dtype))),
                               Sample((nonzero(rng, (3,), dtype), -2.5))],
           covers=("copysign",)),
    # torch has no derivative for heaviside (a backward through it raises:
    # tests/ops/test_copysign_heaviside.py), so the samples run detached
    OpInfo("heaviside", lambda x, v: tg.heaviside(x.detach(), v.detach()), _heaviside_ref,
           _heaviside_samples, error_inputs=_heaviside_errors, differentiable=False),
]


# ---- clamp --------------------------------------------------------------------------------------
def _clamp_ref(xp, x, min=None, max=None):
    out = x
    if min is not None:
        out = xp.where(x < min, min, out)
    if max is not None:
        # torch: where min == max and x < min no input gets a gradient; the value is
        # max (= min) with its gradient cut by round() (the samples use multiples of 0.5)
        out = xp.where(out > max, max, out)
        if min is not None:
            stuck = (x < min) & (xp.asarray(min) == max)
            out = xp.where(stuck, xp.round(max * 2.0) / 2.0, out)
    return out


def _clamp_samples(rng, dtype):
    x = grid(rng, (3, 4), dtype, 0.25)
    lo = grid(rng, (3, 4), dtype)
    hi = lo + grid(rng, (3, 4), dtype) ** 2 + 0.5       # min < max; crossed bounds below
    ties = A([-1.0, 1.0, 0.0, 2.0, -2.0, 0.5, 0.0], dtype.numpy)
    t_lo = A([-1.0] * 5 + [1.0, 0.5], dtype.numpy)
    t_hi = A([1.0] * 5 + [0.0, 0.5], dtype.numpy)
    out = [Sample((uniform(rng, (3, 4), dtype), -0.5, 1.0)),
           Sample((uniform(rng, (3, 4), dtype),), {"min": 0.25}),
           Sample((uniform(rng, (3, 4), dtype),), {"max": -0.25}),
           Sample((x, lo, hi)),                                 # tensor bounds
           Sample((x, uniform(rng, (4,), dtype, -2, 0), uniform(rng, (3, 1), dtype, 0, 2))),
           Sample((x, -1.0, uniform(rng, (4,), dtype, 0, 2))),
           Sample((x, lo)),                                     # min only
           Sample((ties, -1.0, 1.0), fd=False),                 # x at a bound gets the gradient
           Sample((ties, t_lo, t_hi), fd=False),                # min > max and min == max
           Sample((uniform(rng, (3,), dtype), 1.0, -1.0))]      # min > max: all max
    if dtype is F32:
        out += [Sample((ints(rng, (3, 4)), 1.5, None), dtype=F32),     # int with a float bound
                Sample((ints(rng, (3, 4)), -1, 2), dtype=I64),
                Sample((rng.random((3,)) > 0.5,), {"min": 0}, dtype=I64),
                Sample((uniform(rng, (3,), F32), uniform(rng, (3,), F64), None), dtype=F64)]
    return out


def _clamp_errors(name):
    x = np.ones((3, 4), np.float32)
    return lambda: [ErrorInput((x,), ValueError, (name, "'min'", "'max'")),
                    ErrorInput((x, np.zeros((5,), np.float32), 1.0), ValueError,
                               ("clamp", "broadcast", "f32[3,4]", "f32[5]")),
                    ErrorInput(("abc", 0.0), TypeError, (name, "str"))]


def _clip_errors():
    return [ErrorInput((np.ones((3,), np.float32),), ValueError, ("clip", "'min'", "'max'"))]


CLAMP_NOTE = ("input gets the gradient on the closed [min, max] (so at a bound too); a tensor "
              "bound where input is strictly beyond it; min > max: the result is max and max "
              "gets it; min == max and input < min: no input gets it (all as torch)")

CLAMP_OPS = [
    OpInfo("clamp", tg.clamp, _clamp_ref, _clamp_samples,
           error_inputs=_clamp_errors("clamp"), covers=("clamp", "clamp_range"),
           executor_samples=(0, 3), notes=CLAMP_NOTE,
           point_checks=(
               Subgradient("clamp", "clamp", lambda x: tg.clamp(x, -1.0, 1.0),
                           ([-2.0, -1.0, 0.0, 1.0, 2.0],), ([0.0, 1.0, 1.0, 1.0, 0.0],),
                           "gradient 1 at either bound (min <= x <= max)"),
               Subgradient("clamp_tensor_bounds", "clamp", lambda x, lo, hi: tg.clamp(x, lo, hi),
                           ([0.0, 1.0, 5.0], [0.0, 0.0, 0.0], [2.0, 1.0, 1.0]),
                           ([1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
                           "tensor bounds: a tie with a bound gives the gradient to x"),
               Subgradient("clamp_crossed_bounds", "clamp", lambda x, lo, hi: tg.clamp(x, lo, hi),
                           ([0.0, 5.0], [2.0, 2.0], [1.0, 1.0]),
                           ([0.0, 0.0], [0.0, 0.0], [1.0, 1.0]),
                           "min > max: the result is max, its gradient too"),
           )),
    OpInfo("clip", lambda x, *a, **k: x.clip(*a, **k), _clamp_ref,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype), -0.5, 1.0)),
                               Sample((uniform(rng, (3,), dtype),), {"max": 0.5})],
           error_inputs=_clip_errors, notes="alias of clamp"),
    OpInfo("clamp_min", tg.clamp_min, lambda xp, x, lo: _clamp_ref(xp, x, min=lo),
           lambda rng, dtype: [Sample((grid(rng, (3, 4), dtype, 0.25), grid(rng, (4,), dtype))),
                               Sample((uniform(rng, (3, 4), dtype), 0.5)),
                               Sample((A([0.0, -1.0, 1.0], dtype.numpy), A([0.0] * 3, dtype.numpy)),
                                      fd=False)],
           error_inputs=_broadcast_errors("clamp_min"), notes=CLAMP_NOTE),
    OpInfo("clamp_max", lambda x, hi: x.clamp_max(hi), lambda xp, x, hi: _clamp_ref(xp, x, max=hi),
           lambda rng, dtype: [Sample((grid(rng, (3, 4), dtype, 0.25), grid(rng, (4,), dtype))),
                               Sample((uniform(rng, (3, 4), dtype), -0.5)),
                               Sample((A([0.0, -1.0, 1.0], dtype.numpy), A([0.0] * 3, dtype.numpy)),
                                      fd=False)],
           error_inputs=_broadcast_errors("clamp_max"), notes=CLAMP_NOTE),
]


# ---- lerp, addcmul, addcdiv ---------------------------------------------------------------------
def _lerp_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    out = [Sample((u(3, 4), u(3, 4), 0.3)), Sample((u(3, 4), u(3, 4), u(3, 4))),
           Sample((u(3, 1), u(4), u(2, 1, 1))), Sample((u(3,), u(3,), 1))]
    if dtype is F32:   # a 0-d weight of another dtype is allowed, as torch
        out.append(Sample((u(3,), u(3,), uniform(rng, (), F64)), dtype=F32))
    return out


def _lerp_complex(rng, dtype):
    """A real and a tensor weight, a complex Python weight, and a real 0-d weight (torch lets
    a 0-d weight differ in dtype)."""
    cu = lambda *s: cuniform(rng, s, dtype)  # noqa: E731
    return complexify(_lerp_samples, 2)(rng, dtype) + [
        Sample((cu(3,), cu(3,), 0.25 - 0.5j)),
        Sample((cu(3,), cu(3,), uniform(rng, (), dtype.to_real())))]


def _addc_complex(div):
    def samples(rng, dtype):
        cu = lambda *s: cuniform(rng, s, dtype)  # noqa: E731
        d = (lambda *s: cnonzero(rng, s, dtype)) if div else cu
        out = complexify(_addc_samples(div), 3)(rng, dtype)
        out.append(Sample((cu(3, 4), cu(4), d(3, 1)), {"value": 0.5 - 1j}))
        if dtype is C64:   # a real input meeting complex tensors
            out.append(Sample((uniform(rng, (3,), F32), cu(3), d(3))))
        return out
    return samples


def _lerp_errors():
    f, d = np.ones((3,), np.float32), np.ones((3,), np.float64)
    return [ErrorInput((np.ones((3,), np.int64), np.ones((3,), np.int64), 0.5), TypeError,
                       ("lerp", "floating-point", "i64[3]")),
            ErrorInput((f, d, 0.5), TypeError, ("lerp", "float32", "`end`", "float64")),
            ErrorInput((f, f, d), TypeError, ("lerp", "`weight`", "f64[3]")),
            ErrorInput((f, np.ones((), np.float64), 0.5), TypeError, ("lerp", "`end`", "f64[]")),
            ErrorInput((f, f, 0.5j), TypeError, ("lerp", "complex weight", "f32[3]")),
            ErrorInput((f, np.ones((4,), np.float32), 0.5), ValueError, ("broadcast",))]


def _addc_ref(div):
    def ref(xp, x, t1, t2, value=1):
        if all(a.dtype.kind in "iub" for a in (x, t1, t2)):
            value = int(value)   # torch casts value to the integer result dtype
        return x + value * (t1 / t2 if div else t1 * t2)
    return ref


def _addc_samples(div):
    def samples(rng, dtype):
        u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
        d = (lambda *s: nonzero(rng, s, dtype)) if div else u
        out = [Sample((u(3, 4), u(3, 4), d(3, 4))),
               Sample((u(3, 4), u(4), d(3, 1)), {"value": 0.5}),
               Sample((u(), u(2, 3), d(3)), {"value": -2})]
        if dtype is F32:
            out.append(Sample((u(3,), uniform(rng, (3,), F64), d(3)), dtype=F64))
            out.append(Sample((ints(rng, (3,)), u(3), ints(rng, (3,), 1, 4)), dtype=F32))
            if not div:
                out.append(Sample((ints(rng, (3,)), ints(rng, (3,)), ints(rng, (3,))),
                                  {"value": 2.5}, dtype=I64))
        return out
    return samples


def _addcdiv_errors():
    i, f = np.ones((3,), np.int64), np.ones((3,), np.float32)
    return [ErrorInput((f, i, i), TypeError, ("addcdiv", "integer division", "i64[3]")),
            ErrorInput((f, f, f), TypeError, ("addcdiv", "value=1j", "float32"),
                       {"value": 1j})]


POINTWISE_OPS = [
    OpInfo("lerp", tg.lerp, lambda xp, x, y, w: x + w * (y - x), _lerp_samples,
           error_inputs=_lerp_errors, complex_samples=_lerp_complex,
           point_checks=(
               ComplexTorchGrad("lerp", lambda a, b: tg.lerp(a, b, a * b), 2,
                                [[-0.95 + 1.275j, 1.303 + 0.444j, -4.439 - 3.152j],
                                 [7 + 1j, -0.394 - 0.488j, 3.454 + 4.772j]]),
           )),
    OpInfo("addcmul", tg.addcmul, _addc_ref(False),
           _addc_samples(False), complex_samples=_addc_complex(False), error_inputs=lambda: [
               ErrorInput(("abc", np.ones(3), np.ones(3)), TypeError,
                          ("addcmul()", "'input'", "str"))],
           point_checks=(
               ComplexTorchGrad("addcmul", lambda a, b: tg.addcmul(a, a, b, value=0.5 - 1j), 2,
                                [[1 + 0.125j, 0.44 + 0.705j, 0.2 + 2.375j],
                                 [2.5 - 1.25j, 0.145 - 0.185j, -0.725 - 1.625j]]),
           )),
    OpInfo("addcdiv", lambda *a, **k: a[0].addcdiv(*a[1:], **k), _addc_ref(True),
           _addc_samples(True), complex_samples=_addc_complex(True),
           error_inputs=_addcdiv_errors,
           point_checks=(
               ComplexTorchGrad("addcdiv", lambda a, b: tg.addcdiv(a, a, b, value=2.0), 2,
                                [[1.8 - 4.9j, 0.607692307692 + 0.661538461538j,
                                  -1.168965517241 - 0.972413793103j],
                                 [19.2 - 5.6j, -0.084660901229 + 0.233955393719j,
                                  -0.161236623068 - 2.189298454221j]]),
           )),
]


# ---- logical and bitwise (no gradient) ----------------------------------------------------------
def _logical_complex(rng, dtype):
    """Complex operands are true unless both parts are 0 (torch)."""
    x, y = cuniform(rng, (3, 4), dtype), cuniform(rng, (4,), dtype)
    x[0, :3] = 0.0, 1j, -0.5
    y[:2] = 0.0, 2j
    return [Sample((x, y)), Sample((x, rng.random((3, 4)) > 0.5))]


def _logical_samples(rng, dtype):
    return _bools(rng, dtype) + [Sample((ints(rng, (3, 4), -1, 2), grid(rng, (4,), F32))),
                                 Sample((grid(rng, (3,), F64), ints(rng, (3,), -1, 2)))]


def _bitwise_samples(rng, dtype):
    i = lambda *s: ints(rng, s, -8, 9)  # noqa: E731
    b = lambda *s: rng.random(s) > 0.5  # noqa: E731
    return [Sample((i(3, 4), i(4)), dtype=I64), Sample((b(3, 4), b(3, 4)), dtype=BOOL),
            Sample((i(3,), 5), dtype=I64), Sample((7, i(3,)), dtype=I64),
            Sample((b(3,), i(3,)), dtype=I64),
            Sample((A([1, -2], np.int8), A([3, 200], np.uint8)), dtype=tg.int16)]


def _bitwise_errors(name):
    f = np.ones((3,), np.float32)
    return lambda: [ErrorInput((f, np.ones((3,), np.int64)), TypeError,
                               (name, "integer and bool", "f32[3]")),
                    ErrorInput((np.ones((3,), np.int64), 2.5), TypeError, (name, "f32[3]"))]


def _logical(name, np_name):
    return OpInfo(name, getattr(tg, name), lambda xp, x, y: getattr(xp, np_name)(x, y),
                  _logical_samples, differentiable=False, out_dtype=BOOL, dtypes=(F32,),
                  complex_samples=_logical_complex)


def _bitwise(name, operator):
    return OpInfo(name, operator, lambda xp, x, y: getattr(xp, name)(x, y), _bitwise_samples,
                  differentiable=False, dtypes=(F32,), error_inputs=_bitwise_errors(name))


def _shift_ref(left):
    """torch's shifts on Python ints, element by element (out-of-range amounts: 0 for <<,
    the sign fill for >>; << keeps the low bits): independent of the kernel's array code."""
    def one(a, s, bits, signed):
        a, s = int(a), int(s)
        if not 0 <= s < bits:
            return -1 if (not left and a < 0) else 0
        r = (a << s) % (1 << bits) if left else a >> s
        return r - (1 << bits) if signed and r >= 1 << (bits - 1) else r

    def ref(xp, x, y):
        x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
        x = x.astype(np.result_type(x, y))   # bool << 1 computes in int64
        bits, signed = 8 * x.dtype.itemsize, x.dtype.kind == "i"
        return np.array([one(a, b, bits, signed) for a, b in zip(x.ravel(), y.ravel())],
                        x.dtype).reshape(x.shape)
    return ref


def _shift_samples(rng, dtype):
    return [Sample((ints(rng, (3, 4), -128, 128, np.int8), ints(rng, (4,), -2, 10, np.int8)),
                   dtype=tg.int8),
            Sample((ints(rng, (5,), 0, 256, np.uint8), ints(rng, (5,), 0, 10, np.uint8)),
                   dtype=tg.uint8),
            Sample((ints(rng, (6,), -2 ** 40, 2 ** 40), ints(rng, (6,), 0, 70)), dtype=I64),
            Sample((ints(rng, (3,), -9, 9), 3), dtype=I64),
            Sample((rng.random((3,)) > 0.5, 1), dtype=I64)]


def _shift_errors(name):
    return lambda: [ErrorInput((np.ones((3,), np.float32), 1), TypeError, (name, "f32[3]"))]


SHIFT_OPS = [
    OpInfo(name, op, _shift_ref(left), _shift_samples, differentiable=False, dtypes=(F32,),
           error_inputs=_shift_errors(name))
    for name, op, left in (("bitwise_left_shift", lambda x, y: x << y, True),
                           ("bitwise_right_shift", lambda x, y: x >> y, False))]


def _invert_samples(rng, dtype):
    return [Sample((ints(rng, (3, 4), -8, 9),), dtype=I64), Sample((rng.random((4,)) > 0.5,),
                                                                   dtype=BOOL),
            Sample((A([0, 7, 255], np.uint8),), dtype=tg.uint8)]


LOGICAL_OPS = [
    _logical("logical_or", "logical_or"),
    _logical("logical_xor", "logical_xor"),
    OpInfo("logical_and_mixed", tg.logical_and, lambda xp, x, y: xp.logical_and(x, y),
           _logical_samples, differentiable=False, out_dtype=BOOL, dtypes=(F32,),
           covers=("logical_and",), complex_samples=_logical_complex),
    OpInfo("logical_not_mixed", lambda x: x.logical_not(), lambda xp, x: xp.logical_not(x),
           lambda rng, dtype: [Sample((ints(rng, (3, 4), -1, 2),)),
                               Sample((grid(rng, (4,), F32),))],
           differentiable=False, out_dtype=BOOL, dtypes=(F32,), covers=("logical_not",),
           complex_samples=lambda rng, dtype: [Sample(_logical_complex(rng, dtype)[0].args[:1])]),
    _bitwise("bitwise_and", lambda x, y: x & y),
    _bitwise("bitwise_or", lambda x, y: x | y),
    _bitwise("bitwise_xor", tg.bitwise_xor),
    OpInfo("bitwise_xor_operator", lambda x, y: x ^ y, lambda xp, x, y: xp.bitwise_xor(x, y),
           _bitwise_samples, differentiable=False, dtypes=(F32,), covers=("bitwise_xor",)),
    OpInfo("bitwise_not", lambda x: ~x, lambda xp, x: xp.invert(x), _invert_samples,
           differentiable=False, dtypes=(F32,),
           error_inputs=lambda: [ErrorInput((np.ones((3,), np.float32),), TypeError,
                                            ("bitwise_not", "integer and bool", "f32[3]"))]),
]


# ---- dtype casts --------------------------------------------------------------------------------
CASTS = {"float": F32, "double": F64, "half": tg.float16, "bfloat16": tg.bfloat16,
         "long": I64, "int": tg.int32, "bool": BOOL}


def _cast_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    # a cast to half precision loses digits, so only float64 results take finite differences
    out = [Sample((x, "half"), dtype=tg.float16, fd=False),
           Sample((x, "bfloat16"), dtype=tg.bfloat16, fd=False)]
    out += [Sample((x, how), dtype=to) for how, to in CASTS.items()
            if how not in ("half", "bfloat16")]
    out += [Sample((x, "to", "cpu", F64), dtype=F64),                  # to(device, dtype)
            Sample((x, "to", ints(rng, (2,))), dtype=I64),             # to(other): other's dtype
            Sample((uniform(rng, (), dtype), "to", "float16"), dtype=tg.float16, fd=False)]
    if dtype is F32:
        out += [Sample((ints(rng, (3,)), "float"), dtype=F32),
                Sample((rng.random((3,)) > 0.5, "long"), dtype=I64),
                Sample((ints(rng, (3,)), "bool"), dtype=BOOL)]
    return out


def _cast_ref(xp, x, how, *rest):
    if how != "to":
        return x.astype(CASTS[how].numpy)
    target = rest[-1]
    dt = target.dtype if isinstance(target, np.ndarray) else tg.ir.types.as_dtype(target).numpy
    return x.astype(dt)


def _cast_errors():
    x = np.ones((3,), np.float32)
    return [ErrorInput((x, "to", "cuda"), NotImplementedError, ("to", "'cuda'")),
            ErrorInput((x, "to", "foo"), TypeError, ("dtype", "'foo'"))]


CASTS_OP = OpInfo("casts", lambda x, how, *rest: getattr(x, how)(*rest), _cast_ref, _cast_samples,
                  error_inputs=_cast_errors, covers=("convert",),
                  skips={"low_precision": "each sample names its result dtype"},
                  notes="float <-> float casts are differentiable; a cast to or from an integer "
                        "or bool dtype ends the graph, as torch")


OPS: list[OpInfo] = (TRIG_OPS + ROUNDING_OPS + SPECIAL_OPS + ACTIVATION_OPS + NAN_OPS
                     + BINARY_MATH_OPS + CLAMP_OPS + POINTWISE_OPS + LOGICAL_OPS + SHIFT_OPS
                     + [CASTS_OP])
