"""One backward (or JVP) program run over a batch of cotangents at once: ``jax.vmap`` of
the static program, the saved values shared by every row (torch runs its backward under
vmap for ``autograd.grad(..., is_grads_batched=True)`` and ``jacobian(vectorize=True)``).
The interpreter executor runs the rows one by one; cross-check mode runs both."""
from __future__ import annotations

import weakref

import numpy as np

from .. import _state
from ..backends import crosscheck, interpreter
from ..backends.jax_backend import _as_function, _raise_host_error

_VMAPPED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # holder -> {axes: fn}


def run_batched(holder, graph, args: list, axes: tuple) -> list[np.ndarray]:
    """Run `graph` once per row of the inputs whose axis is 0 (the others are shared):
    one ``jax.jit(jax.vmap(...))`` call, cached per `holder` (the object owning `graph`), or
    row by row on the interpreter executor; under cross-check mode both, compared."""
    n = next(a.shape[0] for a, ax in zip(args, axes) if ax == 0)
    if n == 0:
        return [np.zeros((0,) + o.shape, o.dtype.numpy) for o in graph.outputs]

    def rows() -> list[np.ndarray]:
        per_row = [interpreter.run(graph, [a[r] if ax == 0 else a for a, ax in zip(args, axes)])
                   for r in range(n)]
        return [np.stack([row[k] for row in per_row]) if n else
                np.zeros((0,) + o.shape, o.dtype.numpy) for k, o in enumerate(graph.outputs)]

    check = crosscheck.enabled()
    if _state.get_executor() == "interpreter" and not check:
        return rows()
    import jax  # jax loads on first use (start-up time)
    fns = _VMAPPED.setdefault(holder, {})
    fn = fns.get(axes)
    if fn is None:
        fn = fns[axes] = jax.jit(jax.vmap(_as_function(graph), in_axes=axes))
    with jax.enable_x64(True):
        outs = [np.asarray(o) for o in fn(*args)]
    _raise_host_error()   # a failed host check (index bounds, gauge_check), as itself
    if check:
        for k, (a, b) in enumerate(zip(rows(), outs)):
            rtol, atol = crosscheck._TOL.get(a.dtype.name, (1e-6, 1e-8))
            if a.shape != b.shape or not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                raise RuntimeError(f"crosscheck @{graph.name} (vmapped) output {k}: the "
                                   "interpreter row by row and jax.vmap disagree")
    return outs
