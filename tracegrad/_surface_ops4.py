"""The torch surface of issues 14 and 16's fourth batch that is not a plain registry op:
``index_put`` in torch's form (a tuple of index tensors, `accumulate`), ``float_power`` with a
Python-number base and ``float_power_``'s dtype rule, and ``Tensor.fill_diagonal_``.

The registry composites of this batch (ir/ops/math_more.py, ir/ops/index_more.py) are
``tg.X`` and ``Tensor.X`` through the generated surface; their in-place forms (``deg2rad_``,
``ldexp_``, ``index_copy_``, ``put_`` ...) come from _inplace_math.py's table.  Every
in-place form here goes through `Tensor._inplace_apply`, so the leaf, view and version-counter
rules are those of ``add_``.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import with_location
from tracegrad.ir.ops.index_more import torch_dtype_name
from tracegrad.ir.ops.math_more import float_power_dtype
from tracegrad.ir.scalars import check_scalar

from . import _indexing, _ops, _state
from .tensor import Tensor, attach


def _fail(e: Exception) -> Exception:
    return with_location(e, _state.user_location())


@_state.located
def index_put(input, indices, values, accumulate: bool = False):  # noqa: A002
    """`input` with ``input[indices] = values`` applied out of place (torch.index_put):
    `indices` a tuple of index tensors (int64/int32, or bool masks) read as advanced
    indexing, `values` broadcast to the indexed shape; with `accumulate` repeated indices add
    up (``input[indices] += values`` would keep one write).

    Raises:
        TypeError: `indices` a single tensor rather than a tuple or list of them (torch's
            message), or another argument of the wrong type.
        RuntimeError: values of another dtype (torch's message); indexing's errors
        (IndexError for out-of-range or too many indices, shape mismatches).
    """
    if not isinstance(input, Tensor):
        raise _fail(TypeError(f"index_put(): argument 'input' must be Tensor, not "
                              f"{type(input).__name__}"))
    if not isinstance(indices, (tuple, list)) or not all(
            isinstance(i, Tensor) or i is None for i in indices):
        raise _fail(TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                              f"{type(indices).__name__}"))
    if not isinstance(values, Tensor):
        raise _fail(TypeError(f"index_put(): argument 'values' must be Tensor, not "
                              f"{type(values).__name__}"))
    if values.dtype is not input.dtype:
        raise _fail(RuntimeError(
            f"index_put: Index put requires the source and destination dtypes match, got "
            f"{torch_dtype_name(input.dtype)} for the destination and "
            f"{torch_dtype_name(values.dtype)} for the source."))
    for i in indices:
        if i is not None and i.dtype.category not in (T.INT, T.BOOL):
            raise _fail(IndexError(f"index_put: tensors used as indices must be long, int, "
                                   f"byte or bool tensors, got {i._type}"))
    key = tuple(slice(None) if i is None else i for i in indices)
    return _indexing.setitem_value(input, key, values, bool(accumulate))


_generated_float_power = _ops.float_power


@_state.located
def float_power(input, exponent):  # noqa: A002
    """``input ** exponent`` in float64 (complex128 when an operand is complex), as
    torch.float_power; `input` or `exponent` may be a Python number (not both)."""
    if not isinstance(input, Tensor):
        if isinstance(input, bool) or not isinstance(input, (int, float, complex)):
            raise _fail(TypeError(f"float_power(): argument 'input' must be a tensor or a "
                                  f"number, not {type(input).__name__}"))
        if not isinstance(exponent, Tensor):
            raise _fail(TypeError("float_power(): expected a tensor as input or exponent, got "
                                  f"{type(input).__name__} and {type(exponent).__name__}"))
        dtype = float_power_dtype(exponent.dtype, T.complex128 if isinstance(input, complex)
                                  else T.float64)
        input = Tensor(np.asarray(input, dtype.numpy))
    return _generated_float_power(input, exponent)


def _diagonal_mask(x: Tensor, wrap: bool) -> np.ndarray:
    """torch.fill_diagonal_'s positions: x[i, i, ..., i]; for a tall matrix with `wrap` the
    diagonal starts again every ncols + 1 rows."""
    shape = x.shape
    if len(shape) < 2:
        raise _fail(RuntimeError(f"fill_diagonal_: dimensions must larger than 1, got "
                                 f"{x._type}"))
    if len(shape) > 2 and len(set(shape)) != 1:
        raise _fail(RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal "
                                 f"length, got {x._type}"))
    numel = int(np.prod(shape))
    if len(shape) == 2:
        n, m = shape
        step = m + 1
        end = numel if wrap or n <= m else m * m
    else:
        step = sum(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
        end = numel
    mask = np.zeros(numel, bool)
    mask[0:end:step] = True
    return mask.reshape(shape)


@attach
class _Surface4Methods:
    def index_put(self, indices, values, accumulate=False):
        return index_put(self, indices, values, accumulate)

    def index_put_(self, indices, values, accumulate=False):
        return self._inplace_apply("index_put_",
                                   lambda: index_put(self, indices, values, accumulate))

    def float_power_(self, exponent):
        """In-place float_power: this tensor must already have the result dtype (float64, or
        complex128 with a complex operand), as torch."""
        other = exponent.dtype if isinstance(exponent, Tensor) else (
            T.complex128 if isinstance(exponent, complex) else T.float64)
        want = float_power_dtype(self.dtype, other)
        if self.dtype is not want:
            raise _fail(RuntimeError(
                f"float_power_: the base given to float_power_ has dtype "
                f"{torch_dtype_name(self.dtype)} but the operation's result requires dtype "
                f"{torch_dtype_name(want)}"))
        return self._inplace_apply("float_power_", lambda: float_power(self, exponent))

    def fill_diagonal_(self, fill_value, wrap=False):
        """Fill the main diagonal with `fill_value` in place (torch.Tensor.fill_diagonal_): a
        2-D tensor, or one whose dims are all equal; `wrap` restarts the diagonal of a tall
        matrix after ncols + 1 rows.  The filled entries get no gradient."""
        mask = _diagonal_mask(self, wrap)
        if isinstance(fill_value, Tensor):
            fill_value = fill_value.item()
        if not isinstance(fill_value, (bool, int, float, complex)):
            raise _fail(TypeError(f"fill_diagonal_(): argument 'fill_value' must be a number, "
                                  f"not {type(fill_value).__name__}"))
        try:
            value = check_scalar("fill_diagonal_", fill_value, self.dtype)
        except (RuntimeError, OverflowError) as e:
            raise _fail(e) from None
        return self._inplace_apply("fill_diagonal_", lambda: _ops.where(
            Tensor(mask), _ops.full((), value, self.dtype), self))


def _inplace_function(name: str):
    def fn(input, *args, **kwargs):  # noqa: A002
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: `input.{name}(...)`, the in-place method."
    return fn


# torch's top-level in-place spellings of this batch
deg2rad_, rad2deg_, ldexp_, index_put_ = (_inplace_function(n) for n in
                                          ("deg2rad_", "rad2deg_", "ldexp_", "index_put_"))

__all__ = ["deg2rad_", "float_power", "index_put", "index_put_", "ldexp_", "rad2deg_"]
