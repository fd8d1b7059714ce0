"""Elementwise unary ops. VJP rules emit IR through the builder `b`."""
from __future__ import annotations

import math
import warnings

from .. import attr_kinds as K
from .. import types as T
from ..builder import with_location
from ..errors import DTypeError
from ..registry import (AUTOCAST_FP32, CHEAP, COMPLEX, ELEMENTWISE, INTERNAL, LINEAR, NONDIFF,
                        TO_FLOAT, defcomposite, defop)
from ._common import div_conj, mul_conj, require_float, same_as_first, zero_slope_dep
from ._rewrites import involution, same_type_identity
from . import _select

EW = ELEMENTWISE | CHEAP
CEW = EW | COMPLEX   # elementwise ops that also take complex64/complex128
LN2, LN10 = math.log(2.0), math.log(10.0)


def _no_bool(name):
    def infer(types, **_):
        if types[0].dtype is T.bool_:
            raise DTypeError(f"{name}: not supported for bool tensors, got {types[0]}")
        return types[0]
    return infer


def float_only(name):
    """Infer for ops torch defines on floating-point tensors only (no int -> float promotion)."""
    def infer(types, **_):
        require_float(name, types[0])
        return types[0]
    return infer


def bool_out(types, **_):
    return T.TensorType(types[0].shape, T.bool_)


def scalar(x, v):
    """The number `v` as a scalar of x's dtype (NumPy lifts bfloat16 with a Python float)."""
    return x.dtype.type(v)


def zero_grad(b, ct, *_, **__):
    """VJP of a piecewise-constant op (floor, round ...): zeros, as torch."""
    return [b.full(ct.shape, 0.0, ct.dtype)]


def check_operand(ops, name: str, x, *, arg: str = "input", floating: bool = False):
    """A decomposition's tensor operand checked as `Frontend.call` checks a primitive's."""
    if not ops.is_operand(x):
        raise with_location(TypeError(f"{name}(): argument '{arg}' must be a tensor, got "
                                      f"{type(x).__name__}"), ops.location())
    if floating and not x.dtype.is_floating_point:
        raise DTypeError(f"{name}: expected a floating-point tensor, got {ops.type_of(x)}"
                         ).add_location(ops.location())
    return x


def _unary(name, kernel, vjp, infer=same_as_first, flags=CEW | TO_FLOAT, attrs=(), canon=None,
           **kw):
    return defop(name, "input", attrs=attrs, canon=canon, infer=infer, kernel=kernel, vjp=vjp,
                 flags=flags, ref=kw.pop("ref", f"torch.{name}"), **kw)


defop("neg", "input", infer=_no_bool("neg"), flags=CEW, ref="torch.neg",
      kernel=lambda xp, x: xp.negative(x),
      vjp=lambda b, ct, x, out: [b.neg(ct)], jvp=LINEAR, simplify=involution)

# Complex inputs: each rule multiplies by the conjugate derivative (mul_conj / div_conj),
# torch's convention; for real dtypes those are plain mul / div.
defop("exp", "input", infer=same_as_first, flags=CEW | TO_FLOAT, ref="torch.exp",
      kernel=lambda xp, x: xp.exp(x),
      vjp=lambda b, ct, x, out: [mul_conj(b, ct, out)], jvp=lambda b, t, x, out: b.mul(t, out),
      autocast={"cuda": AUTOCAST_FP32})

defop("log", "input", infer=same_as_first, flags=CEW | TO_FLOAT, ref="torch.log",
      kernel=lambda xp, x: xp.log(x),
      vjp=lambda b, ct, x, out: [div_conj(b, ct, x)], jvp=lambda b, t, x, out: b.div(t, x),
      autocast={"cuda": AUTOCAST_FP32})

defop("sqrt", "input", infer=same_as_first, flags=CEW | TO_FLOAT, ref="torch.sqrt",
      kernel=lambda xp, x: xp.sqrt(x),
      vjp=lambda b, ct, x, out: [div_conj(b, ct, b.mul(out, 2.0))],
      jvp=lambda b, t, x, out: b.div(t, b.mul(out, 2.0)))

defop("tanh", "input", infer=same_as_first, flags=CEW | TO_FLOAT, ref="torch.tanh",
      kernel=lambda xp, x: xp.tanh(x),
      vjp=lambda b, ct, x, out: [mul_conj(b, ct, b.rsub(b.mul(out, out), 1.0))],
      jvp=lambda b, t, x, out: b.mul(t, b.rsub(b.mul(out, out), 1.0)))

# 0.5 * (tanh(x/2) + 1) is exact and never overflows, unlike 1 / (1 + exp(-x)).
defop("sigmoid", "input", infer=same_as_first, flags=CEW | TO_FLOAT, ref="torch.sigmoid",
      kernel=lambda xp, x: (xp.tanh(x * x.dtype.type(0.5)) + x.dtype.type(1)) * x.dtype.type(0.5),
      vjp=lambda b, ct, x, out: [mul_conj(b, ct, b.mul(out, b.rsub(out, 1.0)))],
      jvp=lambda b, t, x, out: b.mul(t, b.mul(out, b.rsub(out, 1.0))))

# Gradient 0 where out <= 0 (at x == 0 too), as torch.relu's threshold_backward: a NaN
# passes the gradient through.  The 0 is `out` itself (exactly 0 there), so that under
# create_graph the gradient is a function of `out` with derivative 0, as torch's
# (ThresholdBackwardBackward0), at no cost
defop("relu", "input", infer=_no_bool("relu"), flags=EW, ref="torch.relu",
      kernel=lambda xp, x: xp.maximum(x, x.dtype.type(0)),
      vjp=lambda b, ct, x, out: [b.where(b.le(out, 0), out, ct)],
      jvp=lambda b, t, x, out: b.where(b.le(out, 0), 0.0, t))

def sign_kernel(xp, x):
    """torch.sign: ``(x > 0) - (x < 0)``, so NaN gives 0 and -0.0 gives +0.0 (NumPy's and
    jax's sign give NaN, and jax keeps -0.0: the executors disagreed); bool stays bool."""
    if x.dtype.kind == "b":
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


# gradient +0.0 everywhere, a NaN or negative cotangent included (torch: zeros_like(grad))
defop("sign", "input", infer=same_as_first, flags=EW, ref="torch.sign",
      kernel=sign_kernel, vjp=zero_grad)

def _abs_infer(types, **_):
    t = types[0]   # |z| of a complex tensor is real (complex64 -> float32)
    return T.TensorType(t.shape, t.dtype.to_real())


# d|x|/dx = sign(x), 0 at 0 as torch.abs; complex: g -> g * z / |z| (sgn), 0 at 0
defop("abs", "input", infer=_abs_infer, flags=CEW, ref="torch.abs",
      kernel=lambda xp, x: xp.abs(x),
      vjp=lambda b, ct, x, out: [b.mul(ct, b.sgn(x) if x.dtype.is_complex else b.sign(x))])


# ---- trigonometric and hyperbolic (int/bool promote to float32) ---------------------------------
def _rsqrt_of(b, y):
    return b.reciprocal(b.sqrt(y))


_unary("sin", lambda xp, x: xp.sin(x), lambda b, ct, x, out: [mul_conj(b, ct, b.cos(x))],
       jvp=lambda b, t, x, out: b.mul(t, b.cos(x)))
_unary("cos", lambda xp, x: xp.cos(x), lambda b, ct, x, out: [b.neg(mul_conj(b, ct, b.sin(x)))],
       jvp=lambda b, t, x, out: b.neg(b.mul(t, b.sin(x))))
_unary("tan", lambda xp, x: xp.tan(x),
       lambda b, ct, x, out: [mul_conj(b, ct, b.add(b.mul(out, out), 1.0))],
       autocast={"cuda": AUTOCAST_FP32})
# inf at |x| == 1, as torch (1 / sqrt(0))
_unary("asin", lambda xp, x: xp.arcsin(x),
       lambda b, ct, x, out: [mul_conj(b, ct, _rsqrt_of(b, b.rsub(b.mul(x, x), 1.0)))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("acos", lambda xp, x: xp.arccos(x),
       lambda b, ct, x, out: [b.neg(mul_conj(b, ct, _rsqrt_of(b, b.rsub(b.mul(x, x), 1.0))))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("atan", lambda xp, x: xp.arctan(x),
       lambda b, ct, x, out: [div_conj(b, ct, b.add(b.mul(x, x), 1.0))])
def _sinc_vjp(b, ct, x, out):
    # d/dx sinc(x) = (cos(pi x) - sinc(x)) / x loses every digit to cancellation near 0, so
    # there the slope is its Maclaurin series -pi^2 x/3 + pi^4 x^3/30 - pi^6 x^5/840 (next
    # term below 1e-7 of it for |x| < 0.1, float32's cut; float64 cancels less and is cut at
    # 1e-3).  The series is 0 at 0 (torch's value) with the exact second derivative -pi^2/3
    # there, where torch 2.13 gives NaN; `safe` keeps the masked lanes of the formula finite
    small = b.lt(b.abs(x), 1e-3 if x.dtype is T.float64 else 0.1)
    safe = b.where(small, 1.0, x)
    formula = b.div(b.sub(b.cos(b.mul(safe, math.pi)), out), safe)
    x2 = b.mul(x, x)
    series = b.mul(x, b.add(b.mul(x2, b.sub(math.pi ** 4 / 30, b.mul(x2, math.pi ** 6 / 840))),
                            -math.pi ** 2 / 3))
    return [b.mul(ct, b.where(small, series, formula))]


# the docs' worked example of adding an op (docs/architecture.md, "Declaring an op")
_unary("sinc", lambda xp, x: xp.sinc(x), _sinc_vjp, flags=EW | TO_FLOAT,
       ref="torch.sinc (sin(pi x) / (pi x), 1 at 0; real dtypes only)")

_unary("sinh", lambda xp, x: xp.sinh(x), lambda b, ct, x, out: [mul_conj(b, ct, b.cosh(x))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("cosh", lambda xp, x: xp.cosh(x), lambda b, ct, x, out: [mul_conj(b, ct, b.sinh(x))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("asinh", lambda xp, x: xp.arcsinh(x),
       lambda b, ct, x, out: [mul_conj(b, ct, _rsqrt_of(b, b.add(b.mul(x, x), 1.0)))])


def _acosh_vjp(b, ct, x, out):
    # complex: 1 / (sqrt(z - 1) sqrt(z + 1)), the derivative on acosh's principal branch, as
    # torch (1 / sqrt(z^2 - 1) has the wrong sign where Re z < 0)
    if x.dtype.is_complex:
        d = b.mul(_rsqrt_of(b, b.sub(x, 1.0)), _rsqrt_of(b, b.add(x, 1.0)))
        return [mul_conj(b, ct, d)]
    return [b.mul(ct, _rsqrt_of(b, b.sub(b.mul(x, x), 1.0)))]


_unary("acosh", lambda xp, x: xp.arccosh(x), _acosh_vjp)
_unary("atanh", lambda xp, x: xp.arctanh(x),
       lambda b, ct, x, out: [div_conj(b, ct, b.rsub(b.mul(x, x), 1.0))])

# ---- exponentials, logarithms, powers -----------------------------------------------------------
_unary("exp2", lambda xp, x: xp.exp2(x),
       lambda b, ct, x, out: [mul_conj(b, ct, b.mul(out, LN2))])
_unary("expm1", lambda xp, x: xp.expm1(x),
       lambda b, ct, x, out: [mul_conj(b, ct, b.add(out, 1.0))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("log2", lambda xp, x: xp.log2(x), lambda b, ct, x, out: [div_conj(b, ct, b.mul(x, LN2))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("log10", lambda xp, x: xp.log10(x),
       lambda b, ct, x, out: [div_conj(b, ct, b.mul(x, LN10))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("log1p", lambda xp, x: xp.log1p(x), lambda b, ct, x, out: [div_conj(b, ct, b.add(x, 1.0))],
       autocast={"cuda": AUTOCAST_FP32})
_unary("reciprocal", lambda xp, x: xp.reciprocal(x),
       lambda b, ct, x, out: [b.neg(mul_conj(b, ct, b.mul(out, out)))],
       autocast={"cuda": AUTOCAST_FP32})

defcomposite("rsqrt", "input: Tensor",
             lambda ops, x: ops.reciprocal(ops.sqrt(check_operand(ops, "rsqrt", x))),
             ref="torch.rsqrt", flags=COMPLEX,
             autocast={"cuda": AUTOCAST_FP32}, node_inputs=("input",))


def _square(ops, x):
    check_operand(ops, "square", x)
    if x.dtype is T.bool_:      # torch.square(bool) is int64
        x = ops.convert(x, T.int64)
    return ops.mul(x, x)


defcomposite("square", "input: Tensor", _square, ref="torch.square", flags=COMPLEX,
             node_name="PowBackward0", node_inputs=("input",))


# ---- rounding: gradient 0 everywhere; integer tensors come back unchanged -----------------------
def _rounding(name, fn):
    def kernel(xp, x):
        return x.copy() if x.dtype.kind in "iu" else fn(xp, x)
    _unary(name, kernel, zero_grad, infer=_no_bool(name), flags=EW)


_rounding("floor", lambda xp, x: xp.floor(x))
_rounding("ceil", lambda xp, x: xp.ceil(x))
_rounding("trunc", lambda xp, x: xp.trunc(x))


def _round_infer(types, *, decimals):
    t = _no_bool("round")(types)
    if decimals and not t.dtype.is_floating_point:
        raise DTypeError(f"round: decimals={decimals} needs a floating-point tensor, got {t}")
    return t


def _round_canon(types, *, decimals):
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"round: decimals must be an int, got {type(decimals).__name__}")
    return {"decimals": decimals}


# half to even, as torch; decimals scales by 10**decimals first (as torch and NumPy)
_unary("round", lambda xp, x, *, decimals: x.copy() if x.dtype.kind in "iu"
       else xp.round(x, decimals), zero_grad, infer=_round_infer, flags=EW,
       attrs=(("decimals", 0, K.INT),), canon=_round_canon)


def _frac(ops, x):
    check_operand(ops, "frac", x, floating=True)
    return ops.sub(x, ops.trunc(x))


defcomposite("frac", "input: Tensor", _frac, ref="torch.frac", node_inputs=("input",))


# ---- NaN/Inf handling ---------------------------------------------------------------------------
def _finfo(dtype):
    import ml_dtypes   # np.finfo does not know bfloat16
    return ml_dtypes.finfo(dtype)


def _nan_to_num_kernel(xp, x, *, nan, posinf, neginf):
    if x.dtype.kind == "c":   # each part on its own, as torch
        re, im = (_nan_to_num_kernel(xp, part, nan=nan, posinf=posinf, neginf=neginf)
                  for part in (xp.real(x), xp.imag(x)))
        return re + im * scalar(x, 1j)   # (0 + 1j) * im is exact: no inf * 0
    if x.dtype.kind not in "f" and x.dtype.name != "bfloat16":
        return x.copy()
    info = _finfo(x.dtype)
    hi = info.max if posinf is None else scalar(x, posinf)
    lo = info.min if neginf is None else scalar(x, neginf)
    inf = scalar(x, math.inf)
    out = xp.where(xp.isnan(x), scalar(x, nan), x)
    return xp.where(x == inf, hi, xp.where(x == -inf, lo, out))


def _nan_to_num_canon(types, *, nan, posinf, neginf):
    def as_float(name, v):
        if isinstance(v, complex):   # torch: "argument 'nan' must be float, not complex"
            raise TypeError(f"nan_to_num(): argument {name!r} must be a real number, got {v!r}")
        return None if v is None else float(v)
    return {"nan": as_float("nan", nan), "posinf": as_float("posinf", posinf),
            "neginf": as_float("neginf", neginf)}


def _nan_to_num_vjp(b, ct, x, out, **_):
    # gradient passes where x is finite, 0 at NaN/Inf (torch); torch records no gradient
    # for a complex result ("nan_to_num does not support automatic differentiation for
    # outputs with complex dtype"): here the same error comes when a backward reaches it
    if x.dtype.is_complex:
        raise with_location(RuntimeError(
            f"nan_to_num: does not support automatic differentiation for outputs with complex "
            f"dtype (got {x.type}), as torch; apply it under tg.no_grad() or to .detach()ed "
            "tensors"), b.location())
    return [b.where(b.isfinite(x), ct, 0.0)]


_unary("nan_to_num", _nan_to_num_kernel, flags=EW | COMPLEX, vjp=_nan_to_num_vjp,
       attrs=(("nan", 0.0, K.FLOAT), ("posinf", None, K.FLOAT_OPT), ("neginf", None, K.FLOAT_OPT)), canon=_nan_to_num_canon)


def _classify(name, fn, int_value):
    def kernel(xp, x):
        if x.dtype.kind in "biu":
            return xp.full(x.shape, int_value, dtype=bool)
        return fn(xp, x)
    _unary(name, kernel, NONDIFF, infer=bool_out, flags=CEW)


_classify("isnan", lambda xp, x: xp.isnan(x), False)
_classify("isinf", lambda xp, x: xp.isinf(x), False)
_classify("isfinite", lambda xp, x: xp.isfinite(x), True)


# ---- activations (tg.nn.functional) -------------------------------------------------------------
def _float_canon(*names):
    return lambda types, **attrs: {k: float(v) if k in names else v for k, v in attrs.items()}


def _softplus_kernel(xp, x, *, beta, threshold):
    bx = x * scalar(x, beta)
    # log(1 + exp(bx)) / beta without overflow; linear above the threshold, as torch
    soft = xp.logaddexp(scalar(x, 0.0), bx) / scalar(x, beta)
    return xp.where(bx > scalar(x, threshold), x, soft)


def _softplus_vjp(b, ct, x, out, *, beta, threshold):
    bx = b.mul(x, beta)
    return [b.where(b.gt(bx, threshold), ct, b.mul(ct, b.sigmoid(bx)))]


_unary("softplus", _softplus_kernel, _softplus_vjp, infer=float_only("softplus"), flags=EW,
       attrs=(("beta", 1.0, K.FLOAT), ("threshold", 20.0, K.FLOAT)), canon=_float_canon("beta", "threshold", K.FLOAT),
       ref="torch.nn.functional.softplus",
       autocast={"cuda": AUTOCAST_FP32})


def _elu_kernel(xp, x, *, alpha):
    return xp.where(x > scalar(x, 0.0), x, scalar(x, alpha) * xp.expm1(x))


# x <= 0: alpha * exp(x) (= out + alpha), so alpha at 0 as torch
_unary("elu", _elu_kernel, infer=float_only("elu"), flags=EW,
       vjp=lambda b, ct, x, out, *, alpha: [b.where(b.gt(x, 0.0), ct,
                                                    b.mul(ct, b.add(out, alpha)))],
       attrs=(("alpha", 1.0, K.FLOAT),), canon=_float_canon("alpha"), ref="torch.nn.functional.elu")

# negative_slope at 0, as torch; a function of x with derivative 0 under create_graph, as
# torch's leaky_relu_backward (zero_slope_dep)
_unary("leaky_relu", lambda xp, x, *, negative_slope: _select.leaky_relu(
           xp, x, scalar(x, negative_slope)),
       lambda b, ct, x, out, *, negative_slope: [zero_slope_dep(
           b, b.where(b.gt(x, 0.0), ct, b.mul(ct, negative_slope)), x)],
       infer=float_only("leaky_relu"), flags=EW, attrs=(("negative_slope", 0.01, K.FLOAT),),
       canon=_float_canon("negative_slope"), ref="torch.nn.functional.leaky_relu")


def _hardtanh_canon(types, *, min_val, max_val):
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val cannot be greater than max_val, got min_val="
                         f"{min_val} and max_val={max_val}")
    return {"min_val": float(min_val), "max_val": float(max_val)}


def _hardtanh_kernel(xp, x, *, min_val, max_val):
    # torch clamps integer tensors to the truncated bounds; np.clip would lift bfloat16
    lo, hi = (int(min_val), int(max_val)) if x.dtype.kind in "iu" else (min_val, max_val)
    return xp.minimum(xp.maximum(x, scalar(x, lo)), scalar(x, hi))


# gradient 0 at both bounds (open interval), unlike clamp's closed one, and a NaN passes it
# (x <= min or x >= max gives 0): torch's hardtanh_backward; a function of x with derivative
# 0 under create_graph, as torch's (zero_slope_dep)
_unary("hardtanh", _hardtanh_kernel, infer=_no_bool("hardtanh"), flags=EW,
       vjp=lambda b, ct, x, out, *, min_val, max_val: [zero_slope_dep(b, b.where(
           b.logical_or(b.le(x, min_val), b.ge(x, max_val)), 0.0, ct), x)],
       attrs=(("min_val", -1.0, K.FLOAT), ("max_val", 1.0, K.FLOAT)), canon=_hardtanh_canon,
       ref="torch.nn.functional.hardtanh")

defcomposite("relu6", "input: Tensor",
             lambda ops, x: ops.hardtanh(check_operand(ops, "relu6", x), 0.0, 6.0),
             ref="torch.nn.functional.relu6 (hardtanh(x, 0, 6))", node_name="HardtanhBackward0")


def _silu(ops, x):
    check_operand(ops, "silu", x, floating=True)
    return ops.mul(x, ops.sigmoid(x))


def _mish(ops, x):
    check_operand(ops, "mish", x, floating=True)
    return ops.mul(x, ops.tanh(ops.softplus(x)))


defcomposite("silu", "input: Tensor", _silu, ref="torch.nn.functional.silu (x * sigmoid(x))",
             node_inputs=("input",))
defcomposite("mish", "input: Tensor", _mish, ref="torch.nn.functional.mish (x * tanh(softplus(x)))",
             node_inputs=("input",))


# ---- casts, logical and bitwise -----------------------------------------------------------------
def _convert_infer(types, *, dtype):
    return T.TensorType(types[0].shape, dtype)


def _convert_vjp(b, ct, x, out, *, dtype):
    if not (x.dtype.is_differentiable and dtype.is_differentiable):  # no gradient across ints
        return [None]
    if ct.dtype.is_complex and not x.dtype.is_complex:
        ct = b.real(ct)   # real -> complex: the real part (torch's _to_copy_backward)
    return [b.convert(ct, x.dtype)]   # complex -> real: a complex cotangent, imaginary part 0


def _convert_kernel(xp, x, *, dtype):
    x = xp.asarray(x)
    if x.dtype.kind == "c" and dtype.category in (T.INT, T.FLOAT):
        x = xp.real(x)   # torch keeps the real part (to bool: z != 0, both parts count)
    return x.astype(dtype.numpy)


def _convert_canon(types, *, dtype):
    dtype = T.as_dtype(dtype)
    if types[0].dtype.is_complex and dtype.category in (T.INT, T.FLOAT):
        warnings.warn("Casting complex values to real discards the imaginary part "
                      f"({types[0]} to {dtype.name})", UserWarning, stacklevel=5)
    return {"dtype": dtype}


defop("convert", "input", attrs=(("dtype", None, K.DTYPE_OPT),), flags=CEW | INTERNAL,
      canon=_convert_canon,
      infer=_convert_infer, ref="torch.Tensor.to(dtype)",
      kernel=_convert_kernel, vjp=_convert_vjp, jvp=LINEAR,
      aten_name="aten::_to_copy", simplify=same_type_identity,
      node_name="ToCopyBackward0")   # torch 2.13: x.double(), x.to(dtype), x.type(...), x.half()

defop("logical_not", "input", infer=bool_out, flags=CEW, ref="torch.logical_not",
      kernel=lambda xp, x: xp.logical_not(x), vjp=NONDIFF)


def require_integral(name: str, t: T.TensorType) -> None:
    """Bitwise ops take integer and bool tensors only."""
    if t.dtype.is_floating_point:
        raise DTypeError(f"{name}: only integer and bool tensors are supported, got {t}")


def _bitwise_not_infer(types, **_):
    require_integral("bitwise_not", types[0])
    return types[0]


_unary("bitwise_not", lambda xp, x: xp.invert(x), NONDIFF, infer=_bitwise_not_infer, flags=EW)
