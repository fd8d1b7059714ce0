"""Elementwise binary and ternary ops (broadcasting; operands promoted to one dtype)."""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..builder import with_location
from ..errors import DTypeError
from ..scalars import check_scalar
from ..registry import (AUTOCAST_FP32, AUTOCAST_PROMOTE, CHEAP, COMPLEX, ELEMENTWISE, INTERNAL,
                        LINEAR, NONDIFF, PROMOTE, SCALAR_ARGS, TO_FLOAT, NotImplementedGrad,
                        defcomposite,
                        defop)
from . import _select
from ._common import broadcast_infer, div_conj, mul_conj, require_float
from ._common import tangent_sum, tmul
from ._rewrites import identity_element
from .unary import check_operand, require_integral, scalar

EW = ELEMENTWISE | CHEAP | PROMOTE
CEW = EW | COMPLEX   # also for complex64/complex128 (VJPs conjugate, torch's convention)


def _binary(name, kernel, vjp, flags=EW, ref=None, infer=None, jvp=None, **kw):
    return defop(name, "input, other", infer=infer or broadcast_infer(name), kernel=kernel,
                 vjp=vjp, flags=flags, ref=ref or f"torch.{name}", jvp=jvp, **kw)


def _checked(check, name, out_dtype=None):
    """broadcast_infer after a dtype check `check(name, type)` on every operand."""
    infer = broadcast_infer(name, out_dtype)

    def checked(types, **attrs):
        for t in types:
            check(name, t)
        return infer(types, **attrs)
    return checked


def _no_bool(name, t):
    if t.dtype is T.bool_:
        raise DTypeError(f"{name}: not supported for bool tensors, got {t}")


# The autodiff pass reduces each cotangent to its input's shape (sum over
# broadcast dims), so rules here are written at the broadcast output shape.
_binary("add", lambda xp, x, y: xp.add(x, y), lambda b, ct, x, y, out: [ct, ct], flags=CEW,
        jvp=LINEAR, simplify=identity_element(0))
_binary("sub", lambda xp, x, y: xp.subtract(x, y), lambda b, ct, x, y, out: [ct, b.neg(ct)],
        flags=CEW, jvp=LINEAR, simplify=identity_element(0, left=False))
# rsub(x, y) = y - x: lets rules write "1 - x" without a constant tensor.
_binary("rsub", lambda xp, x, y: xp.subtract(y, x), lambda b, ct, x, y, out: [b.neg(ct), ct],
        flags=CEW, jvp=LINEAR)
_binary("mul", lambda xp, x, y: xp.multiply(x, y),
        lambda b, ct, x, y, out: [mul_conj(b, ct, y), mul_conj(b, ct, x)], flags=CEW,
        jvp=lambda b, t, x, y, out: tangent_sum(b, tmul(b, t[0], y), tmul(b, t[1], x)),
        simplify=identity_element(1))
_binary("div", lambda xp, x, y: xp.true_divide(x, y),
        lambda b, ct, x, y, out: [div_conj(b, ct, y), b.neg(div_conj(b, mul_conj(b, ct, out), y))],
        flags=CEW | TO_FLOAT,
        jvp=lambda b, t, x, y, out: b.div(tangent_sum(b, t[0], tmul(b, t[1], b.neg(out))), y),
        simplify=identity_element(1, left=False))


def _pow_vjp(b, ct, x, y, out):
    # d/dx x**y = y * x**(y-1), 0 where y == 0 (torch; else 0 * 0**-1 = nan at x == 0);
    # d/dy x**y = x**y * log(x)  (torch: 0 where x == 0 and y >= 0; complex y: y real and >= 0)
    if y.dtype.is_complex:
        y_nonneg = b.logical_and(b.eq(b.imag(y), 0.0), b.ge(b.real(y), 0.0))
    else:
        y_nonneg = b.ge(y, 0.0)
    dx = mul_conj(b, ct, b.where(b.eq(y, 0.0), 0.0, b.mul(y, b.pow(x, b.sub(y, 1.0)))))
    dy = mul_conj(b, ct, b.where(b.logical_and(b.eq(x, 0.0), y_nonneg), 0.0,
                                 b.mul(out, b.log(x))))
    return [dx, dy]


def _pow_kernel(xp, x, y):
    if x.dtype.kind in "iu" and y.dtype.kind in "iu":
        # integer semantics for negative exponents, as torch 2.13 (NumPy raises): 1 ** -n
        # is 1, (-1) ** -n is +-1 by the parity of n, any other base (0 included) gives 0
        neg = y < 0
        r = xp.power(x, xp.where(neg, 0, y).astype(y.dtype))
        sign = xp.where(y % 2 == 0, 1, -1).astype(r.dtype)
        small = xp.where(x == 1, 1, xp.where(x == -1, sign, 0)).astype(r.dtype)
        return xp.where(neg, small, r)
    if (xp is np and y.ndim == 0 and x.dtype == y.dtype and x.dtype.kind == "f"
            and (y == 2.0 or y == 3.0)):
        # torch's pow with a scalar 2 or 3 multiplies (x*x, x*x*x); NumPy's float32 power
        # runs ~200x slower (15 ms against 0.07 for GELU's x ** 3 in a GPT step, issue 17)
        return x * x if y == 2.0 else x * x * x
    return xp.power(x, y)


_binary("pow", _pow_kernel, _pow_vjp, flags=CEW,
        autocast={"cuda": AUTOCAST_FP32})


def _minmax_vjp(strict_cmp):
    # torch.maximum/minimum: the winner gets the gradient, a tie splits it in half; an
    # operand gets 0 only where the other strictly wins, so a NaN pair gives both the whole
    # gradient, as torch's where(x == y, ct / 2, ct).masked_fill_(x < y, 0).
    def vjp(b, ct, x, y, out):
        half = b.mul(ct, 0.5)
        tie = b.eq(x, y)
        dx = b.where(tie, half, b.where(strict_cmp(b, y, x), 0.0, ct))
        dy = b.where(tie, half, b.where(strict_cmp(b, x, y), 0.0, ct))
        return [dx, dy]
    return vjp


_binary("maximum", lambda xp, x, y: xp.maximum(x, y), _minmax_vjp(lambda b, p, q: b.gt(p, q)))
_binary("minimum", lambda xp, x, y: xp.minimum(x, y), _minmax_vjp(lambda b, p, q: b.lt(p, q)))

# eq / ne compare complex numbers too; lt ... ge do not (no order), as torch
for _name, _fn in (("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"),
                   ("gt", "greater"), ("ge", "greater_equal")):
    defop(_name, "input, other", infer=broadcast_infer(_name, out_dtype=T.bool_), vjp=NONDIFF,
          kernel=(lambda f: lambda xp, x, y: getattr(xp, f)(x, y))(_fn),
          flags=CEW if _name in ("eq", "ne") else EW, ref=f"torch.{_name}")

# logical ops take any dtypes (promoted to one, then tested against 0); bitwise ops integer/bool
for _name in ("logical_and", "logical_or", "logical_xor"):
    defop(_name, "input, other", infer=broadcast_infer(_name, out_dtype=T.bool_), vjp=NONDIFF,
          kernel=(lambda f: lambda xp, x, y: getattr(xp, f)(x, y))(_name), flags=CEW,
          ref=f"torch.{_name}")

for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    defop(_name, "input, other", infer=_checked(require_integral, _name),
          kernel=(lambda f: lambda xp, x, y: getattr(xp, f)(x, y))(_name), vjp=NONDIFF,
          flags=EW, ref=f"torch.{_name}")


def _shift_kernel(left: bool):
    """torch's shifts: a shift by a negative amount or by the width or more gives 0 (left)
    or the sign fill (right: -1 for a negative signed value, else 0), never C's undefined
    behaviour; a left shift keeps the low bits (int8 64 << 1 is -128)."""
    def kernel(xp, x, s):
        bits = 8 * x.dtype.itemsize
        ok = (s >= 0) & (s < bits)
        safe = xp.where(ok, s, xp.zeros_like(s))
        if left:
            return xp.where(ok, xp.left_shift(x, safe), xp.zeros_like(x))
        fill = xp.where(x < 0, xp.full_like(x, -1), xp.zeros_like(x)) if x.dtype.kind == "i" \
            else xp.zeros_like(x)
        return xp.where(ok, xp.right_shift(x, safe), fill)
    return kernel


def _shift_check(name, t):
    if t.dtype is T.bool_ or not t.dtype.category == T.INT:   # torch: "lshift_cpu" ... 'Float'
        raise DTypeError(f"{name}: only integer tensors are supported, got {t}")


for _name, _left in (("bitwise_left_shift", True), ("bitwise_right_shift", False)):
    _binary(_name, _shift_kernel(_left), NONDIFF, infer=_checked(_shift_check, _name),
            ref=f"torch.{_name} (the << / >> operators)")


def _where_infer(types, **_):
    cond, x, y = types
    if cond.dtype is not T.bool_:
        raise DTypeError(f"where: condition must be bool, got {cond}")
    return broadcast_infer("where")([T.TensorType(cond.shape, x.dtype), x, y])


defop("where", "condition, input, other", infer=_where_infer, flags=CEW | SCALAR_ARGS,
      promote_inputs=(1, 2), ref="torch.where",
      kernel=_select.select,
      vjp=lambda b, ct, c, x, y, out: [None, b.where(c, ct, 0.0), b.where(c, 0.0, ct)], jvp=LINEAR)


# ---- more elementwise binary ops ----------------------------------------------------------------
def _atan2_vjp(b, ct, x, y, out):
    # d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2); 0 at x == y == 0 as torch (not 0/0)
    r = b.add(b.mul(x, x), b.mul(y, y))
    zero = b.eq(r, 0.0)
    s = b.where(zero, 0.0, b.div(ct, b.where(zero, 1.0, r)))
    return [b.mul(s, y), b.neg(b.mul(s, x))]


_binary("atan2", lambda xp, x, y: xp.arctan2(x, y), _atan2_vjp, flags=EW | TO_FLOAT,
        autocast={"cuda": AUTOCAST_PROMOTE})


def _int_mod(name):
    def kernel(xp, x, y):
        if x.dtype.kind in "iu" and xp is np and np.any(y == 0):   # jax cannot raise here
            raise ZeroDivisionError(f"{name}: integer division by zero")
        return getattr(xp, name)(x, y)
    return kernel


# fmod: sign of the dividend (C fmod); remainder: sign of the divisor (Python %).
# d/dy = -trunc(x / y) resp. -floor(x / y), as torch.
_binary("fmod", _int_mod("fmod"), infer=_checked(_no_bool, "fmod"),
        vjp=lambda b, ct, x, y, out: [ct, b.neg(b.mul(ct, b.trunc(b.div(x, y))))])
_binary("remainder", _int_mod("remainder"), infer=_checked(_no_bool, "remainder"),
        vjp=lambda b, ct, x, y, out: [ct, b.neg(b.mul(ct, b.floor(b.div(x, y))))])

def _float_or_complex(name, t):
    if not t.dtype.is_differentiable:
        raise DTypeError(f"{name}: expected a floating-point or complex tensor, got {t}")


def _logaddexp_complex(xp, x, y):
    """torch's complex log(exp(x) + exp(y)): max + log1p(exp(min - max)), the operands
    ordered by real part (ties: x is the max), so the imaginary part is max's plus a
    principal angle (it may leave (-pi, pi]); when both real parts are the same infinity,
    -inf gives min and +inf the unshifted log(exp(min) + exp(max)); a NaN real part, NaN."""
    x, y = xp.broadcast_arrays(x, y)
    swap = xp.real(x) < xp.real(y)
    lo, hi = xp.where(swap, x, y), xp.where(swap, y, x)
    lo_re, hi_re = xp.real(lo), xp.real(hi)
    out = xp.log1p(xp.exp(lo - hi)) + hi
    same_inf = ~xp.isfinite(lo_re) & (lo_re == hi_re)
    out = xp.where(same_inf, xp.where(lo_re < 0, lo, xp.log(xp.exp(lo) + xp.exp(hi))), out)
    nan = xp.asarray(complex(math.nan, math.nan), dtype=out.dtype)
    return xp.where(xp.isnan(lo_re) | xp.isnan(hi_re), nan, out)


def _logaddexp_kernel(xp, x, y):
    return _logaddexp_complex(xp, x, y) if x.dtype.kind == "c" else xp.logaddexp(x, y)


# d/dx = exp(x - out) (conjugated for complex, torch's convention)
_binary("logaddexp", _logaddexp_kernel, flags=EW | COMPLEX,
        infer=_checked(_float_or_complex, "logaddexp"),
        vjp=lambda b, ct, x, y, out: [mul_conj(b, ct, b.exp(b.sub(x, out))),
                                      mul_conj(b, ct, b.exp(b.sub(y, out)))])
# NaN at x == y == 0 (0/0), as torch
_binary("hypot", lambda xp, x, y: xp.hypot(x, y), infer=_checked(require_float, "hypot"),
        vjp=lambda b, ct, x, y, out: [b.div(b.mul(ct, x), out), b.div(b.mul(ct, y), out)])


def _xlogy_kernel(xp, x, y):
    out = xp.where(x == 0, scalar(x, 0.0), x * xp.log(y))
    return xp.where(xp.isnan(y), y, out)


# x * log(y), 0 where x == 0 unless y is NaN.  torch: d/dx = log(y) (also at x == 0), but 0
# where x == 0 and y <= 0; d/dy = x / y (NaN at x == y == 0)
_binary("xlogy", _xlogy_kernel, flags=EW | TO_FLOAT,
        vjp=lambda b, ct, x, y, out: [
            b.where(b.logical_and(b.eq(x, 0.0), b.le(y, 0.0)), 0.0, b.xlogy(ct, y)),
            b.div(b.mul(ct, x), y)])


# ---- clamp --------------------------------------------------------------------------------------
# torch's gradients: x gets it on the closed interval [min, max] (so at a bound too);
# a tensor bound gets it where x is strictly beyond it.
_binary("clamp_min", lambda xp, x, lo: xp.maximum(x, lo),
        lambda b, ct, x, lo, out: [b.where(b.ge(x, lo), ct, 0.0), b.where(b.lt(x, lo), ct, 0.0)],
        flags=EW | SCALAR_ARGS)
_binary("clamp_max", lambda xp, x, hi: xp.minimum(x, hi),
        lambda b, ct, x, hi, out: [b.where(b.le(x, hi), ct, 0.0), b.where(b.gt(x, hi), ct, 0.0)],
        flags=EW | SCALAR_ARGS)


def _clamp_range_vjp(b, ct, x, lo, hi, out):
    # as torch's clamp_backward_min_max: min > max makes the result max, whose gradient it gets;
    # where min == max and x < min, no input gets a gradient
    dx = b.where(b.logical_and(b.ge(x, lo), b.le(x, hi)), ct, 0.0)
    dlo = b.where(b.logical_and(b.lt(x, lo), b.lt(lo, hi)), ct, 0.0)
    dhi = b.where(b.logical_or(b.gt(x, hi), b.lt(hi, lo)), ct, 0.0)
    return [dx, dlo, dhi]


defop("clamp_range", "input, min, max", infer=broadcast_infer("clamp"),
      flags=EW | INTERNAL | SCALAR_ARGS,
      kernel=lambda xp, x, lo, hi: xp.minimum(xp.maximum(x, lo), hi), vjp=_clamp_range_vjp,
      ref="torch.clamp with both bounds")


def _clamp(ops, input, min=None, max=None, *, name="clamp"):
    check_operand(ops, name, input)
    if min is None and max is None:
        raise with_location(ValueError(f"{name}: at least one of 'min' or 'max' must not be None"),
                            ops.location())
    for bound in (min, max):   # Scalar arguments: torch's overflow check, named clamp
        if isinstance(bound, (int, float)) and type(bound) is not bool:
            dt = T.result_type([input.dtype] if input.ndim else [],
                               [] if input.ndim else [input.dtype], [bound])
            try:
                check_scalar(name, bound, dt)
            except (RuntimeError, OverflowError) as e:
                raise with_location(e, ops.location()) from None
    if max is None:
        return ops.clamp_min(input, min)
    if min is None:
        return ops.clamp_max(input, max)
    return ops.clamp_range(input, min, max)


defcomposite("clamp",
             "input: Tensor, min: Tensor | Number | None = None, max: Tensor | Number | None = None",
             _clamp, ref="torch.clamp", node_name="ClampBackward1",
             node_inputs=("input", "min", "max"))
defcomposite("clip",
             "input: Tensor, min: Tensor | Number | None = None, max: Tensor | Number | None = None",
             lambda ops, input, **bounds: _clamp(ops, input, **bounds, name="clip"),
             ref="torch.clip (alias of clamp)", node_name="ClampBackward1",
             node_inputs=("input", "min", "max"))


# ---- lerp, addcmul, addcdiv ---------------------------------------------------------------------
def _lerp(ops, input, end, weight):
    check_operand(ops, "lerp", input)
    if not input.dtype.is_differentiable:
        raise DTypeError(f"lerp: expected a floating-point or complex tensor, got "
                         f"{ops.type_of(input)}").add_location(ops.location())
    check_operand(ops, "lerp", end, arg="end")
    # torch: `end` has input's dtype, 0-d too; a 0-d `weight` may differ (it promotes)
    for arg, t in (("end", end), ("weight", weight)):
        if ops.is_operand(t) and (t.shape or arg == "end") and t.dtype is not input.dtype:
            raise DTypeError(f"lerp: expected dtype {input.dtype.name} for `{arg}` but got dtype "
                             f"{t.dtype.name} (input {ops.type_of(input)}, {arg} "
                             f"{ops.type_of(t)})").add_location(ops.location())
    if isinstance(weight, complex) and not input.dtype.is_complex:
        if weight.imag:   # torch: "value cannot be converted to type float without overflow"
            raise DTypeError(f"lerp: the complex weight {weight} cannot be converted to the "
                             f"dtype of input {ops.type_of(input)}").add_location(ops.location())
        weight = weight.real
    # input + weight (end - input): d/dinput = 1 - weight, d/dend = weight,
    # d/dweight = end - input
    return ops.add(input, ops.mul(weight, ops.sub(end, input)))


defcomposite("lerp", "input: Tensor, end: Tensor, weight: Tensor", _lerp, ref="torch.lerp",
             flags=COMPLEX, node_inputs=("input", "end", "weight"))


def _pointwise_operands(ops, name, input, tensor1, tensor2):
    """The three tensors converted to their torch result dtype."""
    xs = [check_operand(ops, name, x, arg=a)
          for x, a in ((input, "input"), (tensor1, "tensor1"), (tensor2, "tensor2"))]
    dtype = T.result_type([x.dtype for x in xs if x.shape], [x.dtype for x in xs if not x.shape],
                          [])
    return [x if x.dtype is dtype else ops.convert(x, dtype) for x in xs], dtype


def _scaled(ops, name, t, value, dtype):
    if value == 1:
        return t
    if isinstance(value, complex) and not dtype.is_complex:
        if value.imag:   # torch: "value cannot be converted to type float without overflow"
            raise DTypeError(f"{name}: value={value} cannot be converted to the result dtype "
                             f"{dtype.name}").add_location(ops.location())
        value = value.real
    # torch casts `value` to an integer result dtype (addcmul(int, int, int, value=2.5) uses 2)
    return ops.mul(t, value if dtype.is_differentiable else int(value))


def _addcmul(ops, input, tensor1, tensor2, value=1):
    (x, t1, t2), dtype = _pointwise_operands(ops, "addcmul", input, tensor1, tensor2)
    return ops.add(x, _scaled(ops, "addcmul", ops.mul(t1, t2), value, dtype))


def _addcdiv(ops, input, tensor1, tensor2, value=1):
    for t in (tensor1, tensor2):
        check_operand(ops, "addcdiv", t)
    if not (tensor1.dtype.is_differentiable or tensor2.dtype.is_differentiable):
        raise DTypeError(f"addcdiv: integer division is not supported (tensor1 "
                         f"{ops.type_of(tensor1)}, tensor2 {ops.type_of(tensor2)}); convert one "
                         "of them to a floating-point dtype").add_location(ops.location())
    (x, t1, t2), dtype = _pointwise_operands(ops, "addcdiv", input, tensor1, tensor2)
    return ops.add(x, _scaled(ops, "addcdiv", ops.div(t1, t2), value, dtype))


defcomposite("addcmul", "input: Tensor, tensor1: Tensor, tensor2: Tensor, value=1", _addcmul,
             ref="torch.addcmul", flags=COMPLEX,
             autocast={"cuda": AUTOCAST_PROMOTE}, node_inputs=("input", "tensor1", "tensor2"))
defcomposite("addcdiv", "input: Tensor, tensor1: Tensor, tensor2: Tensor, value=1", _addcdiv,
             ref="torch.addcdiv", flags=COMPLEX,
             autocast={"cuda": AUTOCAST_PROMOTE}, node_inputs=("input", "tensor1", "tensor2"))


# ---- copysign, heaviside ------------------------------------------------------------------------
def _copysign_vjp(b, ct, x, y, out):
    # torch: d/dx = out / x, 0 where x == 0 (`safe` keeps the masked lanes finite, so a
    # second derivative stays 0 there); d/dy = 0
    safe = b.where(b.eq(x, 0.0), 1.0, x)
    return [b.mul(ct, b.where(b.eq(x, 0.0), 0.0, b.div(out, safe))), b.full(ct.shape, 0.0, ct.dtype)]


# |x| with the sign bit of y (-0.0 and NaN signs too); integer operands give floats, as torch
_binary("copysign", lambda xp, x, y: xp.copysign(x, y), _copysign_vjp, flags=EW | TO_FLOAT)


def _heaviside_infer(types, **_):
    x, v = types
    if x.dtype is not v.dtype:   # torch 2.13 does not promote here
        raise RuntimeError(f"heaviside: heaviside is not yet implemented for tensors with "
                           f"different dtypes ({x} and {v}).")
    return broadcast_infer("heaviside")(types)


# 0 below 0, `values` at 0, 1 above; NaN gives 0 (torch: x == 0 ? values : x > 0; NumPy's
# heaviside would give NaN).  torch has no derivative for it (a backward through it raises)
defop("heaviside", "input, values", infer=_heaviside_infer, flags=ELEMENTWISE | CHEAP,
      ref="torch.heaviside",
      kernel=lambda xp, x, v: xp.where(x == 0, v, (x > 0).astype(x.dtype)),
      vjp=lambda b, ct, x, v, out: [NotImplementedGrad("heaviside"),
                                    NotImplementedGrad("heaviside")])
