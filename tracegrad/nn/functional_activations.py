"""More of torch.nn.functional's activations, each a composite of registry ops (so its
gradient, tracing and jax lowering come from those ops): selu, celu, glu, hardsigmoid,
hardswish, softsign, softmin, tanhshrink, softshrink, hardshrink, threshold, prelu.

Formulas as torch's (torch/nn/functional.py and ATen's kernels): each follows the
function of the same name.
"""
from __future__ import annotations


from tracegrad.ir.errors import named, with_location

from .. import _ops, _state
from ..tensor import Tensor

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _checked(name: str, input) -> Tensor:
    if not isinstance(input, Tensor):
        raise with_location(TypeError(f"{name}(): argument 'input' must be Tensor, not "
                                      f"{type(input).__name__}"), _state.user_location(2))
    return input


def selu(input, inplace: bool = False) -> Tensor:
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), torch's alpha and scale
    (Klambauer et al., 2017; torch.nn.functional.selu)."""
    x = _checked("selu", input)
    return _SELU_SCALE * _ops.where(x > 0, x, _SELU_ALPHA * _ops.expm1(x))


def celu(input, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (torch.nn.functional.celu)."""
    x = _checked("celu", input)
    return _ops.where(x > 0, x, alpha * _ops.expm1(x / alpha))


def glu(input, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the halves of `input` along `dim` (torch.nn.functional.glu).

    Raises:
        RuntimeError: an odd size along `dim` (torch's message).
    """
    x = _checked("glu", input)
    d = dim % x.ndim if x.ndim else 0
    if x.ndim == 0 or x.shape[d] % 2:
        raise with_location(named(RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size "
            f"{x.shape[d] if x.ndim else 1}"), "glu"), _state.user_location())
    a, b = x.chunk(2, dim)
    return a * _ops.sigmoid(b)


def hardsigmoid(input, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6 (torch.nn.functional.hardsigmoid)."""
    return _ops.clamp(_checked("hardsigmoid", input) + 3.0, 0.0, 6.0) / 6.0


def hardswish(input, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6 (Howard et al., 2019; torch.nn.functional.hardswish)."""
    x = _checked("hardswish", input)
    return x * (_ops.clamp(x + 3.0, 0.0, 6.0) / 6.0)


def softsign(input) -> Tensor:
    """x / (1 + |x|) (torch.nn.functional.softsign)."""
    x = _checked("softsign", input)
    return x / (1.0 + x.abs())


def softmin(input, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along `dim` (torch.nn.functional.softmin)."""
    x = _checked("softmin", input)
    return _ops.softmax(-x, dim, dtype=dtype) if dtype is not None else _ops.softmax(-x, dim)


def tanhshrink(input) -> Tensor:
    """x - tanh(x) (torch.nn.functional.tanhshrink)."""
    x = _checked("tanhshrink", input)
    return x - _ops.tanh(x)


def softshrink(input, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0 (torch's softshrink)."""
    x = _checked("softshrink", input)
    return _ops.where(x > lambd, x - lambd, _ops.where(x < -lambd, x + lambd, x * 0.0))


def hardshrink(input, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0 (torch.nn.functional.hardshrink)."""
    x = _checked("hardshrink", input)
    return _ops.where(x.abs() > lambd, x, x * 0.0)


def threshold(input, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else `value` (torch.nn.functional.threshold)."""
    x = _checked("threshold", input)
    return _ops.where(x > threshold, x, x * 0.0 + value)


def prelu(input, weight) -> Tensor:
    """x where x > 0, else weight * x; `weight` (1,) or (C,) for channel dim 1
    (He et al., 2015; torch.nn.functional.prelu).

    Raises:
        RuntimeError: a weight with neither 1 nor C elements (torch's message).
    """
    x = _checked("prelu", input)
    n = weight.numel()
    channels = x.shape[1] if x.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise with_location(named(RuntimeError(
            f"Mismatch of parameter numbers and input channel size. Found parameter numbers "
            f"= {n} and channel size = {channels}."), "prelu"), _state.user_location())
    if x.ndim >= 2 and n > 1:
        w = weight.reshape((-1,) + (1,) * (x.ndim - 2))   # one slope per channel (dim 1)
    else:
        w = weight.reshape(())
    return _ops.where(x > 0, x, w * x)      # at 0 the gradient is the slope, as torch


__all__ = ["celu", "glu", "hardshrink", "hardsigmoid", "hardswish", "prelu", "selu",
           "softmin", "softshrink", "softsign", "tanhshrink", "threshold"]
