"""torch.jit (TorchScript) is out of scope: its entry points raise NotImplementedError
saying what to use instead.

tracegrad's compiler is `tg.compile`: it traces a function or module into an IR program,
optimizes it with its backward and runs it as one XLA executable; ``tracegrad dump``
shows the programs, and ``jax.export`` of the lowered function gives a deployable
artifact (StableHLO).  ``torch.jit.ignore``/``unused``/``export`` decorators, which only
mark functions for the TorchScript compiler, return the function unchanged, so a model
that uses them still runs.
"""
from __future__ import annotations

_WHAT_INSTEAD = ("TorchScript is not supported by tracegrad: use tg.compile(fn_or_module) "
                 "to compile, `tracegrad dump` to inspect the programs, and jax.export of "
                 "the compiled function for a deployable artifact.")


class _Refused(NotImplementedError, AttributeError):
    """Also an AttributeError, so that probes of the module (``hasattr``, pickle's
    ``whichmodule``) read a missing name as missing."""


def script(obj=None, *args, **kwargs):
    """torch.jit.script: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(f"tracegrad.jit.script: {_WHAT_INSTEAD}")


def trace(func=None, *args, **kwargs):
    """torch.jit.trace: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(f"tracegrad.jit.trace: {_WHAT_INSTEAD}")


def load(*args, **kwargs):
    """torch.jit.load: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(f"tracegrad.jit.load: {_WHAT_INSTEAD}")


def save(*args, **kwargs):
    """torch.jit.save: raises NotImplementedError (see the module docstring)."""
    raise NotImplementedError(f"tracegrad.jit.save: {_WHAT_INSTEAD}")


def _marker(fn=None, **kwargs):
    """A TorchScript marker decorator (``@torch.jit.ignore``, ``@torch.jit.ignore(drop=True)``):
    the function unchanged."""
    return fn if callable(fn) else (lambda f: f)


ignore = unused = export = _marker


def is_scripting() -> bool:
    """Always False: nothing runs under TorchScript here (torch.jit.is_scripting)."""
    return False


def is_tracing() -> bool:
    """Always False (torch.jit.is_tracing)."""
    return False


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    raise _Refused(f"tracegrad.jit.{name}: {_WHAT_INSTEAD}")
