"""Checks shared by the torch.nn.functional composites (losses.py, normalization.py, nn.py):
operands are tensors of the right dtype, legacy reduction arguments, broadcasting."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError, ShapeError
from .conv import _fail, _ttype


# ---- shared checks ----------------------------------------------------------------------------
def _tensor(ops, name: str, x, arg: str, floating: bool = False):
    if not ops.is_operand(x):
        raise _fail(ops, TypeError(f"{name}(): argument '{arg}' must be a tensor, got "
                                   f"{type(x).__name__}"))
    if floating and not x.dtype.is_floating_point:
        raise _fail(ops, DTypeError(f"{name}: expected a floating-point {arg}, got {_ttype(x)}"))
    return x


def _same_dtype(ops, name: str, x, other, arg: str):
    if other is not None and other.dtype is not x.dtype:
        raise _fail(ops, DTypeError(f"{name}: {arg} {_ttype(other)} must have the dtype of the "
                                    f"input {_ttype(x)} (torch does not promote it)"))


def _reduction(ops, name: str, reduction: str, size_average=None, reduce=None,
               extra: tuple = ()) -> str:
    """torch's reduction argument; the legacy `size_average`/`reduce` pair overrides it."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduction = "none" if reduce is False else ("mean" if size_average else "sum")
    if reduction not in ("none", "mean", "sum") + extra:
        raise _fail(ops, ValueError(f"{name}: {reduction} is not a valid value for reduction"))
    return reduction


def _reduce(ops, loss, reduction: str):
    if reduction == "none":
        return loss
    return ops.sum(loss) if reduction == "sum" else ops.mean(loss)


def _bcast(ops, name: str, x, y):
    if T.broadcast_shapes(tuple(x.shape), tuple(y.shape)) is None:
        raise _fail(ops, ShapeError(f"{name}: input {_ttype(x)} and target {_ttype(y)} do not "
                                    "broadcast"))


def _channels_view(x, c_dim: int, n: int):
    """Shape putting a size-`n` vector on dim `c_dim` of `x`, 1 elsewhere (broadcast)."""
    return tuple(n if i == c_dim else 1 for i in range(len(x.shape)))
