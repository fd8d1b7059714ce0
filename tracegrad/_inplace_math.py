"""torch's in-place math methods (``sqrt_``, ``addcmul_``, ``clamp_``, ``lt_``,
``transpose_`` ...) for every out-of-place op tracegrad has, plus torch's alias names
(``absolute``, ``arccos``, ``multiply``, ``swapaxes`` ... and their in-place forms).

Each in-place method runs its out-of-place op and takes the result in place through
`Tensor._inplace_apply` (_inplace.py): the same leaf / view / version rules as ``add_``;
a result of another dtype is cast to the tensor's (``lt_`` on a float tensor gives
0./1.), as torch.  The shape-changing ones (``transpose_``, ``t_``, ``squeeze_``,
``unsqueeze_``) rebind the tensor's value and are refused on views and on tensors that
have views (torch changes the view's metadata; values here are not strided).
"""
from __future__ import annotations

from . import _state
from .tensor import Tensor

# torch in-place methods whose out-of-place op is a Tensor method here (same name less "_")
_SAME_SHAPE = (
    "abs acos acosh addbmm addcdiv addcmul addmm addmv addr asin asinh atan2 atan atanh bitwise_and bitwise_not copysign "
    "bitwise_or bitwise_xor bitwise_left_shift bitwise_right_shift ceil clamp clamp_max clamp_min clip conj_physical cos cosh "
    "cumprod cumsum deg2rad digamma eq erf erfc erfinv exp2 exp expm1 floor floor_divide fmod frac "
    "ge gt heaviside hypot igamma index_copy index_fill igammac ldexp le lerp lgamma log10 log1p log2 log logical_and logical_not logical_or "
    "logical_xor logit lt masked_scatter nan_to_num ne neg nextafter pow put rad2deg reciprocal relu remainder renorm round rsqrt sgn "
    "baddbmm sigmoid sign sin sinc sinh sqrt square tan tanh tril triu trunc xlogy").split()
_SHAPE_CHANGING = ("squeeze", "unsqueeze", "t", "transpose")

# torch's alias names: alias -> the op it names
ALIASES = {"absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
           "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
           "divide": "div", "true_divide": "div", "multiply": "mul", "negative": "neg",
           "fix": "trunc", "greater": "gt", "greater_equal": "ge", "less": "lt",
           "less_equal": "le", "not_equal": "ne", "swapaxes": "transpose",
           "swapdims": "transpose", "subtract": "sub", "moveaxis": "movedim"}


def _inplace_method(op: str, name: str):
    def method(self, *args, **kwargs):
        return self._inplace_apply(name, lambda: getattr(self, op)(*args, **kwargs))
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"In-place `{op}` (torch.Tensor.{name}): the result replaces this tensor."
    return method


def _reshaping_method(op: str, name: str):
    def method(self, *args, **kwargs):
        # torch's in-place checks come first (check_inplace), before our refusal of views
        from ._views import check_leaf_write   # noqa: PLC0415 (_views imports the dispatcher)
        check_leaf_write(self, name, _grad_enabled())
        base = self._base
        if base is not None or any(r() is not None for r in self._views or ()):
            raise NotImplementedError(
                f"{name}: changing the shape in place of a view or of a tensor that has views "
                f"is not supported (tracegrad values are not strided); use "
                f"`x = x.{op}(...)` instead")
        result = getattr(self, op)(*args, **kwargs)
        self._assign(result)
        return self
    method.__name__ = name
    method.__qualname__ = f"Tensor.{name}"
    method.__doc__ = f"In-place `{op}` (torch.Tensor.{name}): this tensor takes the new shape."
    return method


def _grad_enabled() -> bool:
    return _state.local.grad_enabled


def install() -> None:
    """Add the methods above to `Tensor` where it does not spell them already."""
    for alias, op in ALIASES.items():
        if not hasattr(Tensor, alias) and hasattr(Tensor, op):
            setattr(Tensor, alias, getattr(Tensor, op))
    for op in _SAME_SHAPE:
        if hasattr(Tensor, op) and not hasattr(Tensor, op + "_"):
            setattr(Tensor, op + "_", _inplace_method(op, op + "_"))
    for op in _SHAPE_CHANGING:
        if not hasattr(Tensor, op + "_"):
            setattr(Tensor, op + "_", _reshaping_method(op, op + "_"))
    for alias, op in ALIASES.items():
        if not hasattr(Tensor, alias + "_") and hasattr(Tensor, op + "_"):
            setattr(Tensor, alias + "_", getattr(Tensor, op + "_"))
