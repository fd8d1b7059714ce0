"""Normalization layers: BatchNorm1d/2d, LayerNorm, GroupNorm, RMSNorm (torch.nn)."""
from __future__ import annotations

from tracegrad.ir import types as T

from ... import _creation
from ...tensor import Parameter, Tensor
from .. import functional as F
from .module import Module



def _affine(m: Module, shape, weight: bool, bias: bool, dtype) -> None:
    """The learnable scale (ones) and shift (zeros) of a norm layer, or None placeholders."""
    if weight:
        m.weight = Parameter(_creation.ones(shape, dtype=dtype))
    else:
        m.register_parameter("weight", None)
    if bias:
        m.bias = Parameter(_creation.zeros(shape, dtype=dtype))
    else:
        m.register_parameter("bias", None)

class _BatchNorm(Module):
    """Batch normalization over dim 1 (Ioffe & Szegedy, 2015), torch's module semantics.

    Training: normalize with batch statistics; with ``track_running_stats`` update the
    ``running_mean``/``running_var`` buffers (unbiased variance) with `momentum`, or with a
    cumulative average (factor 1 / num_batches_tracked) when ``momentum=None``.
    Eval: normalize with the running statistics (batch statistics when not tracked).
    """

    _ranks: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None, dtype=None,
                 *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self._has_bias = affine and bias
        if affine:
            self.weight = Parameter(_creation.ones(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if self._has_bias:
            self.bias = Parameter(_creation.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.zeros((), dtype=T.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in self._ranks:
            raise ValueError(f"{type(self).__name__}: expected "
                             f"{' or '.join(f'{r}D' for r in self._ranks)} input "
                             f"(got {input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:      # cumulative moving average, a tensor under tg.compile
                factor = 1.0 / self.num_batches_tracked.to(T.float64)
        use_batch = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self._has_bias}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) (torch.nn.BatchNorm1d)."""

    _ranks = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) (torch.nn.BatchNorm2d)."""

    _ranks = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) (torch.nn.BatchNorm3d)."""

    _ranks = (5,)


def _shape(normalized_shape) -> tuple[int, ...]:
    return (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)


class LayerNorm(Module):
    """Normalize over the trailing `normalized_shape` dims (Ba et al., 2016; torch.nn.LayerNorm)."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self._has_bias = elementwise_affine and bias
        _affine(self, self.normalized_shape, elementwise_affine, self._has_bias, dtype)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self._has_bias}")


class GroupNorm(Module):
    """Normalize channels in `num_groups` groups (Wu & He, 2018; torch.nn.GroupNorm)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device=None, dtype=None, *, bias: bool = True):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                      eps, affine)
        self._has_bias = affine and bias
        _affine(self, num_channels, affine, self._has_bias, dtype)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self._has_bias}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the trailing dims (Zhang & Sennrich, 2019)."""

    def __init__(self, normalized_shape, eps: float | None = None,
                 elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
