"""torch functions composed of registry ops, with no op (and no declaration) of their own:
floor_divide (``//``), isclose, allclose, equal, is_tensor.

None of them is differentiable, so each runs under no_grad on detached operands; they go
through the generated `_ops` functions, so `tg.compile` traces them like any other op.
"""
from __future__ import annotations

from tracegrad.ir import types as T
from tracegrad.ir.errors import DTypeError
from tracegrad.ir.registry import REGISTRY, plan_promotion

from . import _ops
from .dispatch.grad_mode import no_grad
from .tensor import Tensor

_NUMBERS = (bool, int, float, complex)


def is_tensor(obj) -> bool:
    """True when `obj` is a tracegrad Tensor (a Parameter too), as torch.is_tensor."""
    return isinstance(obj, Tensor)


def _tensor_of(a, dtype: T.DType) -> Tensor:
    """Operand `a` (tensor or Python number) as a detached tensor of `dtype`."""
    if isinstance(a, Tensor):
        return a.detach().to(dtype)
    return _ops.full((), a, dtype)


def floor_divide(input, other) -> Tensor:
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
    if not any(isinstance(a, Tensor) for a in operands) or \
            not all(isinstance(a, (Tensor, *_NUMBERS)) for a in operands):
        raise TypeError(f"floor_divide: expected tensors or numbers with at least one tensor, "
                        f"got {type(input).__name__} and {type(other).__name__}")
    dt = plan_promotion(REGISTRY["remainder"], operands)
    if dt is T.bool_ or dt.is_complex:
        shown = ", ".join(str(a._type) if isinstance(a, Tensor) else repr(a) for a in operands)
        raise DTypeError(f"floor_divide: not supported for {dt.name} operands, got ({shown})")
    with no_grad():
        x, y = _tensor_of(input, dt), _tensor_of(other, dt)
        if dt.category == T.INT:
            return _int_floor_divide(x, y).to(dt)
        return _float_floor_divide(x, y)


def _int_floor_divide(x: Tensor, y: Tensor) -> Tensor:
    """Exact floor division of integers, as int64, built from remainder and float64 ops.

    ``n = x - remainder(x, y)`` is an exact multiple of y, and q = n / y.  float64 gets q
    right when |q| < 2**51; beyond that its error is at most ~2**12, and ``n - q0 * y``
    (exact in wrapping int64 arithmetic) is that error times y, which a second float64
    division recovers exactly.
    """
    try:
        r = _ops.remainder(x, y)   # raises ZeroDivisionError eagerly for a zero divisor
    except ZeroDivisionError:
        raise ZeroDivisionError("floor_divide: integer division by zero") from None
    x, y, r = (_ops.convert(t, T.int64) for t in (x, y, r))
    n = _ops.sub(x, r)
    yf = _ops.convert(y, T.float64)

    def rounded_quotient(a):
        return _ops.convert(_ops.round(_ops.div(_ops.convert(a, T.float64), yf)), T.int64)

    q = rounded_quotient(n)
    return _ops.add(q, rounded_quotient(_ops.sub(n, _ops.mul(q, y))))


def _float_floor_divide(x: Tensor, y: Tensor) -> Tensor:
    """torch's floating floor division (ATen div_floor_floating), step for step."""
    mod = _ops.fmod(x, y)
    div = _ops.div(_ops.sub(x, mod), y)
    # fmod has the dividend's sign: where it differs from the divisor's, one step lower
    lower = _ops.logical_and(_ops.ne(mod, 0), _ops.ne(_ops.lt(y, 0), _ops.lt(mod, 0)))
    div = _ops.where(lower, _ops.sub(div, 1), div)
    floor = _ops.floor(div)
    floor = _ops.where(_ops.gt(_ops.sub(div, floor), 0.5), _ops.add(floor, 1), floor)
    quotient = _ops.div(x, y)
    # div == 0: a zero with the sign of x / y (copysign(0, x / y), finite here)
    out = _ops.where(_ops.eq(div, 0), _ops.mul(quotient, 0), floor)
    return _ops.where(_ops.eq(y, 0), quotient, out)


def _check_close_args(name: str, input, other, rtol, atol) -> None:
    for arg, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be a Tensor, got "
                            f"{type(v).__name__}")
    if input.dtype is not other.dtype:
        raise DTypeError(f"{name}: the two tensors must have one dtype, got {input._type} and "
                         f"{other._type} (torch: '{input.dtype.name} did not match "
                         f"{other.dtype.name}')")
    for arg, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise ValueError(f"{name}: {arg} must be greater than or equal to zero, got {v}")


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (torch.isclose).

    Equal values are always close (infinities of one sign too); NaNs are close to each
    other only with `equal_nan`.  Integers compare with the tolerances computed in
    float32, bools as float32, complex by the modulus of the difference.

    Args:
        input, other: tensors of one dtype whose shapes broadcast.
    Returns:
        A bool tensor of the broadcast shape (no gradient).
    Raises:
        TypeError: an operand that is not a tensor; DTypeError: two dtypes.
        ValueError: a negative rtol or atol.  ShapeError: shapes that do not broadcast.
    """
    _check_close_args("isclose", input, other, rtol, atol)
    with no_grad():
        a, b = input.detach(), other.detach()
        close = _ops.eq(a, b)
        if equal_nan and a.dtype.is_differentiable:
            close = _ops.logical_or(close, _ops.logical_and(_ops.isnan(a), _ops.isnan(b)))
        if rtol == 0 and atol == 0:
            return close
        if a.dtype is T.bool_:
            a, b = a.to(T.DEFAULT_FLOAT), b.to(T.DEFAULT_FLOAT)
        allowed = _ops.add(_ops.abs(_ops.mul(b, rtol)), atol)
        actual = _ops.abs(_ops.sub(a, b))
        return _ops.logical_or(close, _ops.logical_and(_ops.isfinite(actual),
                                                       _ops.le(actual, allowed)))


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    """Whether every element of `input` is close to `other` (torch.allclose): `isclose`
    everywhere, shapes broadcast.  Returns a Python bool, so inside `tg.compile` it needs
    concrete values (a TraceError / graph break, like ``.item()``).

    Raises: as `isclose`.
    """
    _check_close_args("allclose", input, other, rtol, atol)
    return bool(_ops.all(isclose(input, other, rtol, atol, equal_nan)))


def equal(input: Tensor, other: Tensor) -> bool:
    """True when the two tensors have one shape and equal elements (torch.equal).

    Different shapes give False (no broadcasting); different dtypes compare the values
    after promotion (``equal(tensor([1, 2]), tensor([1., 2.]))`` is True, as torch); a NaN
    is never equal.  A Python bool: inside `tg.compile` it needs concrete values.

    Raises:
        TypeError: an operand that is not a tensor.
    """
    for arg, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"equal(): argument '{arg}' must be a Tensor, got "
                            f"{type(v).__name__}")
    if input.shape != other.shape:
        return False
    with no_grad():
        return bool(_ops.all(_ops.eq(input.detach(), other.detach())))
