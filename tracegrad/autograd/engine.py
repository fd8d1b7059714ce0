"""The autograd engine: reachable tape -> cached static backward program -> gradients.

`backward` and `grad` share one path (`_differentiate`):

1. collect the tape nodes reachable from the roots, in recording order, and
   compute a structural key (ops, attrs, types, wiring, which values want
   gradients) (wiring.py);
2. look the backward program up in a bounded cache; on a miss, rebuild the
   forward IR graph from the tape and run the pass pipeline (autodiff ->
   prune -> simplify -> cse -> prune -> partition -> fuse) to get the backward
   program and the saved forward values it reads (backward_program.py);
3. read those values off the tape, checking their versions (saved_values.py);
4. run the program: on the chosen executor with the saved arrays, or, when the
   result must itself be differentiable (``create_graph``) or while
   ``tg.compile`` traces, op by op through the tensor dispatcher, which
   records the backward ops on the tape (or into the traced program).

`backward` then writes the gradients into ``.grad`` (grad_accumulation.py).

Hooks and custom `Function` backwards are ``host_call`` nodes of the
program, placed by marks in the forward graph built here (see hooks.py); a
program with host calls runs segment by segment around them.  In anomaly
mode a program runs node by node on NumPy with checks (anomaly.py).  A tape
without hooks, Functions or packed saved values takes exactly the path it
took before any of these existed.
"""
from __future__ import annotations

import threading

import numpy as np

from tracegrad.ir.graph import Graph
from tracegrad.ir.registry import get as get_op

from .. import _state
from ..backends import device_arrays
from ..tensor import Tensor
from . import anomaly, forward_ad, hooks, profiler
from .function import CUSTOM_FUNCTION
from . import graph as graph_mod
from .graph import AccumulateGrad, TapeNode
# the engine's parts; the names stay importable from here (tests and benchmarks reach them)
from .batched_run import run_batched
from .backward_program import (  # noqa: F401
    CACHE_SIZE, BackwardProgram, Feed, SavedSlot, _build_program, _cache,
    _program_for, cache_info, clear_cache)
from .saved_values import _saved_inputs, _saved_value, _saved_values  # noqa: F401
from .wiring import CONSTANT, LeafRef, NodeRef, _collect, _Wiring  # noqa: F401
from .grad_accumulation import _accumulate, _accumulate_with_hooks, _detached  # noqa: F401
from ..dispatch.frontend import EAGER
from .._ops import full, stack
from .._creation import tensor
from .grad_mode import set_grad_enabled
from .._creation import zeros_like


def run_graph_on_tensors(g: Graph, inputs: list[Tensor], tape: list[TapeNode] = (),
                         run: hooks.BackwardRun | None = None) -> list[Tensor]:
    """Execute a program op by op through the tensor dispatcher (records a tape / traces).

    Backward nodes keep their provenance: while tracing, each emitted node
    carries the forward op's source line and the traced forward node's id.
    Host calls (hooks, Function backwards) run on the tensors (see hooks.py).
    """
    local = _state.local
    env = {id(v): t for v, t in zip(g.inputs, inputs)}
    plan = anomaly.nan_plan(g) if local.anomaly else None
    try:
        for idx, n in enumerate(g.nodes):
            if n.fwd_id is not None and 0 <= n.fwd_id < len(tape):
                out = tape[n.fwd_id].saved_outputs
                fwd = out[0].node.id if out and hasattr(out[0], "node") and out[0].node else None
                local.provenance = (n.loc, fwd)
            ins = [env[id(v)] for v in n.inputs]
            try:
                if n.op == hooks.HOST:
                    outs = hooks.call_tensors(n, ins, run)
                else:
                    outs = EAGER.apply(get_op(n.op), ins, n.attrs,
                                       tuple(o.type for o in n.outputs), [v.type for v in n.inputs])
            except Exception as e:
                if plan is not None:
                    anomaly.report_exception(e, run.owner(n.fwd_id) if run else None, n)
                raise
            if plan is not None and plan[idx]:
                anomaly.check_tensors(n, outs, plan[idx], run)
            for o, t in zip(n.outputs, outs):
                env[id(o)] = t
    finally:
        local.provenance = None
    return [env[id(v)] for v in g.outputs]


def implicit_complex_error(t: Tensor) -> str:
    """torch's message for an implicit gradient (ones) of a complex output (torch 2.13 names
    the dtype ``torch.complex64``; ours ``complex64``, with a hint)."""
    return (f"grad can be implicitly created only for real scalar outputs but got "
            f"{t.dtype.name}; take .real, .abs() or pass `gradient=`")


def _root_cotangents(tensors, grad_tensors) -> list:
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got "
                           f"{len(grad_tensors)} gradients for {len(tensors)} tensors")
    cts = []
    for i, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, Tensor):
            raise TypeError(f"backward: element {i} is a {type(t).__name__}, not a Tensor")
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs "
                                   f"(got a tensor of shape {list(t.shape)}); pass `gradient=` "
                                   "with the same shape as the output")
            if t.dtype.is_complex:
                raise RuntimeError(implicit_complex_error(t))
            if _state.local.tracer is None and isinstance(t._data, np.ndarray):
                g = Tensor(np.ones(t._data.shape, t._data.dtype))   # full(shape, 1): quicker
            elif device_arrays.is_device_array(t._data):   # on the root's device
                g = Tensor(device_arrays.put(np.ones(t._data.shape, t._data.dtype),
                                             t._data.device))
            else:
                g = full(t.shape, 1, t.dtype)
        else:
            if not isinstance(g, Tensor):
                g = tensor(g, dtype=t.dtype)
            elif g.dtype.is_complex != t.dtype.is_complex:   # torch's _make_grads
                raise RuntimeError(f"For complex Tensors, both grad_output and output are "
                                   f"required to have the same dtype. Mismatch in dtype: "
                                   f"grad_output[{i}] has a dtype of torch.{g.dtype.name} and "
                                   f"output[{i}] has a dtype of torch.{t.dtype.name}.")
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{list(g.shape)} and output[{i}] has a shape of {list(t.shape)}"
                                   f". (gradient {g._type}, output {t._type})")
            if g.dtype is not t.dtype:
                g = g.to(t.dtype)
        cts.append(g)
    return cts


# a wrong ``gradient=`` is the user's error: raised at their line, naming what they called
_backward_cotangents = _state.located(_root_cotangents, name="backward")
_grad_cotangents = _state.located(_root_cotangents, name="grad")


def _ran(nodes: list[TapeNode], w) -> list[TapeNode]:
    """The nodes a backward for `w`'s targets runs: those with a path to a target (torch's
    engine executes only those).  One pass in recording order: producers come first."""
    wanted_leaves = {r.leaf for r in w.targets if isinstance(r, LeafRef)}
    wanted_nodes = {(r.node, r.output) for r in w.targets if isinstance(r, NodeRef)}
    pos, leaf_pos = w.index, w.leaf_index
    reach = [False] * len(nodes)
    out = []
    for i, n in enumerate(nodes):
        for e in n.edges:
            if e is None:
                continue
            j = pos.get(e[0])
            if j is not None:
                hit = reach[j] or (j, e[1]) in wanted_nodes
            else:
                hit = leaf_pos.get(e[0]) in wanted_leaves
            if hit:
                reach[i] = True
                out.append(n)
                break
    return out


class _GraphTask(threading.local):
    def __init__(self):
        self.current = -1   # the id of the backward call running on this thread, or -1
        self.count = 0


_graph_task = _GraphTask()


def current_graph_task_id() -> int:
    """An id of the ``backward()`` / ``grad()`` call running on this thread, -1 outside one
    (torch._C._current_graph_task_id; non-reentrant checkpoint recomputes once per id)."""
    return _graph_task.current


def _differentiate(*args, **kwargs):
    task = _graph_task
    prev = task.current
    task.count += 1
    task.current = task.count
    try:
        return _differentiate_task(*args, **kwargs)
    finally:
        task.current = prev


class _Unbatchable(Exception):
    """A batched gradient whose program has host calls (hooks, custom Functions): run it
    row by row instead (raised before anything ran)."""


def _differentiate_task(roots, cts, targets, retain_graph, create_graph, nodes=None, w=None,
                        all_leaves=False, accumulate=None, batched=False):
    """Gradients of `roots` (with cotangents `cts`) for each of `targets` (None: unreached).

    ``nodes``, ``w``: `_collect(roots)` and its `_Wiring` (targets set) when the caller has
    them already; ``all_leaves``: the targets are every leaf (``backward()``), so every node
    runs; ``accumulate(t, grad)``: ``backward()``'s accumulation, which a leaf with hooks
    does from its host call, at torch's point (``backward()`` then skips that leaf);
    ``batched``: each cotangent has a leading batch dimension and the program runs once
    under ``jax.vmap`` (plain array programs only: `_Unbatchable` otherwise)."""
    if nodes is None:
        nodes = _collect(roots)
    if w is None:
        w = _Wiring(nodes, roots, targets)
    acc_leaves = frozenset()
    if accumulate is not None and w.leaf_hooked:
        acc_leaves = frozenset(r.leaf for r, t in zip(w.targets, targets)
                               if type(r) is LeafRef and t.grad_fn is None)
    wanted = [i for i, r in enumerate(w.targets) if r is not None]
    results: list = [None] * len(targets)
    unreached = [j for j, r in enumerate(w.roots) if r is None]
    if unreached:  # leaf roots no recorded op reads (``leaf.backward(g)``): d root/d root = g
        for j in unreached:
            g = _leaf_root_hooks(roots[j], cts[j], create_graph)
            for i, t in enumerate(targets):
                if t is roots[j]:
                    results[i] = g if create_graph else Tensor(g._data)
        keep = [j for j, r in enumerate(w.roots) if r is not None]
        w.roots, cts = tuple(w.roots[j] for j in keep), [cts[j] for j in keep]
        w.rekey()
    if wanted and any(r is not None for r in w.roots):
        if len(wanted) != len(targets):  # unreached targets drop out of the program
            w.targets = tuple(w.targets[i] for i in wanted)
            w.rekey()
        prog = _program_for(nodes, w)
        run = hooks.BackwardRun(nodes, w, prog) if prog.host or _state.local.anomaly else None
        if batched and (run is not None or unreached):
            raise _Unbatchable
        if run is not None and acc_leaves:
            run.accumulate, run.accumulate_leaves = accumulate, acc_leaves
        # inside a forward-AD dual level, a tape whose values carry tangents runs on tensors too,
        # so the gradients get tangents (forward-over-reverse; forward_ad.py)
        fw = _state.local.fw_level is not None and forward_ad.tape_has_tangents(nodes)
        if create_graph or _state.local.tracer is not None or fw:
            saved = _saved_inputs(nodes, w, prog, tensors=True)
            if fw:
                forward_ad.restore_saved_tangents(nodes, prog.feeds, saved)
            program_event = profiler.region(profiler.PROGRAM)
            with set_grad_enabled(create_graph), (run or _NO_RUN), program_event:
                grads = run_graph_on_tensors(prog.graph, list(cts) + saved, nodes, run)
        else:
            if w.packed:
                saved = _saved_inputs(nodes, w, prog, tensors=False)
            else:
                saved = _saved_values(nodes, prog)
            if batched:   # one vmapped run; the saved values are shared by the rows
                arrays = run_batched(prog, prog.graph, [c._data for c in cts] + saved,
                                     (0,) * len(cts) + (None,) * len(saved))
            elif run is None:
                arrays = _run_arrays(prog, nodes, w, [c._data for c in cts] + saved, None)
            else:
                with run:
                    arrays = _run_arrays(prog, nodes, w, [c._data for c in cts] + saved, run)
            grads = [Tensor(a) for a in arrays]
        if run is not None and run.undefined:   # a Function's backward returned None for them
            none = hooks.undefined_outputs(prog.graph, prog.n_cotangents, run.undefined)
            grads = [None if u else g for g, u in zip(grads, none)]
        for i, g in zip(wanted, grads):
            results[i] = g
    if not retain_graph:
        # torch frees the buffers of the nodes that ran: with every leaf wanted that is the whole
        # tape; `grad(loss, [m0])` leaves the nodes off m0's paths (m1's) for `grad(loss, [m1])`
        for n in (nodes if all_leaves else _ran(nodes, w)):
            n.saved_inputs = n.saved_outputs = None
            if n.op is CUSTOM_FUNCTION:   # ctx.save_for_backward's tensors go too, as in torch;
                n._saved = ()             # kept, traced ones escaped tg.compile (a retrace)
    return results


def _run_arrays(prog: BackwardProgram, nodes, w: _Wiring, arrays: list, run) -> list:
    prof = _state.local.profiler
    if prof is not None:   # tg.autograd.profiler: timed, by backward node (profiler.py)
        return prof.run_backward(prog, nodes, w, arrays, run)
    return prog.run_arrays(arrays, run)


class _NoRun:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


_NO_RUN = _NoRun()


def _leaf_root_hooks(t: Tensor, g: Tensor, create_graph: bool) -> Tensor:
    """A leaf root's own hooks on its gradient (no program runs for it)."""
    table = hooks.leaf_hooks(t) if t.grad_fn is None else None
    if not table:
        return g
    with set_grad_enabled(create_graph):
        return hooks.run_tensor_hooks(table, g)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of `tensors` into the leaves' ``.grad`` (torch.autograd.backward).

    Args:
        tensors: a Tensor or sequence of Tensors to differentiate.
        grad_tensors: matching cotangents; may be None for one-element tensors.
        retain_graph: keep saved values for another backward (default: create_graph).
        create_graph: record the backward program on the tape so the gradients
            themselves have ``grad_fn`` (higher-order gradients).
        inputs: accumulate only into these tensors (leaves or retained non-leaves).
    Raises:
        RuntimeError: as torch: non-scalar root without gradient, root without
            grad, second backward through freed values, modified saved tensor.
    """
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    if isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    if retain_graph is None:
        retain_graph = create_graph
    tensors = list(tensors)
    with profiler.region(profiler.GRAPH_ROOT):
        cts = _backward_cotangents(tensors, grad_tensors)
    nodes = w = None
    if inputs is not None:
        targets = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not targets:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    else:
        nodes = _collect(tensors)
        w = _Wiring(nodes, tensors, None)
        targets = _leaves_and_retained(nodes, tensors, w)
        w.set_targets(targets)
    done = set()   # leaves their host call accumulated already (hooks.call, kind "leaf")

    def accumulate(t: Tensor, g: Tensor) -> None:
        done.add(id(t))
        with profiler.region(profiler.ACCUMULATE):
            _accumulate_with_hooks(t, g, create_graph)

    with _checkpoint_validity(inputs is None):
        grads = _differentiate(tensors, cts, targets, retain_graph, create_graph, nodes, w,
                               all_leaves=inputs is None, accumulate=accumulate)
    leaf_hooks = graph_mod.LEAF_HOOKS_USED[0]
    for t, g in zip(targets, grads):
        if g is not None and id(t) not in done:
            with profiler.region(profiler.ACCUMULATE if t.grad_fn is None else profiler.RETAIN):
                if leaf_hooks and t.grad_fn is None:
                    _accumulate_with_hooks(t, g, create_graph)
                else:
                    _accumulate(t, g, create_graph)


def _leaves_and_retained(nodes: list[TapeNode], roots: list[Tensor],
                         w: _Wiring | None = None) -> list[Tensor]:
    """What ``backward()`` accumulates into: leaf roots, the leaves in order of first use,
    and retained non-leaves (after the leaves their node reads)."""
    out, seen = [], set()
    for r in roots:  # a root that is itself a leaf / retains grad
        if (r.grad_fn is None or r._retains_grad) and id(r) not in seen:
            seen.add(id(r))
            out.append(r)
    if w is not None and not w.retained:   # the wiring found the leaves in this order
        for acc in w.leaves:
            if id(acc.variable) not in seen:
                seen.add(id(acc.variable))
                out.append(acc.variable)
        return out
    for n in nodes:
        for e in n.edges:
            if e is not None and isinstance(e[0], AccumulateGrad) and id(e[0].variable) not in seen:
                seen.add(id(e[0].variable))
                out.append(e[0].variable)
        if n.retained:
            for ref in n.retained.values():
                t = ref()
                if t is not None and id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
    return out


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of `outputs` w.r.t. `inputs`, returned, not accumulated (torch.autograd.grad).

    With ``is_grads_batched=True`` each of `grad_outputs` has a leading batch dimension B
    and the result is the B gradients stacked, from one ``jax.vmap`` of the backward program
    (as torch's vmap; row by row where it cannot be vmapped, see `_grad_batched`).

    Raises:
        RuntimeError: an input was not used to compute the outputs and
            ``allow_unused`` is False (torch's message).
    """
    if is_grads_batched:
        with _checkpoint_validity(False):
            return _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                                 allow_unused, materialize_grads)
    if isinstance(outputs, Tensor):
        outputs = [outputs]
    single = isinstance(inputs, (Tensor, graph_mod.GradientEdge))
    inputs = [inputs] if single else list(inputs)
    if any(isinstance(t, graph_mod.GradientEdge) for t in inputs):
        if materialize_grads:
            raise RuntimeError("materialize_grads cannot be used when the given input is a "
                               "GradientEdge")
        inputs = [_edge_input(t) if isinstance(t, graph_mod.GradientEdge) else t for t in inputs]
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    outputs = list(outputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, (Tensor, _EdgeInput)) or not t.requires_grad:
            raise RuntimeError(f"grad: input {i} does not require grad")
    with profiler.region(profiler.GRAPH_ROOT):
        cts = _grad_cotangents(outputs, grad_outputs)
    with _checkpoint_validity(False):
        grads = _differentiate(outputs, cts, inputs, retain_graph, create_graph)
    return _finished(inputs, grads, allow_unused, materialize_grads, create_graph)


class _EdgeInput:
    """A `GradientEdge` input of `grad` (torch: the gradient flowing into that edge), standing
    for the tensor of its node's output: what the wiring (`wiring._ref_of`) and `_finished`
    read of an input."""

    __slots__ = ("grad_fn", "_out_index", "shape", "dtype")
    _accumulator = None
    requires_grad = True

    def __init__(self, node, nr: int):
        t = node.out_types[nr]
        self.grad_fn, self._out_index, self.shape, self.dtype = node, nr, tuple(t.shape), t.dtype


def _edge_input(e):
    """`grad`'s input for GradientEdge `e`: a leaf's edge is the leaf itself."""
    if isinstance(e.node, AccumulateGrad):
        return e.node.variable
    if not isinstance(e.node, TapeNode):
        raise TypeError(f"grad: a GradientEdge's node must be a graph node, got "
                        f"{type(e.node).__name__}")
    return _EdgeInput(e.node, e.output_nr)


class _checkpoint_validity:
    """While a backward runs: whether a reentrant checkpoint may run its own backward inside
    it (torch's ``_is_checkpoint_valid``: not under ``grad()`` or ``backward(inputs=...)``,
    which would need the gradients of only some inputs of the recomputed region)."""

    __slots__ = ("valid", "outer")

    def __init__(self, valid: bool):
        self.valid = valid

    def __enter__(self):
        local = _state.local
        self.outer = getattr(local, "checkpoint_valid", True)
        local.checkpoint_valid = self.valid

    def __exit__(self, *exc):
        _state.local.checkpoint_valid = self.outer
        return False


def _is_checkpoint_valid() -> bool:
    """torch.autograd._is_checkpoint_valid: False inside ``grad()`` and ``backward(inputs=)``."""
    return getattr(_state.local, "checkpoint_valid", True)


def _finished(inputs, grads, allow_unused, materialize_grads, create_graph) -> tuple:
    """`grad`'s results: an unreached input raises (torch's message, unless `allow_unused`)
    or gets None, or zeros of its own shape with `materialize_grads` (batched calls too, as
    torch 2.13); without `create_graph` the gradients carry no history."""
    out = []
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}, shape "
                                   f"{list(t.shape)}) appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                g = zeros_like(t)
        elif not create_graph:
            g = _detached(g)
        out.append(g)
    return tuple(out)


def _grad_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads) -> tuple:
    """`grad` with ``is_grads_batched=True``: one vmapped run of the backward program
    (`_grad_vmapped`), or one backward per row where it cannot be vmapped (create_graph,
    hooks or custom Functions on the tape, anomaly mode, the profiler, tracing, forward AD)."""
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if grad_outputs is None or not len(grad_outputs):
        raise RuntimeError("grad: is_grads_batched=True needs grad_outputs with a leading "
                           "batch dimension")
    single = isinstance(inputs, Tensor)
    if retain_graph is None:
        retain_graph = create_graph
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    batch = grad_outputs[0].shape[0] if grad_outputs[0].dim() else 0
    for i, (g, o) in enumerate(zip(grad_outputs, outputs)):
        if g.dim() == 0 or g.shape[1:] != o.shape or g.shape[0] != batch:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {g.shape[1:]!r} and output[{i}] "
                f"has a shape of {o.shape!r}. If you only want some tensors in `grad_output` "
                "to be considered batched, consider using vmap.")
    local = _state.local
    if not (create_graph or local.tracer is not None or local.fw_level is not None
            or local.anomaly or local.profiler is not None) and batch:
        out = _grad_vmapped(outputs, inputs, grad_outputs, retain_graph, allow_unused,
                            materialize_grads)
        if out is not None:
            return out
    # one backward per row through the one cached program (all but the last retain the graph)
    rows = [grad(outputs, inputs, [g[b] for g in grad_outputs],
                 retain_graph=retain_graph if b == batch - 1 else True,
                 create_graph=create_graph, allow_unused=True)
            for b in range(batch)]
    inputs = [inputs] if single else list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = [None if not rows or rows[0][i] is None else stack([r[i] for r in rows])
             for i in range(len(inputs))]
    return _finished(inputs, grads, allow_unused, materialize_grads, create_graph)


def _grad_vmapped(outputs, inputs, grad_outputs, retain_graph, allow_unused, materialize_grads):
    """`_grad_batched` as one ``jax.vmap`` of the backward program over the cotangents' batch
    dimension (torch's vmap of the backward); None where the program cannot run batched
    (hooks, custom Functions, a leaf as an output), before anything ran."""
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"grad: input {i} does not require grad")
    with profiler.region(profiler.GRAPH_ROOT):   # row 0 checks dtypes as an unbatched call
        row = _grad_cotangents(outputs, [g[0] for g in grad_outputs])
    cts = [g if g.dtype is r.dtype else g.to(r.dtype) for g, r in zip(grad_outputs, row)]
    try:
        grads = _differentiate(outputs, cts, inputs, retain_graph, False, batched=True)
    except _Unbatchable:
        return None
    return _finished(inputs, grads, allow_unused, materialize_grads, False)
