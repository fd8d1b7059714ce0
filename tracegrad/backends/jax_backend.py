"""Lowering of IR graphs to `jax.jit` functions.

Every kernel runs with jax.numpy as its `xp`.  Programs are traced and run
inside ``jax.enable_x64(True)`` so float64 programs work without the user
turning on x64 globally for their own jax code; every dtype in our programs
is explicit, so float32 programs are unaffected.  jax is imported here only,
when the first program is lowered, so ``import tracegrad`` stays fast.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from tracegrad.ir.graph import Graph
from tracegrad.ir.registry import get


def _as_function(g: Graph) -> Callable:
    import jax.numpy as jnp

    steps = [(get(n.op).kernel_for("jax"), n.inputs, n.attrs, n.outputs) for n in g.nodes]
    inputs, outputs = list(g.inputs), list(g.outputs)

    def fn(*args):
        env = {id(v): a for v, a in zip(inputs, args)}
        for kernel, ins, attrs, outs in steps:
            out = kernel(jnp, *[env[id(v)] for v in ins], **attrs)
            if isinstance(out, tuple):
                for o, a in zip(outs, out):
                    env[id(o)] = a
            else:
                env[id(outs[0])] = out
        return tuple(env[id(v)] for v in outputs)

    return fn


class Lowered:
    """A graph compiled with jax.jit; call with arrays, get jax arrays back."""

    def __init__(self, g: Graph, donate: tuple[int, ...] = ()):
        import jax
        self._jax = jax
        self.name = g.name
        self.n_inputs = len(g.inputs)
        self._fn = jax.jit(_as_function(g), donate_argnums=donate)

    def __call__(self, arrays) -> tuple:
        with self._jax.enable_x64(True):
            return self._fn(*arrays)


def lower(g: Graph, donate: tuple[int, ...] = ()) -> Lowered:
    return Lowered(g, donate)


def run(g: Graph, inputs: list) -> list[np.ndarray]:
    """Lower and run once (no caching): for tests and `tracegrad run`."""
    return [np.asarray(a) for a in lower(g)(inputs)]
