"""How the profiler times backward programs, node by node or as one event, and jax's
compilation phases (`ProgramProfiling`, a part of autograd/profiler.py's `profile`).

A backward program is one static program (on jax one XLA executable), so its
nodes have no times of their own: with ``backward_nodes=True`` the program
runs node by node on the NumPy interpreter, grouped by the backward node each
IR node belongs to; otherwise it runs on its usual executor as one event, with
zero-length markers for its backward nodes.
"""
from __future__ import annotations

import heapq
import time
import weakref

import numpy as np

from tracegrad.ir.registry import get

from .. import _state
from .hooks import HOST, call_arrays

PROGRAM = "autograd::engine::backward_program"

# jax.monitoring duration events -> our event names (jax's compilation of a program)
_JAX_EVENTS = {"/jax/core/compile/jaxpr_trace_duration": "jax::trace_to_jaxpr",
               "/jax/core/compile/jaxpr_to_mlir_module_duration": "jax::lower_to_mlir",
               "/jax/core/compile/backend_compile_duration": "jax::backend_compile"}

_NO_GROUP = object()


class ProgramProfiling:
    """The backward-program half of `profile`: uses its ``_open`` / ``_close`` /
    ``_finished`` / ``_watch`` and its ``backward_nodes``, ``record_shapes`` and
    ``profile_memory`` settings."""

    def run_backward(self, prog, nodes: list, wiring, arrays: list, run) -> list:
        """Run backward program `prog` (engine._differentiate calls this while profiling)."""
        if not self.backward_nodes or _state.local.anomaly:
            executor = _executor_of(prog)
            if executor == "jax":
                install_jax_listener()
            ev = self._open(PROGRAM, "engine", args={"executor": executor,
                                                     "program nodes": len(prog.graph.nodes)})
            try:
                out = prog.run_arrays(arrays, run)
            finally:
                self._close(ev)
            for key in _schedule(prog)[2]:   # zero-length markers: names and seq only
                name, seq, shapes = _owner(key, nodes, wiring, prog, self.record_shapes)
                mark = self._finished(name, "backward", ev.start_ns, ev.start_ns, parent=ev)
                mark.sequence_nr, mark.input_shapes = seq, shapes or []
            return out
        ev = self._open(PROGRAM, "engine", args={"executor": "interpreter (profiled by node)",
                                                 "program nodes": len(prog.graph.nodes)})
        try:
            return self._interpret(prog, nodes, wiring, arrays, run)
        finally:
            self._close(ev)

    def _interpret(self, prog, nodes, wiring, arrays, run) -> list:
        """The program node by node on NumPy, grouped by backward node, each node timed."""
        g = prog.graph
        order, last_use, _ = _schedule(prog)
        env = {id(v): np.asarray(a) for v, a in zip(g.inputs, arrays)}
        group_ev, group, seen = None, _NO_GROUP, set()
        try:
            for n in order:
                if n.fwd_id != group:
                    if group_ev is not None:
                        self._close(group_ev)
                        group_ev = None
                    group = n.fwd_id
                    if group is not None:
                        name, seq, shapes = _owner(group, nodes, wiring, prog, self.record_shapes)
                        group_ev = self._open(name, "backward", seq=seq, shapes=shapes)
                        if group in seen:   # not contiguous: a continuation counts no call
                            group_ev.count = 0
                        seen.add(group)
                ins = [env[id(v)] for v in n.inputs]
                if n.op == HOST:   # hooks / Function.backward: their ops record themselves
                    outs = call_arrays(n, ins, run)
                else:
                    ev = self._open(get(n.op).aten_name, "cpu_op",
                                    shapes=[list(v.shape) for v in n.inputs]
                                    if self.record_shapes else None)
                    try:
                        with np.errstate(all="ignore"):
                            out = get(n.op).kernel_for("numpy")(np, *ins, **n.attrs)
                    finally:
                        self._close(ev)
                    outs = [np.asarray(a) for a in (out if isinstance(out, tuple) else (out,))]
                    if self.profile_memory:
                        self._watch(outs, ins, ev)
                for o, a in zip(n.outputs, outs):
                    env[id(o)] = a
                for v in n.inputs:   # drop values after their last use, as the interpreter
                    if last_use.get(id(v)) is n:
                        env.pop(id(v), None)
        finally:
            if group_ev is not None:
                self._close(group_ev)
        return [env[id(v)] for v in g.outputs]


def _executor_of(prog) -> str:
    """The executor `prog.run_arrays` will pick (for the event's args)."""
    if _state.local.anomaly:
        return "interpreter (anomaly mode)"
    executor = _state.get_executor()
    if executor == "auto":
        # lazy: an import cycle (backward_program imports the profiler)
        from .backward_program import auto_executor
        executor = auto_executor(prog)
    return executor


_schedules: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _schedule(prog) -> tuple:
    """`prog`'s nodes in an order that keeps each backward node's nodes together.

    Passes (CSE, fusion scheduling) may interleave the nodes of neighbouring
    backward nodes; a topological order that prefers the highest forward id
    ready (autodiff's own order: the last forward op first) regroups them.
    Returns ``(order, last use of each value, the group keys in order)``.
    """
    cached = _schedules.get(prog)
    if cached is not None:
        return cached
    g = prog.graph
    producer = {id(o): i for i, n in enumerate(g.nodes) for o in n.outputs}
    waiting = [0] * len(g.nodes)
    users: list[list[int]] = [[] for _ in g.nodes]
    for i, n in enumerate(g.nodes):
        deps = {producer[id(v)] for v in n.inputs if id(v) in producer}
        waiting[i] = len(deps)
        for d in deps:
            users[d].append(i)

    def key(i: int) -> tuple:
        f = g.nodes[i].fwd_id
        return (-f if f is not None else 1, i)   # no forward id (recomputed values): in place

    ready = [key(i) for i in range(len(g.nodes)) if waiting[i] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(g.nodes[i])
        for u in users[i]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, key(u))
    last_use = {}
    for n in order:
        for v in n.inputs:
            last_use[id(v)] = n
    for v in g.outputs:
        last_use[id(v)] = None    # program outputs are never dropped
    groups = []
    for n in order:
        if n.fwd_id is not None and (not groups or groups[-1] != n.fwd_id):
            if n.fwd_id not in groups:
                groups.append(n.fwd_id)
    result = (order, last_use, tuple(groups))
    _schedules[prog] = result
    return result


def _owner(key: int, nodes: list, wiring, prog, shapes: bool) -> tuple:
    """``(event name, seq, shapes)`` of the backward node a program node with forward id
    `key` belongs to: the tape node, or for a hook mark (hooks.py) the hooks it runs."""
    if 0 <= key < len(nodes):
        n = nodes[key]
        return n.name(), n.seq, [list(t.shape) for t in n.out_types] if shapes else None
    kind, i = prog.markers.get(key, (None, None))
    if kind == "node":
        return "autograd::tensor_hooks", nodes[i].seq, None
    return "autograd::tensor_hooks", -1, None


_jax_listening = [False]


def install_jax_listener() -> None:
    """Once per process: report jax's compilation phases to the thread's profiler."""
    if _jax_listening[0]:
        return
    _jax_listening[0] = True
    import jax.monitoring  # jax loads on first use (start-up time)
    jax.monitoring.register_event_duration_secs_listener(_on_jax_duration)


def _on_jax_duration(event: str, duration_secs: float, **kwargs) -> None:
    name = _JAX_EVENTS.get(event)
    prof = _state.local.profiler
    if name is None or prof is None or prof._phase != "recording":
        return
    end = time.perf_counter_ns()
    args = {"fun_name": str(kwargs["fun_name"])} if "fun_name" in kwargs else None
    prof._finished(name, "compile", end - int(duration_secs * 1e9), end, args)
