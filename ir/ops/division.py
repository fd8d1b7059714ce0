"""floor_divide (``//``): rounded toward -inf, composed of remainder, fmod, div and rounding
ops, exact over the whole int64 range; no gradient (torch's floor_divide has none)."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError
from ..registry import REGISTRY, defcomposite, plan_promotion
from ..scalars import wrap_number

_NUMBERS = (bool, int, float, complex)


def _detached(ops, a, dtype: T.DType):
    """Operand `a` (tensor or Python number) as a tensor of `dtype` without gradient."""
    if ops.is_operand(a):
        if getattr(a, "requires_grad", True):   # an IR value has none: always cut there
            a = ops.stop_gradient(a)
        return a if a.dtype is dtype else ops.convert(a, dtype)
    return ops.full((), wrap_number(a, dtype), dtype)   # a wrapped number (ir/scalars.py)


def _floor_divide(ops, input, other):
    """``input // other`` rounded toward -inf, elementwise with broadcasting
    (torch.floor_divide, the ``//`` operator; Python's and NumPy's floor division).

    Args:
        input, other: tensors or Python numbers (at least one a tensor), promoted by
            torch's rules (int64 tensor // 2.5 -> float32).  Bool and complex are refused.
    Returns:
        The broadcast shape in the promoted dtype.  Integers are exact over the whole int64
        range.  Floats follow torch's kernel: ``(input - fmod(input, other)) / other``
        moved to the floor and rounded to the nearest integer, so ``1.0 // 0.1`` is 9.0
        (not floor(1.0 / 0.1) = 10.0); a zero divisor gives ``input / other`` (inf, -inf
        or nan).
    Not differentiable: the result never requires grad (torch's floor_divide raises in
    backward; its gradient is zero wherever defined).
    Raises:
        DTypeError: bool or complex operands.
        ZeroDivisionError: an integer division by zero (eager; torch raises too).
        ShapeError: shapes that do not broadcast.
    """
    operands = [input, other]
    if not any(ops.is_operand(a) for a in operands) or \
            not all(ops.is_operand(a) or isinstance(a, _NUMBERS) for a in operands):
        raise TypeError(f"floor_divide: expected tensors or numbers with at least one tensor, "
                        f"got {type(input).__name__} and {type(other).__name__}")
    dt = plan_promotion(REGISTRY["remainder"], operands)
    if dt is T.bool_ or dt.is_complex:
        shown = ", ".join(str(ops.type_of(a)) if ops.is_operand(a) else repr(a) for a in operands)
        raise DTypeError(f"floor_divide: not supported for {dt.name} operands, got ({shown})")
    x, y = _detached(ops, input, dt), _detached(ops, other, dt)
    if dt.category == T.INT:
        out = _int_floor_divide(ops, x, y)
        return out if out.dtype is dt else ops.convert(out, dt)
    return _float_floor_divide(ops, x, y)


def _int_floor_divide(ops, x, y):
    """Exact floor division of integers, as int64, built from remainder and float64 ops.

    ``n = x - remainder(x, y)`` is an exact multiple of y, and q = n / y.  float64 gets q
    right when |q| < 2**51; beyond that its error is at most ~2**12, and ``n - q0 * y``
    (exact in wrapping int64 arithmetic) is that error times y, which a second float64
    division recovers exactly.
    """
    try:
        r = ops.remainder(x, y)   # raises ZeroDivisionError eagerly for a zero divisor
    except ZeroDivisionError:
        raise ZeroDivisionError("floor_divide: integer division by zero") from None
    x, y, r = (ops.convert(t, T.int64) for t in (x, y, r))
    n = ops.sub(x, r)
    yf = ops.convert(y, T.float64)

    def rounded_quotient(a):
        return ops.convert(ops.round(ops.div(ops.convert(a, T.float64), yf)), T.int64)

    q = rounded_quotient(n)
    return ops.add(q, rounded_quotient(ops.sub(n, ops.mul(q, y))))


def _float_floor_divide(ops, x, y):
    """torch's floating floor division (ATen div_floor_floating), step for step."""
    mod = ops.fmod(x, y)
    div = ops.div(ops.sub(x, mod), y)
    # fmod has the dividend's sign: where it differs from the divisor's, one step lower
    lower = ops.logical_and(ops.ne(mod, 0), ops.ne(ops.lt(y, 0), ops.lt(mod, 0)))
    div = ops.where(lower, ops.sub(div, 1), div)
    floor = ops.floor(div)
    floor = ops.where(ops.gt(ops.sub(div, floor), 0.5), ops.add(floor, 1), floor)
    quotient = ops.div(x, y)
    # div == 0: a zero with the sign of x / y (copysign(0, x / y), finite here)
    out = ops.where(ops.eq(div, 0), ops.mul(quotient, 0), floor)
    return ops.where(ops.eq(y, 0), quotient, out)


# not COMPLEX: complex tensors are refused by the registry's one rule; a Python complex
# scalar with a real tensor by the decomposition's check of the promoted dtype
defcomposite("floor_divide", "input: Tensor | Number, other: Tensor | Number", _floor_divide,
             ref="torch.floor_divide (floor rounding, torch's float kernel)")
