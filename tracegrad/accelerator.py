"""torch.accelerator's queries for a library whose tensors live on the host.

Scripts written for torch 2.6+ pick their device with
``tg.accelerator.current_accelerator() if tg.accelerator.is_available() else "cpu"``;
the answers here come from jax's GPU backend: without one they send the script down the
CPU branch; with one, its "cuda" tensors hold jax arrays there (tracegrad/_device.py).
"""
from __future__ import annotations


def is_available() -> bool:
    """True where jax has a GPU for ``device="cuda"`` tensors (torch.accelerator.is_available;
    asking imports jax)."""
    return device_count() > 0


def current_accelerator(check_available: bool = False):
    """``device("cuda")`` where jax has a GPU, else None (torch's answer without one)."""
    from ._device import device   # noqa: PLC0415
    return device("cuda") if is_available() else None


def device_count() -> int:
    """The number of jax GPUs, 0 without one (torch.accelerator.device_count)."""
    from .cuda import device_count as gpus   # noqa: PLC0415
    return gpus()


def current_device_index() -> int:
    """-1, as torch without an accelerator."""
    return -1


def synchronize(device=None) -> None:
    """Nothing to wait for: every eager op has finished when it returns."""
