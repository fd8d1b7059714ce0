"""torch.cuda's queries, answered for a library whose tensors live on the CPU.

Ported scripts ask ``tg.cuda.is_available()`` to pick a device; the answer is always
False (compiled programs run through jax, but tensors stay on the host), so such a
script takes its CPU branch.  See `tracegrad._device`.
"""
from __future__ import annotations

from . import amp  # noqa: F401  (tg.cuda.amp.GradScaler / autocast, torch's deprecated aliases)


def is_available() -> bool:
    """False: no tracegrad tensor can live on a CUDA device (torch.cuda.is_available)."""
    return False


def device_count() -> int:
    """0 (torch.cuda.device_count without a usable CUDA device)."""
    return 0


def manual_seed(seed: int) -> None:
    """Does nothing, as torch.cuda.manual_seed does without CUDA; seed the tracegrad
    generator with `tg.manual_seed`."""


def manual_seed_all(seed: int) -> None:
    """Does nothing, as torch.cuda.manual_seed_all does without CUDA."""
