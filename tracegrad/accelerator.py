"""torch.accelerator's queries for a library whose tensors live on the host.

Scripts written for torch 2.6+ pick their device with
``tg.accelerator.current_accelerator() if tg.accelerator.is_available() else "cpu"``;
the answers here send them down the CPU branch (compiled programs may still run on an
accelerator through jax; tensors stay on the host, see tracegrad/_device.py).
"""
from __future__ import annotations


def is_available() -> bool:
    """False: no tracegrad tensor lives on an accelerator (torch.accelerator.is_available)."""
    return False


def current_accelerator(check_available: bool = False):
    """None, torch's answer on a machine without an accelerator."""
    return None


def device_count() -> int:
    """0 (torch.accelerator.device_count without an accelerator)."""
    return 0


def current_device_index() -> int:
    """-1, as torch without an accelerator."""
    return -1


def synchronize(device=None) -> None:
    """Nothing to wait for: every eager op has finished when it returns."""
