"""Executor cross-checking: run a program on both executors and compare.

Turned on by ``TRACEGRAD_CROSSCHECK=1`` (the test suite sets it): every
backward program runs on both executors, and every compiled step that runs
on jax is also run on the NumPy interpreter; any disagreement raises,
naming the program and output.  Slow; meant for tests and debugging.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir.graph import Graph
from tracegrad.passes import settings

from . import interpreter

_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (2e-4, 1e-5),
        "float64": (1e-9, 1e-12), "complex64": (2e-4, 1e-5), "complex128": (1e-9, 1e-12)}


_LOW_FLOATS = ("bfloat16",)   # float dtypes NumPy does not know as kind "f"


def enabled() -> bool:
    return settings.crosscheck()


def compare(g: Graph, inputs: list, jax_outputs: list) -> list[np.ndarray]:
    """The interpreter's outputs of `g`; RuntimeError if they disagree with `jax_outputs`."""
    ref = interpreter.run(g, inputs)
    # the least precise float dtype anywhere in the program sets the tolerance: an f64
    # gradient summed in f32 (x: f32[3,4] * y: f64[]) carries f32 rounding
    values = list(g.inputs) + [o for n in g.nodes for o in n.outputs]
    tol = max((_TOL.get(v.dtype.name, (0, 0)) for v in values), default=(1e-6, 1e-8))
    for i, (a, b) in enumerate(zip(ref, jax_outputs)):
        b = np.asarray(b)
        if a.dtype.name in _LOW_FLOATS:   # ml_dtypes' kind "V": compared as float32 values
            a, b = a.astype(np.float32), b.astype(np.float32) if b.dtype == a.dtype else b
        if a.shape != b.shape or a.dtype != b.dtype:
            raise RuntimeError(f"crosscheck @{g.name} output {i}: interpreter gives "
                               f"{a.dtype}{list(a.shape)}, jax gives {b.dtype}{list(b.shape)}")
        if a.dtype.kind in "fc":
            rtol, atol = max(tol, _TOL.get(a.dtype.name, (1e-6, 1e-8)))
            # finite values only: an inf would make atol inf and the check vacuous
            scale = float(np.max(np.abs(a[np.isfinite(a)]), initial=0.0))
            if not np.allclose(a, b, rtol=rtol, atol=atol * max(1.0, scale), equal_nan=True):
                wide = np.complex128 if a.dtype.kind == "c" else np.float64
                err = float(np.nanmax(np.abs(a.astype(wide) - b.astype(wide))))
                raise RuntimeError(f"crosscheck @{g.name} output {i}: interpreter and jax differ "
                                   f"by up to {err:.3g} ({a.dtype}{list(a.shape)})")
        elif not np.array_equal(a, b):
            raise RuntimeError(f"crosscheck @{g.name} output {i}: interpreter and jax differ")
    return ref
