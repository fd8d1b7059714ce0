"""Thread-local runtime state: grad mode, the active tracer, the executor choice."""
from __future__ import annotations

import os
import sys
import threading

from tracegrad.ir.graph import SourceLoc
from tracegrad.passes import settings


class _Local(threading.local):
    def __init__(self):
        self.grad_enabled = True     # ops record (grad mode on, inference mode off)
        self.grad_mode = True        # grad mode as set by the user: is_grad_enabled()
        self.tracer = None          # compiler.trace.Tracer while @tg.compile traces
        self.anomaly = False
        self.provenance = None      # (SourceLoc, forward node id) stamped on backward nodes
        self.checkpoint_depth = 0   # > 0 inside tg.utils.checkpoint while tracing
        # autograd extras (tracegrad/autograd): anomaly NaN checks, saved-tensor hooks,
        # inference mode; `record_extras` is the one flag the record block reads
        self.anomaly_check_nan = True
        self.saved_hooks = []       # (pack, unpack) pairs, innermost last
        self.saved_hooks_disabled = None   # error message of disable_saved_tensors_hooks
        self.inference = False
        self.inference_seen = False
        self.record_extras = False
        self.fw_level = None        # the active forward-AD dual level (autograd/forward_ad.py)
        self.fw_suspended = None    # ... while tangent programs run with forward AD off
        self.profiler = None        # the recording autograd.profiler.profile (profiler.py)
        self.run_kernel = None      # how this thread runs NumPy kernels (_dispatch, made on use)


local = _Local()

_EXECUTORS = settings.EXECUTORS
_executor = settings.executor()   # TRACEGRAD_EXECUTOR (passes/settings.py)


def set_executor(name: str) -> None:
    """Choose how backward programs run: "jax", "interpreter" or "auto" (default).

    ``auto`` runs a program on the NumPy interpreter the first times it is seen
    (no compile latency for one-off programs) and lowers it to a cached
    ``jax.jit`` executable once it is hot (its third run); anomaly mode always
    uses the interpreter. The environment variable ``TRACEGRAD_EXECUTOR`` sets
    the initial value.

    Raises:
        ValueError: unknown executor name.
    """
    global _executor
    if name not in _EXECUTORS:
        raise ValueError(f"set_executor: {name!r} is not one of {_EXECUTORS}")
    _executor = name


def get_executor() -> str:
    return _executor


def _package_dirs() -> tuple[str, ...]:
    import tracegrad
    import tracegrad.ir
    import tracegrad.passes
    return tuple(os.path.dirname(m.__file__) + os.sep for m in (tracegrad, tracegrad.ir, tracegrad.passes))


_INTERNAL: tuple[str, ...] | None = None
_internal_file: dict[str, bool] = {}   # co_filename -> inside tracegrad (per-op stack walks)


def user_frame(depth: int = 1) -> tuple | None:
    """``(code object, line)`` of the innermost frame outside tracegrad, or None.

    The cheap capture the tape takes per op; `location_of` formats it later, when
    someone reads the location (holding the frame itself would keep its locals alive).
    """
    global _INTERNAL
    if _INTERNAL is None:
        _INTERNAL = _package_dirs()
    known = _internal_file
    f = sys._getframe(depth)
    while f is not None:
        code = f.f_code
        inside = known.get(code.co_filename)
        if inside is None:
            inside = known[code.co_filename] = code.co_filename.startswith(_INTERNAL)
        if not inside:
            return (code, f.f_lineno)
        f = f.f_back
    return None


def location_of(frame: tuple | None) -> SourceLoc | None:
    """The SourceLoc of a `user_frame` capture."""
    if frame is None:
        return None
    code, line = frame
    return SourceLoc(code.co_filename, line, code.co_name)


def user_location(depth: int = 1) -> SourceLoc | None:
    """The innermost stack frame outside tracegrad itself: where the user called us."""
    return location_of(user_frame(depth + 1))
