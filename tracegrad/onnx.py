"""torch.onnx is out of scope: every entry point raises NotImplementedError saying what to
use instead.

tracegrad's programs are IR graphs, not ONNX: ``tracegrad dump`` (and ``TRACEGRAD_DUMP``)
writes a model's forward and backward programs as IR text and HTML; for a deployable
artifact, compile the model with `tg.compile` and export the jax function it lowers to
with ``jax.export`` (StableHLO).
"""
from __future__ import annotations

_WHAT_INSTEAD = ("ONNX export is not supported by tracegrad. To inspect a model's programs "
                 "use `tracegrad dump` (or TRACEGRAD_DUMP=dir); for a deployable artifact "
                 "export the jax program of tg.compile(model) with jax.export (StableHLO).")


def export(*args, **kwargs):
    """torch.onnx.export: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(f"tracegrad.onnx.export: {_WHAT_INSTEAD}")


def dynamo_export(*args, **kwargs):
    """torch.onnx.dynamo_export: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(f"tracegrad.onnx.dynamo_export: {_WHAT_INSTEAD}")


def is_onnxrt_backend_supported() -> bool:
    return False


class _Refused(NotImplementedError, AttributeError):
    """Also an AttributeError, so that probes of the module (``hasattr``, pickle's
    ``whichmodule``, which torch.compile's graph cache runs over every imported module)
    read a missing name as missing instead of failing."""


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise _Refused(f"tracegrad.onnx.{name}: {_WHAT_INSTEAD}")
