"""A compiled program's cache entry: its guards, its run, and the write-back of its effects.

`Entry.run` feeds the program the arguments' and lifted tensors' arrays, then writes the
outputs back: mutated tensors (parameters, optimizer state), ``.grad`` effects, escaped
tensors, and returned tensors (which get a ``grad_fn`` when they still require grad,
backward_plan.py).  Every array written back to a tensor is that tensor's own buffer
(backends/buffers.py): CSE may merge two equal gradients into one output, and torch
gives each ``.grad`` its own storage.

Nothing is written back before the whole program ran and its host checks passed, so a
call that raises (an index check, a host check) leaves parameters, ``.grad`` and
optimizer state as they were, donated or not: with NumPy storage what XLA donates is its
own device copy, and device-resident inputs (backends/device_arrays.py) are donated only by
programs without host checks, and as copies where something else still reads them.  Under ``tg.autograd.detect_anomaly()`` a run
whose outputs hold a NaN or an infinity writes nothing back and raises `NonFiniteRun`,
so that the caller re-runs the call eagerly, where anomaly mode names the backward node
and the forward line (compile.py).
"""
from __future__ import annotations

import hashlib
import sys
import weakref

import numpy as np

from tracegrad.ir.printer import print_graph

from .. import _state, _views
from .._views import refresh as refresh_views
from ..autograd.profiler import profiled
from ..backends import device_arrays
from ..backends.buffers import distinct
from ..backends.executable import Executable
from ..backends.jax_backend import HOST_CHECK_OPS
from ..tensor import Tensor
from . import sharding
from .backward_plan import BackwardPlan
from .guards import GuardFailure, lifted_failure, lifted_guard
from .trace import GradWrite, TraceResult


class NonFiniteRun(Exception):
    """A run under anomaly mode produced a NaN or an infinity: nothing was written back."""


def _finite(outs: list) -> bool:
    outs = [device_arrays.host(a) for a in outs]
    return all(not (isinstance(a, np.ndarray) and a.dtype.kind in "fc")
               or bool(np.isfinite(a).all()) for a in outs)


# references to a donated input's array while `_own_donated` looks at it: the tensor's
# storage slot, the inputs list, the loop variable and getrefcount's argument
_OWN_REFS = 4


def _own_donated(inputs: list, donate: tuple, owners: list) -> None:
    """Give each donated device array that something else still reads (a saved tensor of an
    eager tape, an array a user took) a copy to donate instead: donation deletes the array
    XLA reuses, and the other holders must keep reading the old value, as with NumPy
    storage.  The owner's views sharing the array (``detach()``, ``.data``) do not count:
    the write-back regenerates them from the new value.  Under anomaly mode every donated
    array is copied (a run with a NaN re-runs the call eagerly, on the old values)."""
    anomaly = _state.local.anomaly
    for i in donate:
        a = inputs[i]
        if type(a) not in device_arrays.ARRAY_TYPES:
            continue
        refs = sys.getrefcount(a)
        if refs > _OWN_REFS and owners[i]._views:
            refs -= sum(v._data is a for v in _views.live_views(owners[i]))
        if anomaly or refs > _OWN_REFS:
            inputs[i] = device_arrays.copy(a)


class Entry:
    """One compiled program with its guards and write-back plan."""

    def __init__(self, tr: TraceResult, executor: str, options: dict | None = None):
        self.trace = tr
        self.graph = tr.graph
        self.lifted = [lifted_guard(lf.tensor, lf.requires_grad) for lf in tr.lifted[tr.n_args:]]
        self.n_args = tr.n_args
        # returned tensors needing grad: adds the saved values to the program's outputs
        self.grad_plan = BackwardPlan(tr) if tr.grad_outputs else None
        self.text = print_graph(tr.graph)
        self.hash = hashlib.sha1(self.text.encode()).hexdigest()[:10]
        self.runs = 0   # calls that ran this program (CompiledFunction.programs)
        self.provisional = bool(tr.escaped)
        self.executor = executor
        self.options = options or {}
        # the inputs written back after the call: XLA may reuse their buffers for the outputs
        donate = self.options.get("donate")
        # "auto" (see compile()'s docstring): on an accelerator, or when the overwritten
        # inputs are device arrays on the first run (device-resident state, `run`)
        self._auto_donate = donate is None and executor == "jax" and not any(
            n.op in HOST_CHECK_OPS for n in tr.graph.nodes)   # a failed check after the run
        # must find the inputs as they were
        if donate is None:
            donate = executor == "jax" and _on_accelerator()
        self.donate = tuple(tr.mutated) if donate else ()
        self.in_shardings = None
        if self.options.get("mesh") is not None:
            names = [f"#{i} ({tr.lifted[i].value.type})" for i in range(tr.n_args)]
            self.in_shardings = sharding.input_shardings(
                tr.graph, tr.n_args, self.options["mesh"], self.options["data_axis"], names)
        self._exe = None   # the Executable, made on the first run (shared, `_executable`)

    def guard_failure(self) -> GuardFailure | None:
        failure = lifted_failure(self.lifted, self.trace.module_guards)
        if failure is not None:
            return failure
        for ref, grad_ref in self.trace.grad_guards:
            t = ref()
            if t is None:
                return GuardFailure("a tensor whose .grad the program touches was freed",
                                    gone=True)
            if (t._grad is None) != (grad_ref is None):
                return GuardFailure("a .grad attribute changed between None and a tensor")
            if grad_ref is not None and t._grad is not grad_ref():
                # the program reads and writes the .grad tensor object it lifted
                return GuardFailure("a .grad attribute was replaced by another tensor object")
        for check in self.trace.guards:   # registered while tracing (e.g. by an optimizer)
            failure = GuardFailure.of(check())
            if failure is not None:
                return failure
        return None

    @profiled("tg.compile::run")
    def run(self, args: list[Tensor]):
        tr = self.trace
        self.runs += 1
        inputs = [a._data for a in args]   # deduplicated: one input per distinct tensor
        inputs += [ref()._data for ref, *_ in self.lifted] + list(tr.constants)
        if self._exe is None:
            if self._auto_donate and not self.donate and device_arrays.first_device_array(
                    [inputs[i] for i in tr.mutated]) is not None:
                self.donate = tuple(tr.mutated)
            self._exe = _executable(self)
        lifted = [a for a in args] + [ref() for ref, *_ in self.lifted]
        if self.donate and device_arrays.LIVE[0]:
            _own_donated(inputs, self.donate, lifted)
        # no closure over `self` kept on it: that was a reference cycle, so a dropped
        # entry's XLA executable (~1-2 MiB of native memory, which the collector does not
        # see) lived until a full collection (issue 18)
        outs = self._exe.run(inputs, self.executor)
        if _state.local.anomaly and not _finite(outs):
            raise NonFiniteRun(self.trace.graph.name)
        distinct(outs, inputs)   # each tensor written below gets a buffer of its own
        # the write-back is all or nothing: an exception, or a KeyboardInterrupt arriving
        # between two writes, puts every tensor it touched back as it was (issue 18)
        undo = _Undo([lifted[i] for i in tr.mutated] + [e.tensor for e in tr.grad_effects]
                     + [t for t, _ in tr.escaped])
        try:
            return self._write_back(outs, inputs, lifted)
        except BaseException:
            undo.restore()
            raise

    def _write_back(self, outs, inputs, lifted):
        tr = self.trace
        k = tr.first_mutated_output
        # the trace ran under this call's grad mode (a cache key): outputs that required
        # grad then (enable_grad() inside a call under no_grad too) require it now
        attach = self.grad_plan is not None
        dirty = set(tr.dirty) if attach else ()   # mark_dirty bumps their version (once)
        for i in tr.mutated:
            t = lifted[i]
            t._data = outs[k]
            if i not in dirty:
                t._vc[0] += 1
            k += 1
            if t._views:
                refresh_views(t)
        for effect in tr.grad_effects:
            t, write = effect.tensor, effect.write
            if write is GradWrite.CLEAR:
                t._grad = None
            elif write is GradWrite.TENSOR:
                t._grad = effect.value
            elif t._grad is not None and t._grad._base is None:
                t._grad._data = outs[effect.output]   # in place, keeping the grad's identity
                t._grad._vc[0] += 1
            else:
                t._grad = Tensor(outs[effect.output])
        for t, idx in tr.escaped:
            t._data = outs[idx]
        override = {}
        if attach:
            override = self.grad_plan.attach(outs, inputs, lifted, self.executor)
        return _unflatten(tr.out_tree, outs, override)


class _Undo:
    """What a write-back may change on each tensor it writes: its buffer, version and
    ``.grad`` (with the grad's own buffer and version, written in place), to put back."""

    def __init__(self, tensors):
        seen, self.saved = set(), []
        for t in tensors:
            if id(t) not in seen:
                seen.add(id(t))
                g = t._grad
                self.saved.append((t, t._data, t._vc[0], g, None if g is None else g._data,
                                   None if g is None else g._vc[0]))

    def restore(self) -> None:
        for t, data, version, g, g_data, g_version in reversed(self.saved):
            t._data, t._vc[0], t._grad = data, version, g
            if g is not None:
                g._data, g._vc[0] = g_data, g_version
            if t._views:
                refresh_views(t)


# program text, donated inputs -> Executable, while some entry uses it
_SHARED: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def _executable(entry: Entry):
    """The entry's Executable, shared with every live entry of the same program text.

    A training step's second call retraces (its ``.grad`` attributes went from None to
    tensors) and usually produces the very same program; sharing the Executable spares
    a second XLA compile of it (docs/performance.md, first-call latency).
    """
    if entry.in_shardings is not None:
        return Executable(entry.graph, entry.donate, entry.in_shardings)
    key = (entry.text, entry.donate)
    exe = _SHARED.get(key)
    if exe is None:
        exe = _SHARED[key] = Executable(entry.graph, entry.donate)
    return exe


def _unflatten(tree, outs, override=None):
    kind, payload = tree
    if kind == "out":
        return override[payload] if override and payload in override else Tensor(outs[payload])
    if kind == "const":
        return payload
    if kind is dict:
        return {k: _unflatten(v, outs, override) for k, v in payload.items()}
    items = [_unflatten(v, outs, override) for v in payload]
    return kind(items)


def _on_accelerator() -> bool:
    import jax  # jax loads on first use (start-up time)
    return jax.default_backend() != "cpu"


