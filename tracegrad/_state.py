"""Thread-local runtime state: grad mode, the dispatch mode, the executor choice."""
from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
import threading

from tracegrad.ir.errors import TracegradError, named, with_location
from tracegrad.ir.graph import SourceLoc
from tracegrad.passes import settings


# how the dispatch core turns (tracer, profiler) into the mode ops run in
# (tracegrad/dispatch/modes.py installs it: this module sits below the dispatcher)
_select_mode = None


def install_mode_selector(select) -> None:
    """`select(tracer, profiler) -> mode`: called whenever either changes on a thread."""
    global _select_mode
    _select_mode = select
    local.tracer = local.tracer   # this thread's state was made before the selector existed


class _Local(threading.local):
    """One thread's runtime state.  ``tracer`` and ``profiler`` are properties: setting
    either re-selects ``mode``, the object the dispatcher applies ops through (the top of
    the mode stack: eager kernels, a tg.compile trace, the profiler around either), so the
    per-op path reads one entry instead of testing each."""

    def __init__(self):
        d = self.__dict__
        d["_tracer"] = None         # compiler.trace.Tracer while @tg.compile traces
        d["_profiler"] = None       # the recording autograd.profiler.profile (profiler.py)
        d["mode"] = None
        self.tracer = None
        self.grad_enabled = True     # ops record (grad mode on, inference mode off)
        self.grad_mode = True        # grad mode as set by the user: is_grad_enabled()
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
        self.run_kernel = None      # how this thread runs NumPy kernels (dispatch/kernels.py)
        self.executor = None        # this thread's pinned executor (`pinned_executor`)

    @property
    def tracer(self):
        return self.__dict__["_tracer"]

    @tracer.setter
    def tracer(self, tracer) -> None:
        d = self.__dict__
        d["_tracer"] = tracer
        if _select_mode is not None:
            d["mode"] = _select_mode(tracer, d["_profiler"])

    @property
    def profiler(self):
        return self.__dict__["_profiler"]

    @profiler.setter
    def profiler(self, profiler) -> None:
        d = self.__dict__
        d["_profiler"] = profiler
        if _select_mode is not None:
            d["mode"] = _select_mode(d["_tracer"], profiler)


local = _Local()

_EXECUTORS = settings.EXECUTORS
_executor = settings.executor()   # TRACEGRAD_EXECUTOR (passes/settings.py)


def set_executor(name: str) -> None:
    """Choose how backward programs run: "jax", "interpreter" or "auto" (default).

    ``auto`` runs a program on the NumPy interpreter (no compile latency for
    one-off or cheap programs) and lowers it to a cached ``jax.jit`` executable
    once its interpreter runs have taken as long as its compile is estimated to
    (autograd/backward_program.py `auto_executor`; ``TRACEGRAD_HOT_AFTER=N``:
    from its run N + 1 instead); anomaly mode always
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
    return local.executor or _executor


@contextlib.contextmanager
def pinned_executor(name: str):
    """Run this thread's backward programs on executor `name` inside the block, whatever
    `set_executor` says: gradcheck compares repeated runs bit for bit, and "auto" would move
    a program from NumPy to XLA (other rounding) once it is hot."""
    saved, local.executor = local.executor, name
    try:
        yield
    finally:
        local.executor = saved


def _package_dirs() -> tuple[str, ...]:
    """The directories of tracegrad's code: the runtime, the IR and the passes (the last
    two install inside tracegrad from their own directories, see pyproject.toml)."""
    dirs = [os.path.dirname(os.path.abspath(__file__))]
    for name in ("tracegrad.ir", "tracegrad.passes"):
        dirs.extend(importlib.util.find_spec(name).submodule_search_locations)
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs)


_INTERNAL: tuple[str, ...] | None = None
# co_filename -> inside tracegrad: per-op stack walks test one dict entry per frame
INTERNAL_FILE: dict[str, bool] = {}


def user_frame(depth: int = 1) -> tuple | None:
    """``(code object, line)`` of the innermost frame outside tracegrad, or None.

    The cheap capture the tape takes per op; `location_of` formats it later, when
    someone reads the location (holding the frame itself would keep its locals alive).
    """
    return user_frame_from(sys._getframe(depth))


def user_frame_from(f) -> tuple | None:
    """`user_frame` starting at frame `f` (and filling `INTERNAL_FILE` on the way)."""
    global _INTERNAL
    if _INTERNAL is None:
        _INTERNAL = _package_dirs()
    known = INTERNAL_FILE
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


# what a public function raises for bad arguments: each gets the user's line
ARGUMENT_ERRORS = (TypeError, ValueError, IndexError, RuntimeError, MemoryError, ArithmeticError)


def located(fn=None, *, name: str | None = None):
    """`fn` with the user's source line added (once) to the argument errors it raises
    (`ARGUMENT_ERRORS`), each message starting with `name` (default: fn's name) unless it
    names it already: for public functions that check their arguments in Python before any
    op runs (creation functions, ``manual_seed``), where the dispatcher cannot.
    ``@located`` or ``@located(name="backward")``."""
    if fn is None:
        return lambda f: located(f, name=name)
    op = name or fn.__name__

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ARGUMENT_ERRORS as e:
            raise with_location(located_error(e, op), user_location()) from None
    return wrapper


def located_error(e: Exception, op: str) -> Exception:
    """`e`'s message starting with `op` (``getitem: too many indices ...``)."""
    return e.within(op) if isinstance(e, TracegradError) else named(e, op)


def refresh_record_extras() -> None:
    """Recompute ``record_extras``, the one flag the dispatcher's record step reads before
    calling the record-time extras (tracegrad/autograd/record.py)."""
    local.record_extras = bool(local.anomaly or local.saved_hooks or local.inference_seen)
