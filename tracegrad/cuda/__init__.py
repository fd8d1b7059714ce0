"""torch.cuda's queries, answered from jax's GPU backend.

Ported scripts ask ``tg.cuda.is_available()`` to pick a device: True where jax has a GPU,
whose ``device="cuda"`` tensors hold jax arrays (backends/device_arrays.py), else False,
so such a script takes its CPU branch.  Asking imports jax.  See `tracegrad._device`.
"""
from __future__ import annotations

from . import amp  # noqa: F401  (tg.cuda.amp.GradScaler / autocast, torch's deprecated aliases)


def is_available() -> bool:
    """True where jax has a GPU for ``device="cuda"`` tensors (torch.cuda.is_available)."""
    return device_count() > 0


def device_count() -> int:
    """The number of jax GPU devices, 0 without one (torch.cuda.device_count)."""
    from ..backends.device_arrays import gpu_count   # noqa: PLC0415  (imports jax)
    return gpu_count()


def manual_seed(seed: int) -> None:
    """Does nothing, as torch.cuda.manual_seed does without CUDA; seed the tracegrad
    generator with `tg.manual_seed`."""


def manual_seed_all(seed: int) -> None:
    """Does nothing, as torch.cuda.manual_seed_all does without CUDA."""
