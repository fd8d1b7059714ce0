"""torch's ``out=`` argument: a function's result written into a tensor the caller gave.

Follows torch 2.13's rules (ATen's ``resize_output`` and the out-variant checks):

- the result's dtype must be castable to ``out``'s (no float into an integer tensor,
  no complex into a real one, nothing but bool into bool): torch's RuntimeError
  (`check_cast`, the rule in-place ops follow too: tracegrad/_inplace.py);
- an ``out`` of another shape is resized, with torch's deprecation warning when it had
  elements (an empty ``out`` is resized silently); a view cannot be resized here;
- ``out=`` does not record a gradient: with grad mode on, an input or ``out`` that
  requires grad is torch's RuntimeError; under ``no_grad`` the write is plain;
- ``out`` is written in place (its version counter moves, views of it see the values)
  and returned; an op with several results takes a tuple of tensors, one per result.
"""
from __future__ import annotations

import warnings

from . import _state
from ._legacy import TYPE_NAMES
from .tensor import Tensor

_RESIZED = ("An output with one or more elements was resized since it had shape {old}, which "
            "does not match the required output shape {new}. This behavior is deprecated, and "
            "in a future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0).")


def write(name: str, result, out):
    """Write `result` (a tensor or tuple of tensors from op `name`) into `out`; return `out`."""
    if isinstance(result, tuple):
        if (not isinstance(out, (tuple, list)) or len(out) != len(result)
                or not all(isinstance(o, Tensor) for o in out)):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors, "
                            f"not {type(out).__name__}")
        written = [_write_one(name, r, o) for r, o in zip(result, out)]
        return type(result)(*written) if hasattr(result, "_fields") else tuple(written)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    return _write_one(name, result, out)


def _write_one(name: str, result: Tensor, out: Tensor) -> Tensor:
    if _state.local.grad_enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    check_cast(result.dtype, out.dtype)
    if tuple(result.shape) == tuple(out.shape):
        out.copy_(result)
        return out
    if out._base is not None:
        raise RuntimeError(f"{name}(): out= is a view of shape {list(out.shape)} and the result "
                           f"has shape {list(result.shape)}; tracegrad does not resize views "
                           "(pass a tensor of the result's shape, or an empty one)")
    if out.numel() > 0:
        warnings.warn(_RESIZED.format(old=list(out.shape), new=list(result.shape)),
                      UserWarning, stacklevel=3)
    out._assign(result.detach().to(out.dtype), track=False)
    return out


def check_cast(result, target) -> None:
    """torch's one rule (``canCast``) for writing a result of dtype `result` into a tensor of
    dtype `target`, for ``out=`` and in-place ops alike: no complex into a real dtype, no
    float into an integer one, nothing but bool into bool (a narrower dtype of the same kind
    is fine: float64 into float32, int64 into int32).

    Raises:
        RuntimeError: torch 2.13's "result type Float can't be cast to the desired output
            type Long".
    """
    if result.category > target.category:
        raise RuntimeError(f"result type {_torch_name(result)} can't be cast to the desired "
                           f"output type {_torch_name(target)}")


def _torch_name(dtype) -> str:
    """torch's ScalarType name in its cast message (Float, Long, ComplexFloat ...)."""
    return TYPE_NAMES[dtype].removesuffix("Tensor") if dtype in TYPE_NAMES else dtype.name
