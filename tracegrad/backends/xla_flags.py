"""XLA CPU options tracegrad sets before jax starts its backends (``import tracegrad``).

Why: jaxlib 0.10's CPU backend hands convolutions to YNNPACK by default, and a YNNPACK
convolution whose result leaves its fusion (every conv of a training step: the forward's
output is saved for backward, the gradients are program outputs) ran on one thread.
Measured on the 2-core development machine (quiet, medians of 9; docs/performance.md,
"Conv nets and eager steps"): the MNIST CNN's conv 32->64 (64x32x26x26,
NHWC) took 42-55 ms of wall time alone against 12 ms on XLA's own (Eigen) convolution,
which uses every core; its gradients (NCHW, CPU ms) 127 against 80; the eager MNIST step
went from 382 to 234 ms.  So YNNPACK keeps its other fusions (dots) and convolutions go
back to Eigen: ``--xla_cpu_experimental_ynn_fusion_type=-individual_convolution``.

The flag is only added for the jaxlib versions it was measured on (`MEASURED`): XLA
aborts the process on a flag value it does not know, and newer versions may thread
YNNPACK's convolutions.  It is not added when the user's ``XLA_FLAGS`` already sets that
option, when ``TRACEGRAD_XLA_FLAGS=0``, or when jax's backends have started (XLA reads
``XLA_FLAGS`` once, when the first backend starts; changing it later does nothing).
"""
from __future__ import annotations

import os
import sys

YNN_CONV = "--xla_cpu_experimental_ynn_fusion_type=-individual_convolution"
MEASURED = ("0.10.",)   # jaxlib version prefixes the flag was measured on
ENV = "TRACEGRAD_XLA_FLAGS"   # "0": leave XLA_FLAGS as the user set it


def _jaxlib_version() -> str | None:
    try:
        from importlib.metadata import version   # no import of jaxlib itself (start-up time)
        return version("jaxlib")
    except Exception:   # noqa: BLE001 - not installed / unknown: leave the flags alone
        return None


def _backends_started() -> bool:
    if "jax" not in sys.modules:
        return False
    try:
        from jax._src import xla_bridge   # only when the user imported jax already
        return bool(xla_bridge._backends)
    except Exception:   # noqa: BLE001 - a jax without this attribute: assume started
        return True


def flags_to_add(environ=os.environ, jaxlib_version: str | None = None) -> list[str]:
    """The flags `apply` would add to ``XLA_FLAGS`` (empty when it adds none)."""
    if environ.get(ENV, "1") == "0":
        return []
    version = jaxlib_version if jaxlib_version is not None else _jaxlib_version()
    if version is None or not version.startswith(MEASURED):
        return []
    if "xla_cpu_experimental_ynn_fusion_type" in environ.get("XLA_FLAGS", ""):
        return []   # the user's choice wins
    return [YNN_CONV]


def apply() -> list[str]:
    """Add `flags_to_add` to ``XLA_FLAGS`` unless jax's backends have started; the flags
    added."""
    add = flags_to_add()
    if not add or _backends_started():
        return []
    os.environ["XLA_FLAGS"] = " ".join(filter(None, [os.environ.get("XLA_FLAGS", "")] + add))
    return add
