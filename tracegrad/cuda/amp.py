"""torch.cuda.amp's deprecated aliases: `GradScaler` and `autocast`.

As torch 2.13 on a machine without CUDA (tracegrad never has CUDA tensors), each warns
that it is deprecated (FutureWarning, torch's text) and is disabled with torch's warning:
the scaler does nothing and the autocast region runs in full precision, so a GPU training
script runs unchanged on the CPU.  For real loss scaling on the CPU use
``tg.amp.GradScaler("cpu")``; for mixed precision ``tg.autocast("cpu", dtype=...)``.
"""
from __future__ import annotations

import warnings

from .. import amp as _amp
from ..ir.types import float16

__all__ = ["GradScaler", "autocast"]


class GradScaler(_amp.GradScaler):
    """torch.cuda.amp.GradScaler: ``tg.amp.GradScaler("cuda", ...)`` (disabled here)."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


class autocast(_amp.autocast):
    """torch.cuda.amp.autocast: ``tg.autocast("cuda", ...)``, disabled as torch's is
    without CUDA."""

    def __init__(self, enabled: bool = True, dtype=float16, cache_enabled: bool = True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        if enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                          "autocast.", UserWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=False, cache_enabled=cache_enabled)
