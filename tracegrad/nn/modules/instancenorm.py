"""Instance normalization layers: InstanceNorm1d/2d/3d (Ulyanov et al., 2016; torch.nn).

Each (sample, channel) plane is normalized by its own mean and biased variance; as torch,
this is batch norm over the input viewed as one sample of N*C channels (F.instance_norm).
"""
from __future__ import annotations

import warnings

from tracegrad.ir import types as T

from tracegrad.ir.errors import named, with_location

from ... import _creation, _state
from ...tensor import Tensor
from .. import functional as F
from .module import Module
from .norm import _affine


class _InstanceNorm(Module):
    """Shared by InstanceNorm1d/2d/3d: `_rank` is the batched input's rank (3, 4, 5); one
    less is an unbatched input, as torch.

    Args:
        affine: a learnable per-channel weight (ones) and bias (zeros); default False.
        track_running_stats: keep running mean/var (momentum as BatchNorm) and use them
            in eval mode; default False (batch statistics in eval too).
    Raises:
        ValueError: another input rank; C != num_features when affine (torch's words; a
            warning when not affine); one spatial element in training.
    """

    _rank = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        _affine(self, num_features, affine, affine, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _creation.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _creation.zeros((), dtype=T.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def _bad_input(self, message: str) -> ValueError:
        return with_location(named(ValueError(message), type(self).__name__),
                             _state.user_location())

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._rank - 1, self._rank):
            raise self._bad_input(f"expected {self._rank - 1}D or {self._rank}D input "
                                  f"(got {input.ndim}D input)")
        channel = input.ndim - self._rank + 1
        if input.shape[channel] != self.num_features:
            if self.affine:
                raise self._bad_input(f"expected input's size at dim={channel} to match "
                                      f"num_features ({self.num_features}), but got: "
                                      f"{input.shape[channel]}.")
            warnings.warn(f"input's size at dim={channel} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which "
                          "is not used because affine=False", stacklevel=2)
        if input.ndim == self._rank - 1:
            return self._normalize(input.unsqueeze(0)).squeeze(0)
        return self._normalize(input)

    def _normalize(self, input: Tensor) -> Tensor:
        if self.training and input[0, 0].numel() <= 1:
            raise self._bad_input(f"Expected more than 1 spatial element when training, got "
                                  f"input size {input.size()}")
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               0.0 if self.momentum is None else self.momentum, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance norm over (N, C, L) or (C, L) (torch.nn.InstanceNorm1d)."""

    _rank = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance norm over (N, C, H, W) or (C, H, W) (torch.nn.InstanceNorm2d)."""

    _rank = 4


class InstanceNorm3d(_InstanceNorm):
    """Instance norm over (N, C, D, H, W) or (C, D, H, W) (torch.nn.InstanceNorm3d)."""

    _rank = 5
