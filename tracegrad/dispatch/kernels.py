"""Running an op's NumPy kernel eagerly: floating-point errors ignored, errors with context.

torch neither warns nor raises on inf/nan, so kernels run with NumPy's
floating-point errors ignored.  NumPy 2 keeps its error state in a context
variable: each thread gets a copy of its context with that variable set, and
``run(kernel, *args)`` is that context's ``run`` (~0.1 us per op where
``with np.errstate(...)`` costs ~0.9 us).
"""
from __future__ import annotations

import contextvars

import numpy as np

from tracegrad.ir.builder import with_location
from tracegrad.ir.errors import TracegradError

from .. import _state

# True inside the kernel context only: a kernel that applies an op itself (a nested call)
# finds the context entered already, which `Context.run` refuses with a RuntimeError
IN_KERNEL: contextvars.ContextVar = contextvars.ContextVar("tracegrad_in_kernel", default=False)

# what a kernel raises for bad operands or attributes: reported with the op and the user's line
KERNEL_ERRORS = (TracegradError, TypeError, IndexError, ValueError, ZeroDivisionError)


def run_ignoring_fp_errors(kernel, *args, **kwargs):
    """The slow form of the runner (NumPy 1, whose error state is thread-wide)."""
    with np.errstate(all="ignore"):
        return kernel(*args, **kwargs)


def _kernel_runner():
    try:
        from numpy._core._ufunc_config import _extobj_contextvar  # NumPy 2's error state
    except ImportError:   # pragma: no cover - NumPy 1: a thread-wide error state
        return run_ignoring_fp_errors
    with np.errstate(all="ignore"):
        ignore = _extobj_contextvar.get()
    context = contextvars.copy_context()
    context.run(_extobj_contextvar.set, ignore)
    context.run(IN_KERNEL.set, True)
    return context.run


def new_kernel_runner(state: dict):
    """This thread's runner, made on its first op (`state` is the thread state's dict)."""
    state["run_kernel"] = run = _kernel_runner()
    return run


def nested_call() -> bool:
    """Is this thread inside the kernel context, so that the RuntimeError just caught is
    the context refusing to be entered twice (a kernel applying an op), not the kernel's?"""
    return IN_KERNEL.get()


def as_arrays(out) -> list:
    """A kernel's result (an array, a NumPy scalar, or a tuple of them) as a list of arrays."""
    return [d if type(d) is np.ndarray else np.asarray(d)
            for d in (out if isinstance(out, tuple) else (out,))]


def kernel_error(op, operands, e: Exception) -> Exception:
    """`e` raised by `op`'s kernel, naming the op and the operand types, at the user's line."""
    types = ", ".join(str(t._type) for t in operands)
    if isinstance(e, TracegradError):
        err = e
    else:   # a kernel's own message may name the op already (remainder: integer division ...)
        msg = f"{op.name}: failed on operands ({types}): {str(e).removeprefix(op.name + ': ')}"
        try:
            err = type(e)(msg)
        except TypeError:   # a type whose constructor takes more (NumPy's _UFuncNoLoopError)
            base = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
            err = base(msg)
    return with_location(err, _state.user_location())
