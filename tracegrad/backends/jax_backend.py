"""Lowering of IR graphs to `jax.jit` functions.

Every kernel runs with jax.numpy as its `xp`.  Programs are traced and run
inside ``jax.enable_x64(True)`` so float64 programs work without the user
turning on x64 globally for their own jax code; every dtype in our programs
is explicit, so float32 programs are unaffected.  jax is imported here only,
when the first program is lowered, so ``import tracegrad`` stays fast.
"""
from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from tracegrad.ir.graph import Graph
from tracegrad.ir.ops.index import check_range, live_range
from tracegrad.ir.registry import get, register_kernel
from tracegrad.passes.manager import gc_paused


# Errors raised by `host_check` callbacks while a program ran, kept to re-raise as they are:
# jax wraps a callback's exception in its own runtime error, with jax's traceback around it.
_host_errors: list[BaseException] = []
# While a `Lowered` program is traced (in this thread): one list per trace in progress,
# collecting ``(check, arrays)``; the arrays become extra program outputs, checked after the call.
_tracing = threading.local()


def host_check(check: Callable, *arrays) -> None:
    """Inside a lowered program: call ``check(*arrays)`` on the host with NumPy arrays.  An
    exception it raises surfaces from the `Lowered` call as itself (not as jax's runtime
    error), after the program ran; keep the arrays small (a few scalars).

    In a `Lowered` program the arrays are extra outputs, read after the call: a host callback
    would make jax dispatch every call of the program on its slow Python path (~0.1-0.4 ms
    per call on CPU, more than a small training step).  Elsewhere (a vmapped program) it is
    a `jax.debug.callback`; `_raise_host_error` re-raises what it raised.  Call it from a
    kernel, not inside jax control flow (lax.scan / cond bodies): its arrays must belong to
    the program's own trace.
    """
    collecting = getattr(_tracing, "collecting", None)
    if collecting:
        collecting[-1].append((check, arrays))
        return
    import jax  # jax loads on first use (start-up time)

    def call(*host_arrays):
        try:
            check(*host_arrays)
        except Exception as e:   # noqa: BLE001  (re-raised by _raise_host_error)
            _host_errors.append(e)
    jax.debug.callback(call, *arrays)


# ---- the jax kernels of the IR's check ops: the check runs on the host --------------------------
def _index_check_jax(xp, index, *, what, size, dim, negative, ignore):
    if index.size:
        # the host reads two scalars (min, max) and raises the NumPy kernel's IndexError
        span = xp.stack(live_range(xp, index, ignore))
        host_check(lambda span: check_range(what, span[0], span[1], size, dim, negative), span)
    return index


def _gauge_check_jax(xp, x, got, want, *, what):
    # the NumPy kernel on the host: a jitted program raises its RuntimeError, after it ran
    numpy_kernel = get("gauge_check").kernel
    host_check(lambda g, w: numpy_kernel(np, None, g, w, what=what), got, want)
    return x


register_kernel("index_check", "jax", _index_check_jax)
register_kernel("gauge_check", "jax", _gauge_check_jax)
# the ops whose jax kernel checks on the host (`host_check`): their check runs after the
# program, and only a whole lowered program collects it
HOST_CHECK_OPS = frozenset({"index_check", "gauge_check"})


def _raise_host_error() -> None:
    if _host_errors:
        e = _host_errors[0]
        _host_errors.clear()
        raise e


def _checking(fn: Callable, checks: list) -> Callable:
    """`fn` returning, after its outputs, the arrays of the `host_check`s its kernels make;
    tracing it fills `checks` with ``(check, number of arrays)`` per host check."""
    def traced(*args):
        collected: list = []
        if not hasattr(_tracing, "collecting"):
            _tracing.collecting = []
        _tracing.collecting.append(collected)
        try:
            out = fn(*args)
        finally:
            _tracing.collecting.pop()
        checks[:] = [(check, len(arrays)) for check, arrays in collected]
        return out + tuple(a for _, arrays in collected for a in arrays)

    return traced


def _as_function(g: Graph) -> Callable:
    """The graph as a function of jax arrays, for `jax.jit` to trace."""
    import jax.numpy as jnp  # jax loads on first use (start-up time)

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
    """A graph compiled with jax.jit; call with arrays, get jax arrays back.

    ``donate``: input positions whose buffers XLA may reuse for outputs
    (``jax.jit(donate_argnums=...)``).  Callers pass NumPy arrays, which jax
    copies into fresh device buffers on every call, so what is donated is that
    copy: the NumPy array itself is never invalidated (and a jax array with a
    live NumPy view is not donated: PJRT copies instead).
    ``in_shardings``: one `jax.sharding.Sharding` per input, or None (one device).  When
    they span devices of other processes (a multi-host mesh after
    ``jax.distributed.initialize``), every process passes the whole (global) arrays: each
    builds the global `jax.Array` from the shards its own devices hold, and every output
    comes back whole on every process (`_to_global`, `_whole`).
    ``pack_small``: pass small inputs of one type stacked into one array (see
    `_packing`); for eager backward programs, whose saved scalars are many.
    """

    def __init__(self, g: Graph, donate: tuple[int, ...] = (), in_shardings=None,
                 pack_small: bool = False):
        import jax  # jax loads on first use (start-up time)
        self._jax = jax
        self.name = g.name
        self.n_inputs = len(g.inputs)
        kw = {} if in_shardings is None else {"in_shardings": in_shardings}
        self._host_checks: list = []   # (check, number of arrays): filled when traced
        fn = _checking(_as_function(g), self._host_checks)
        self._packing = _packing(g) if pack_small and not donate and in_shardings is None else None
        if self._packing is not None:
            fn = _unpacking(fn, len(g.inputs), self._packing)
        self._fn = jax.jit(fn, donate_argnums=donate, **kw)
        self._traced = False
        if in_shardings is not None and not all(s.is_fully_addressable for s in in_shardings):
            self._fn = _MultiProcess(self._fn, in_shardings)

    def __call__(self, arrays) -> tuple:
        if self._packing is not None:
            arrays = _pack(arrays, self._packing)
        with self._jax.enable_x64(True):
            out = self._fn(*arrays) if self._traced else self._first_call(arrays)
            if self._host_checks:   # so that a failed check raises here, as itself
                out = self._run_host_checks(out)
            return out

    def _run_host_checks(self, out: tuple) -> tuple:
        """The program's own outputs, after running its host checks on the extra ones."""
        n = len(out) - sum(k for _, k in self._host_checks)
        extra = iter(out[n:])
        for check, k in self._host_checks:
            check(*[np.asarray(next(extra)) for _ in range(k)])
        return out[:n]

    def _first_call(self, arrays) -> tuple:
        # the call that traces and compiles: jax tracing a large program allocates enough
        # objects for the cyclic collector's full passes to dominate (passes.manager.gc_paused)
        from tracegrad.passes.manager import gc_paused
        with gc_paused():
            out = self._fn(*arrays)
        self._traced = True
        return out

    def stablehlo(self, specs):
        """jax's `Lowered` stage for these inputs (arrays or `jax.ShapeDtypeStruct`s): the
        program traced and lowered to StableHLO, not yet compiled by XLA (benchmarks time it)."""
        if self._packing is not None:
            raise NotImplementedError("Lowered.stablehlo: not available with pack_small=True")
        with self._jax.enable_x64(True), gc_paused():
            return self._fn.lower(*specs)

    def compiled(self, arrays):
        """The `jax.stages.Compiled` for these inputs (``.memory_analysis()``, ``.as_text()``)."""
        if self._packing is not None:
            arrays = _pack(arrays, self._packing)
        with self._jax.enable_x64(True):
            return self._fn.lower(*arrays).compile()


class _MultiProcess:
    """A jitted function over a mesh spanning several processes, called with host arrays."""

    def __init__(self, jitted, in_shardings):
        self.jitted = jitted
        self.in_shardings = in_shardings

    def _inputs(self, arrays) -> list:
        return [_to_global(a, sh) for a, sh in zip(arrays, self.in_shardings)]

    def __call__(self, *arrays) -> tuple:
        return tuple(_whole(o) for o in self.jitted(*self._inputs(arrays)))

    def lower(self, *arrays):
        return self.jitted.lower(*self._inputs(arrays))


def _to_global(array, sharding):
    """A global `jax.Array` laid out by `sharding` from a host array every process holds."""
    import jax  # jax loads on first use (start-up time)
    array = np.asarray(array)
    return jax.make_array_from_callback(array.shape, sharding, lambda index: array[index])


def _whole(out):
    """`out` readable on this process: gathered from the other processes when it is sharded
    over their devices (a replicated result is read from a local copy)."""
    if out.is_fully_addressable or out.is_fully_replicated:
        return out
    from jax.experimental import multihost_utils  # jax loads on first use (start-up time)
    return multihost_utils.process_allgather(out, tiled=True)


def lower(g: Graph, donate: tuple[int, ...] = (), in_shardings=None,
          pack_small: bool = False) -> Lowered:
    return Lowered(g, donate, in_shardings, pack_small)


# jax's call overhead is ~2.5 us per argument: a backward program of a 200-op eager chain
# reads ~100 saved scalars, ~250 us of argument handling for ~10 us of work.  Stacking the
# small inputs of one type on the host costs ~0.05 us each.
PACK_MAX_ELEMENTS = 1024


def _packing(g: Graph):
    """``(rest, groups)``: input positions passed as they are, and ``(np dtype, positions)``
    per group of two or more small inputs (at most PACK_MAX_ELEMENTS elements) of one type,
    passed stacked; None when nothing is worth packing."""
    by_type: dict = {}
    for i, v in enumerate(g.inputs):
        if v.type.numel <= PACK_MAX_ELEMENTS:
            by_type.setdefault(v.type, []).append(i)
    groups = [(t.dtype.numpy, tuple(ix)) for t, ix in by_type.items() if len(ix) > 1]
    if not groups:
        return None
    packed = {i for _, ix in groups for i in ix}
    return tuple(i for i in range(len(g.inputs)) if i not in packed), groups


def _pack(arrays, packing) -> list:
    rest, groups = packing
    out = [arrays[i] for i in rest]
    for np_dtype, ix in groups:
        out.append(np.array([arrays[i] for i in ix], dtype=np_dtype))
    return out


def _unpacking(fn: Callable, n_inputs: int, packing) -> Callable:
    """`fn` taking `_pack`'s arguments: the stacks are split again inside the program."""
    rest, groups = packing

    def unpacked(*args):
        full = [None] * n_inputs
        for j, i in enumerate(rest):
            full[i] = args[j]
        for stack, (_, ix) in zip(args[len(rest):], groups):
            for j, i in enumerate(ix):
                full[i] = stack[j]
        return fn(*full)

    return unpacked


def run(g: Graph, inputs: list) -> list[np.ndarray]:
    """Lower and run once (no caching): for tests and `tracegrad run`."""
    return [np.asarray(a) for a in lower(g)(inputs)]
