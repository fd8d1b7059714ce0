"""Whole-tensor comparisons: isclose (elementwise, a bool tensor), allclose and equal (a
Python bool).  None has a gradient: the operands pass through stop_gradient first.

allclose and equal return Python bools, so inside `tg.compile` they need concrete values
(a TraceError / graph break, like ``.item()``), and they cannot run inside an IR Builder.
"""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError
from ..registry import COMPLEX, defcomposite


def _need_tensors(ops, name: str, input, other) -> None:
    for arg, v in (("input", input), ("other", other)):
        if not ops.is_operand(v):
            raise TypeError(f"{name}(): argument '{arg}' must be a Tensor, got "
                            f"{type(v).__name__}")


def _check_close_args(ops, name: str, input, other, rtol, atol) -> None:
    _need_tensors(ops, name, input, other)
    if input.dtype is not other.dtype:
        raise DTypeError(f"{name}: the two tensors must have one dtype, got "
                         f"{ops.type_of(input)} and {ops.type_of(other)} (torch: "
                         f"'{input.dtype.name} did not match {other.dtype.name}')")
    for arg, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise ValueError(f"{name}: {arg} must be greater than or equal to zero, got {v}")


def _no_grad(ops, x):
    """`x` without gradient (an eager tensor that has none is used as it is)."""
    return ops.stop_gradient(x) if getattr(x, "requires_grad", True) else x


def _close(ops, a, b, rtol, atol, equal_nan):
    """isclose of two operands already checked and without gradient."""
    close = ops.eq(a, b)
    if equal_nan and a.dtype.is_differentiable:
        close = ops.logical_or(close, ops.logical_and(ops.isnan(a), ops.isnan(b)))
    if rtol == 0 and atol == 0:
        return close
    if a.dtype is T.bool_:
        a, b = ops.convert(a, T.DEFAULT_FLOAT), ops.convert(b, T.DEFAULT_FLOAT)
    allowed = ops.add(ops.abs(ops.mul(b, rtol)), atol)
    actual = ops.abs(ops.sub(a, b))
    return ops.logical_or(close, ops.logical_and(ops.isfinite(actual), ops.le(actual, allowed)))


def _isclose(ops, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
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
    _check_close_args(ops, "isclose", input, other, rtol, atol)
    return _close(ops, _no_grad(ops, input), _no_grad(ops, other), rtol, atol, equal_nan)


def _allclose(ops, input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of `input` is close to `other` (torch.allclose): `isclose`
    everywhere, shapes broadcast; a Python bool.

    Raises: as `isclose`.
    """
    _check_close_args(ops, "allclose", input, other, rtol, atol)
    a, b = _no_grad(ops, input), _no_grad(ops, other)
    return bool(ops.all(_close(ops, a, b, rtol, atol, equal_nan)))


def _equal(ops, input, other):
    """True when the two tensors have one shape and equal elements (torch.equal).

    Different shapes give False (no broadcasting); different dtypes compare the values
    after promotion (``equal(tensor([1, 2]), tensor([1., 2.]))`` is True, as torch); a NaN
    is never equal.  A Python bool.

    Raises:
        TypeError: an operand that is not a tensor.
    """
    _need_tensors(ops, "equal", input, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(ops.all(ops.eq(_no_grad(ops, input), _no_grad(ops, other))))


_CLOSE = "input: Tensor, other: Tensor, rtol=1e-05, atol=1e-08, equal_nan=False"
defcomposite("isclose", _CLOSE, _isclose, flags=COMPLEX, ref="torch.isclose")
defcomposite("allclose", _CLOSE, _allclose, flags=COMPLEX, ref="torch.allclose (a Python bool)")
defcomposite("equal", "input: Tensor, other: Tensor", _equal, flags=COMPLEX,
             ref="torch.equal (a Python bool)")
