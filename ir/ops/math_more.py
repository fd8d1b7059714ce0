"""More of torch's math functions (issues 14 and 16, fourth batch): deg2rad, rad2deg, ldexp,
float_power, renorm and addr as registry composites of existing ops (so their gradients,
jax lowering and tg.compile come from those ops), and nextafter, an elementwise primitive.

torch 2.13's dtype rules: deg2rad / rad2deg of integers and bools give the default float and
refuse complex tensors; float_power computes in float64, or complex128 when an operand is
complex; ldexp is ``input * exp2(other)`` in the operands' promoted dtype.
nextafter takes floating tensors only; torch 2.13's backward passes the cotangent to `input`
unchanged and gives `other` zeros, and so does the rule here.
"""
from __future__ import annotations

import math

from .. import types as T
from ..errors import DTypeError
from ..registry import CHEAP, COMPLEX, ELEMENTWISE, PROMOTE, defcomposite, defop
from ._common import broadcast_infer, norm_dim
from ._matrix import _fail, _need_tensors, _ty
from .combine import _scaled_sum
from .index_more import torch_dtype_name


# ---- deg2rad / rad2deg ----------------------------------------------------------------------
def _angle(name: str, factor: float):
    def decomp(ops, input):
        _need_tensors(ops, name, input=input)
        if input.dtype.is_complex:   # torch 2.13's message
            raise _fail(ops, RuntimeError(f"{name} is not supported for complex tensors."))
        x = input if input.dtype.is_floating_point else ops.convert(input, T.DEFAULT_FLOAT)
        return ops.mul(x, factor)
    decomp.__doc__ = (f"`input` times {'pi / 180' if name == 'deg2rad' else '180 / pi'} "
                      f"(torch.{name}); integers and bools give the default float dtype.")
    return decomp


defcomposite("deg2rad", "input: Tensor", _angle("deg2rad", math.pi / 180), ref="torch.deg2rad",
             node_name="Deg2RadBackward0", node_inputs=("input",))
defcomposite("rad2deg", "input: Tensor", _angle("rad2deg", 180 / math.pi), ref="torch.rad2deg",
             node_name="Rad2DegBackward0", node_inputs=("input",))


# ---- ldexp, float_power ---------------------------------------------------------------------
def _ldexp(ops, input, other):
    """``input * 2 ** other`` (torch.ldexp), in the operands' promoted dtype, the default
    float when both are integers or bools (torch 2.13: float16 and int give float16)."""
    _need_tensors(ops, "ldexp", input=input, other=other)
    dtype = T.promote_types(input.dtype, other.dtype)
    if not dtype.is_floating_point:
        dtype = T.DEFAULT_FLOAT
    x, e = (t if t.dtype is dtype else ops.convert(t, dtype) for t in (input, other))
    return ops.mul(x, ops.exp2(e))


def float_power_dtype(*dtypes) -> T.DType:
    """The dtype torch.float_power computes in: complex128 if any operand is complex, else
    float64."""
    return T.complex128 if any(d.is_complex for d in dtypes) else T.float64


def _float_power(ops, input, exponent):
    """``input ** exponent`` computed in float64, or complex128 when either operand is complex
    (torch.float_power); `exponent` a tensor or a Python number."""
    _need_tensors(ops, "float_power", input=input)
    is_tensor = ops.is_operand(exponent)
    if not is_tensor and (isinstance(exponent, bool) or
                          not isinstance(exponent, (int, float, complex))):
        raise _fail(ops, TypeError(f"float_power(): exponent must be a tensor or a number, "
                                   f"got {type(exponent).__name__}"))
    dtype = float_power_dtype(input.dtype, exponent.dtype if is_tensor else
                              (T.complex128 if isinstance(exponent, complex) else T.float64))
    x = input if input.dtype is dtype else ops.convert(input, dtype)
    if is_tensor:
        e = exponent if exponent.dtype is dtype else ops.convert(exponent, dtype)
    else:
        e = ops.full((), exponent, dtype)
    return ops.pow(x, e)


defcomposite("ldexp", "input: Tensor, other: Tensor", _ldexp, ref="torch.ldexp")
defcomposite("float_power", "input: Tensor, exponent: Tensor | Number", _float_power,
             ref="torch.float_power", flags=COMPLEX)


# ---- nextafter --------------------------------------------------------------------------------
def _nextafter_infer(types, **attrs):
    for t in types:
        if not t.dtype.is_floating_point or t.dtype.is_complex:
            raise DTypeError(f"nextafter: only floating-point tensors are supported, got {t} "
                             f"(torch: \"nextafter_cpu\" not implemented for "
                             f"'{_TORCH_NAME.get(t.dtype, t.dtype.name)}')")
    return broadcast_infer("nextafter")(types, **attrs)


_TORCH_NAME = {T.int64: "Long", T.int32: "Int", T.int16: "Short", T.int8: "Char",
               T.uint8: "Byte", T.bool_: "Bool", T.complex64: "ComplexFloat",
               T.complex128: "ComplexDouble"}

# the next representable value after `input` towards `other`; torch 2.13's backward gives
# `input` the cotangent unchanged and `other` zeros (recorded in tests/api/test_surface_ops4.py)
defop("nextafter", "input, other", infer=_nextafter_infer,
      kernel=lambda xp, x, y: xp.nextafter(x, y),
      vjp=lambda b, ct, x, y, out: [ct, b.full(ct.shape, 0.0, ct.dtype)],
      flags=ELEMENTWISE | CHEAP | PROMOTE, ref="torch.nextafter")


# ---- renorm, addr -----------------------------------------------------------------------------
def _renorm(ops, input, p, dim, maxnorm):
    """`input` with each slice along `dim` whose p-norm exceeds `maxnorm` scaled down to norm
    `maxnorm` (torch.renorm: the factor is ``maxnorm / (norm + 1e-7)``); the others unchanged.
    Differentiable through the norm, as torch's backward.

    Raises:
        RuntimeError: fewer than 2 dims, an integer or bool input, p <= 0, maxnorm < 0
            (torch's messages).
        IndexError: a bad dim.
    """
    _need_tensors(ops, "renorm", input=input)
    nd = len(input.shape)
    if nd < 2:
        raise _fail(ops, RuntimeError(f"renorm: input needs at least 2 dimensions, got {nd} "
                                      f"dimensions"))
    if not (input.dtype.is_floating_point or input.dtype.is_complex):   # torch's error
        raise _fail(ops, RuntimeError(
            f"renorm: linalg.vector_norm: Expected a floating point or complex tensor as "
            f"input. Got {torch_dtype_name(input.dtype)} ({_ty(input)})"))
    for arg, v in (("p", p), ("maxnorm", maxnorm)):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _fail(ops, TypeError(f"renorm(): argument '{arg}' must be a number, not "
                                       f"{type(v).__name__}"))
    if p <= 0:
        raise _fail(ops, RuntimeError("renorm: non-positive-norm not supported"))
    if maxnorm < 0:
        raise _fail(ops, RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}"))
    d = norm_dim("renorm", dim, nd)
    others = tuple(i for i in range(nd) if i != d)
    norm = ops.linalg_vector_norm(input, float(p), others, True)
    scale = ops.where(ops.gt(norm, float(maxnorm)),
                      ops.div(ops.full((), float(maxnorm), input.dtype), ops.add(norm, 1e-7)),
                      ops.full((), 1.0, input.dtype))
    return ops.mul(input, scale)


def _addr(ops, input, vec1, vec2, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` (torch.addr): vec1 (n,), vec2 (m,), input
    broadcastable to (n, m); beta 0 ignores `input` (its NaNs too).

    Raises:
        RuntimeError: a vector argument that is not 1-D, a float beta/alpha for integer
        tensors (torch's messages).  ShapeError: an input that does not broadcast.
    """
    _need_tensors(ops, "addr", input=input, vec1=vec1, vec2=vec2)
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if len(v.shape) != 1:
            raise _fail(ops, RuntimeError(f"addr: Expected 1-D argument {name}, but got "
                                          f"{len(v.shape)}-D"))
    return _scaled_sum(ops, "addr", input, ops.outer(vec1, vec2), beta, alpha)


defcomposite("renorm", "input: Tensor, p, dim, maxnorm", _renorm, ref="torch.renorm",
             flags=COMPLEX, node_inputs=("input",))
defcomposite("addr", "input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1", _addr,
             ref="torch.addr", flags=COMPLEX, node_inputs=("input", "vec1", "vec2"))
