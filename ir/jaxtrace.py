"""How IR kernels are traced by jax: jax.numpy's nested jitted functions, and when to inline them.

Both places that hand IR kernels to `jax.jit` trace them inside `inline_nested_jits()`:
the jax executor's lowering (tracegrad/backends/jax_backend.py) and the NumPy conv and pool
kernels that run on XLA (ops/conv.py `_on_xla`).  The caches of programs above the IR call
`programs_evicted` when they first drop one.
"""
from __future__ import annotations

import contextlib

# set by the program caches when they first drop a program (`programs_evicted`): from then on
# kernels are traced inline (`inline_nested_jits`)
_churning = [False]


def programs_evicted() -> None:
    """Called by every cache of programs when it drops one (tg.compile's, the backward
    programs', ops/conv.py's `_on_xla` kernels): programs are being replaced, so the programs
    traced from now on inline jax.numpy's nested jitted functions (`inline_nested_jits`)."""
    _churning[0] = True


def inline_nested_jits():
    """The context a program's kernels are traced in: ``jax.disable_jit()`` once the
    program caches have started dropping programs, otherwise nothing.

    Most of jax.numpy is itself jitted, and a kernel's ``jnp`` calls trace as nested jitted
    functions whose jaxprs jax caches per argument shape, in process-wide caches keyed by
    jax.numpy's module-level functions, which never die (``trace_to_jaxpr``'s is unbounded).
    While every program stays cached that costs no more than the programs themselves, and
    the cache serves the repeated layers of a large program (its jax tracing is ~1.7x
    slower without it, docs/performance.md, "Memory over many steps").  A loop that makes a
    new program every step (a new batch size) grew those caches by ~45 jaxprs per program,
    however few programs our caches kept (issue 18).  Under ``jax.disable_jit()``, inside a
    trace, nested jitted functions trace inline: the program's one top-level jaxpr is all
    jax keeps, and it goes with the program's function, which only the program holds
    (docs/architecture.md, "Caches and eviction").  The kernels compute the same either way.
    """
    if not _churning[0]:
        return contextlib.nullcontext()
    import jax  # jax loads on first use (start-up time)
    return jax.disable_jit()
