"""torch.nn.init: fill a tensor in place (under no_grad) from the global generator.

The formulas (fans, gains, bounds) are torch's; the numbers are drawn from tracegrad's
Threefry stream (`tg.manual_seed`), so the same seed gives other values than torch.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _creation
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "sigmoid", "conv_transpose")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for `nonlinearity` (torch.nn.init.calculate_gain)."""
    if nonlinearity in _LINEAR:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"calculate_gain: negative_slope {slope!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """fan_in = size(1) * receptive field, fan_out = size(0) * receptive field (torch)."""
    if tensor.ndim < 2:
        raise ValueError("fan in and fan out can not be computed for a tensor with fewer than "
                         f"2 dimensions, got shape {list(tensor.shape)}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(tensor: Tensor, value: Tensor) -> Tensor:
    with no_grad():
        return tensor.copy_(value)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Values uniform in [a, b)."""
    return _fill(tensor, _creation.rand(tensor.shape, dtype=tensor.dtype) * (b - a) + a)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Values from N(mean, std^2)."""
    return _fill(tensor, _creation.randn(tensor.shape, dtype=tensor.dtype) * std + mean)


def constant_(tensor: Tensor, val: float) -> Tensor:
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., 2015)."""
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    bound = math.sqrt(3.0) * (calculate_gain(nonlinearity, a) / math.sqrt(fan))
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    fan = _fan(tensor, mode)
    if fan == 0:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """N(mean, std^2) truncated to [a, b] (torch.nn.init.trunc_normal_, torch's inverse-CDF
    method: uniform in [cdf(a), cdf(b)], then erfinv, then clamped to [a, b])."""
    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    u = _creation.rand(tensor.shape, dtype=tensor.dtype) * (2 * hi - 2 * lo) + (2 * lo - 1)
    return _fill(tensor, (u.erfinv() * (std * math.sqrt(2.0)) + mean).clamp(a, b))


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (torch.nn.init.eye_; rectangular allowed).

    Raises:
        ValueError: `tensor` is not 2-D (torch's message).
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, Tensor(np.eye(*tensor.shape, dtype=tensor.dtype.numpy)))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """The Dirac delta of a 3/4/5-D conv weight: the identity map on the channels, per group
    (torch.nn.init.dirac_).

    Raises:
        ValueError: another rank, or out channels not divisible by `groups` (torch's message).
    """
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_ch, in_ch = tensor.shape[0], tensor.shape[1]
    if out_ch % groups:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = out_ch // groups
    value = np.zeros(tensor.shape, dtype=tensor.dtype.numpy)
    center = tuple(s // 2 for s in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, in_ch)):
            value[(g * per_group + d, d) + center] = 1
    return _fill(tensor, Tensor(value))


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR decomposition of a normal draw, signs fixed by
    R's diagonal, times `gain` (torch.nn.init.orthogonal_; dims after the first flattened).

    Raises:
        ValueError: fewer than 2 dims (torch's message).
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = np.asarray(_creation.randn(rows, cols, dtype=tensor.dtype).numpy(), np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    value = Tensor((q * gain).reshape(tensor.shape).astype(tensor.dtype.numpy))
    return _fill(tensor, value)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std^2) with ``ceil(sparsity * rows)`` entries of each column zeroed at random
    (torch.nn.init.sparse_).

    Raises:
        ValueError: `tensor` is not 2-D (torch's message).
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    zeros = int(math.ceil(sparsity * rows))
    value = np.array(_creation.randn(rows, cols, dtype=tensor.dtype).numpy()) * std
    for c in range(cols):
        value[_creation.randperm(rows).numpy()[:zeros], c] = 0
    return _fill(tensor, Tensor(value.astype(tensor.dtype.numpy)))


__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_",
           "kaiming_uniform_", "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_",
           "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]


def reset_layer_(weight: Tensor, bias: Tensor | None) -> None:
    """torch's default init of Linear and Conv layers: kaiming_uniform(a=sqrt(5)) weight,
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        if fan_in != 0:
            bound = 1 / math.sqrt(fan_in)
            uniform_(bias, -bound, bound)
