"""Hooks and custom-function backwards in a static backward program: host calls.

A backward program is an IR graph, but hooks and `autograd.Function`
backwards are Python callables.  The engine marks them in the forward graph
it builds from the tape, and the autodiff pass turns each mark into one
``host_call`` node of the backward program, at the point torch runs it:

- ``tensor_hooks(x)`` (identity) after a hooked tensor ``x`` (a node output
  or a leaf); every use of ``x`` reads the mark, so the mark's cotangent is
  the *complete* gradient of ``x``; its VJP is ``host_call{kind="tensor"|
  "leaf"}`` running ``x``'s hooks in registration order (each may return a
  replacement).  ``retain_grad()`` and ``inputs=`` read the gradient after
  it, as torch's retains-grad hook runs after the tensor's other hooks.
- ``node_hooks(...)`` in place of a node with ``register_prehook`` /
  ``register_hook`` hooks: its VJP is ``host_call{kind="pre"}`` on the
  node's output gradients, the node's own VJP rule, then
  ``host_call{kind="post"}`` on (gradients of the inputs, of the outputs).
- ``custom_function(...)``: an `autograd.Function` application; its VJP is
  ``host_call{kind="custom"}`` calling the Function's ``backward``.

These four ops are declared in ir/ops/host.py (IR only, registered with the IR); this
module is their runtime side.

Attributes are plain data (the tape position of the node, an output index);
the Python objects are looked up in the current `BackwardRun`, so programs
stay structural and cached: a hook added to a tensor that already has one
reuses the program.

Execution: a program with host calls runs *segment by segment*: the nodes
between two host calls form one sub-program (run on the interpreter or as
one ``jax.jit`` executable), and each host call runs in Python in between,
in program order, which is torch's order (hooks on later-recorded tensors
first).  When the backward runs op by op on tensors (``create_graph=True``
or inside ``tg.compile``), a host call calls the hooks / backward on those
tensors, so they are recorded or traced like any other op.  A program
without host calls runs exactly as before.
"""
from __future__ import annotations

import threading

import numpy as np

from tracegrad.ir.graph import Graph
# the IR side of hooks (their ops, registered with the IR); engine.py reads the marks here
from tracegrad.ir.ops.host import HOST, NODE_HOOKS, TENSOR_HOOKS  # noqa: F401

from .._ops import full
from ..backends import device_arrays
from ..backends.executable import Executable
from ..tensor import Tensor
from .grad_mode import no_grad
from .graph import add_hook


# ---- the backward run: where host calls find their Python objects -----------------------------

_tls = threading.local()


def current_run():
    """The `BackwardRun` executing on this thread, or None."""
    return getattr(_tls, "run", None)


class BackwardRun:
    """One backward call's host-side context.

    Attributes:
        nodes: the tape nodes in the program's order (``node`` attributes index it).
        leaves: the AccumulateGrad nodes (``index`` of ``kind="leaf"``).
        executing: ``(kind, node, index)`` of every tensor-hook call in the
            program (`register_multi_grad_hook` counts on it).
        multi: per-run state of multi-grad hooks.
    """

    def __init__(self, nodes: list, wiring, program):
        self.nodes = nodes
        self.leaves = wiring.leaves
        self._pos = wiring.pos
        self._leaf_pos = wiring.leaf_pos
        self.executing = program.hook_calls
        self.markers = program.markers
        self.program = program
        self.multi: dict = {}
        self.undefined: set = set()   # ids of host-call outputs a Function's backward left None
        self.none_called: set = set()   # nodes whose no-gradient outputs' hooks ran (with None)
        # backward(): accumulate(t, grad) writes a leaf's .grad (with its AccumulateGrad and
        # post-accumulate-grad hooks) from its host call, for the leaves in accumulate_leaves
        self.accumulate = None
        self.accumulate_leaves: frozenset = frozenset()
        self._prev = None

    def will_execute(self, t) -> bool:
        if t.grad_fn is not None:
            i = self._pos.get(id(t.grad_fn))
            return i is not None and ("tensor", i, t._out_index) in self.executing
        acc = t._accumulator() if t._accumulator is not None else None
        li = self._leaf_pos.get(id(acc)) if acc is not None else None
        return li is not None and ("leaf", -1, li) in self.executing

    def owner(self, fwd_id):
        """The tape node (or AccumulateGrad) a backward node with `fwd_id` belongs to."""
        if fwd_id is None:
            return None
        if 0 <= fwd_id < len(self.nodes):
            return self.nodes[fwd_id]
        kind, i = self.markers.get(fwd_id, (None, None))
        if kind == "node":
            return self.nodes[i]
        if kind == "leaf":
            return self.leaves[i]
        return None

    def __enter__(self):
        self._prev = current_run()
        _tls.run = self
        return self

    def __exit__(self, *exc):
        _tls.run = self._prev
        return False


# ---- running host calls ------------------------------------------------------------------------

def _hook_name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _check_replacement(fn, old, new, what: str):
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}' ({what} "
                        f"hook '{_hook_name(fn)}' must return a Tensor or None)")
    if new.shape != old.shape:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value (was "
                           f"{list(old.shape)}, got {list(new.shape)}); a {what} hook must "
                           "return a gradient of the same shape")
    if new.dtype is not old.dtype:
        raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the type of value (was "
                           f"{old.dtype.name}, got {new.dtype.name})")
    return new


def run_tensor_hooks(hooks: dict | None, grad):
    """`grad` through a tensor's hooks in registration order (each may replace it)."""
    if hooks:
        for fn in list(hooks.values()):
            r = fn(grad)
            if r is not None:
                grad = _check_replacement(fn, grad, r, "tensor")
    return grad


def leaf_hooks(t) -> dict | None:
    h = getattr(t, "_hooks", None)
    return h.pre if h is not None else None


def leaf_marked(acc) -> bool:
    """Does leaf `acc` (an AccumulateGrad) get a host call in the program: it has tensor
    hooks, post-accumulate-grad hooks or node hooks, which run at the point its gradient is
    complete, in torch's order."""
    h = getattr(acc.variable, "_hooks", None)
    if h is not None and (h.pre or h.post_acc):
        return True
    ex = acc.extra
    return ex is not None and bool(ex.pre_hooks or ex.post_hooks)


def _differentiable(values) -> list[int]:
    """Positions of the floating-point values: a node's integer outputs (indices) are not
    among its gradients in torch, so node hooks never see them."""
    return [j for j, v in enumerate(values) if v._type.dtype.is_differentiable]


def _run_node_hooks(hooks: dict, args_of, current: tuple, what: str) -> tuple:
    for fn in list(hooks.values()):
        r = fn(*args_of(current))
        if r is None:
            continue
        r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        if len(r) != len(current):
            raise RuntimeError(f"{what} hook '{_hook_name(fn)}' returned {len(r)} gradients; "
                               f"expected {len(current)}")
        current = tuple(None if new is None or old is None
                        else _check_replacement(fn, old, new, what)
                        for old, new in zip(current, r))
    return current


def _hooks_of_outputs_without_gradient(run: BackwardRun, i: int, ex) -> None:
    """The node at `i` runs: as in torch, the hooks of its outputs that got no gradient (no
    host call in this program: every differentiable output of a hooked multi-output node is
    marked, see backward_program.py) are called with None, once, before the others'."""
    if i in run.none_called:
        return
    run.none_called.add(i)
    for j, table in sorted(ex.tensor_hooks.items()):
        if table and ("tensor", i, j) not in run.executing:
            for fn in list(table.values()):
                fn(None)


def call(attrs: dict, inputs: list, run: BackwardRun) -> list:
    """Run one host call on tensors; returns one tensor (or None = zeros) per output."""
    kind = attrs["kind"]
    if kind == "tensor":
        i, k = attrs["node"], attrs["index"]
        ex = run.nodes[i].extra
        if ex is None:
            return [inputs[0]]
        if len(ex.tensor_hooks) > 1 or k not in ex.tensor_hooks:
            _hooks_of_outputs_without_gradient(run, i, ex)
        return [run_tensor_hooks(ex.tensor_hooks.get(k), inputs[0])]
    if kind == "leaf":
        li = attrs["index"]
        g = run_tensor_hooks(leaf_hooks(run.leaves[li].variable), inputs[0])
        if run.accumulate is not None and li in run.accumulate_leaves:
            run.accumulate(run.leaves[li].variable, g)   # torch's AccumulateGrad runs here
        return [g]
    node = run.nodes[attrs["node"]]
    if kind == "custom":
        from .function import run_backward  # lazy: an import cycle (it imports this module, directly or not)
        return run_backward(node, attrs, inputs)
    if kind == "pre":
        diff = _differentiable(inputs)
        mask = attrs["mask"] or (True,) * len(inputs)
        given = tuple(inputs[j] if mask[j] else None for j in diff)
        grads = _run_node_hooks(node.extra.pre_hooks, lambda cur: (cur,), given, "pre")
        out = list(inputs)
        for j, g in zip(diff, grads):
            if g is not None:
                out[j] = g
        return out
    if kind == "post":
        # mask: per node input, is its gradient present; then per output, did one reach it
        n_out = len(node.out_types)
        mask, defined = attrs["mask"][:-n_out], attrs["mask"][-n_out:]
        k = sum(mask)
        present, grad_outputs = inputs[:k], inputs[k:]
        it = iter(present)
        grad_inputs = tuple(next(it) if m else None for m in mask)
        go = tuple(grad_outputs[j] if defined[j] else None
                   for j in _differentiable(grad_outputs))
        grads = _run_node_hooks(node.extra.post_hooks, lambda cur: (cur, go), grad_inputs, "post")
        return [g for g, m in zip(grads, mask) if m]
    raise RuntimeError(f"host_call: unknown kind {kind!r}")


def call_arrays(n, arrays: list, run: BackwardRun) -> list:
    """A host call of the array executor: wraps the arrays as tensors, runs `call` without
    recording, and returns arrays of exactly the declared output types."""
    if _no_gradient_reaches(n, run):
        with no_grad():
            _leaf_without_gradient(n.attrs["index"], run)
        return list(arrays)
    with no_grad():
        outs = call(n.attrs, [Tensor(_array(a)) for a in arrays], run)
    result = []
    for o, v, t in zip(outs, n.outputs, n.attrs["out_types"]):
        if o is None:
            _note_undefined(n, v, run)
            result.append(np.zeros(t.shape, t.dtype.numpy))
        else:
            a = _array(o._data)
            result.append(a if a.dtype == t.dtype.numpy else device_arrays.astype(a, t.dtype.numpy))
    return result


def _array(a):
    """`a` as the array a tensor holds: NumPy, or a device array as it is (a hook of a tape
    on a device gets device tensors, backends/device_arrays.py)."""
    return a if type(a) in device_arrays.ARRAY_TYPES else np.asarray(a)


def call_tensors(n, tensors: list, run: BackwardRun) -> list:
    """A host call when the backward runs on tensors (create_graph / tg.compile)."""
    if _no_gradient_reaches(n, run):
        _leaf_without_gradient(n.attrs["index"], run)
        return list(tensors)
    outs = call(n.attrs, tensors, run)
    for o, v in zip(outs, n.outputs):
        if o is None:
            _note_undefined(n, v, run)
    return [full(t.shape, 0, t.dtype) if o is None else o
            for o, t in zip(outs, n.attrs["out_types"])]


def _no_gradient_reaches(n, run) -> bool:
    """A leaf's host call whose gradient is only what a Function's ``backward`` left None
    (`_leaf_without_gradient` runs instead)."""
    if run is None or not run.undefined or n.attrs["kind"] != "leaf":
        return False
    prog = run.program
    return id(n.inputs[0]) in undefined_values(prog.graph, prog.n_cotangents, run.undefined)


def _leaf_without_gradient(li: int, run) -> None:
    """torch's AccumulateGrad on an undefined gradient: the leaf's hooks get None, its
    node and post-accumulate-grad hooks run, nothing is accumulated."""
    t = run.leaves[li].variable
    for fn in list((leaf_hooks(t) or {}).values()):
        fn(None)
    if run.accumulate is not None and li in run.accumulate_leaves:
        run.accumulate(t, None)


def _note_undefined(n, v, run) -> None:
    if n.attrs["kind"] == "custom" and run is not None:
        run.undefined.add(id(v))


def undefined_outputs(g: Graph, n_cotangents: int, undefined: set) -> list[bool]:
    """Which outputs of `g` carry no gradient because a Function's ``backward`` returned None
    (torch leaves such a ``.grad`` None); see `undefined_values`."""
    none = undefined_values(g, n_cotangents, undefined)
    return [id(v) in none for v in g.outputs]


def undefined_values(g: Graph, n_cotangents: int, undefined: set) -> set:
    """The ids of `g`'s values that depend on a host-call output a Function's ``backward``
    left None (`undefined`) and on no cotangent input and no other host-call output.  The
    program ran them as zeros; a value of saved inputs only (a constant zero gradient)
    stays defined."""
    tainted = set(undefined)
    defined = {id(v) for v in g.inputs[:n_cotangents]}
    for n in g.nodes:
        ins = [id(v) for v in n.inputs]
        if n.op == HOST and n.attrs["kind"] == "custom":
            for o in n.outputs:
                (tainted if id(o) in undefined else defined).add(id(o))
            continue
        t, d = any(i in tainted for i in ins), any(i in defined for i in ins)
        for o in n.outputs:
            if t:
                tainted.add(id(o))
            if d:
                defined.add(id(o))
    return tainted - defined


# ---- segmented execution ------------------------------------------------------------------------

class Segment:
    """A run of ordinary nodes between host calls, executed as one sub-program."""

    def __init__(self, g: Graph):
        self.graph = g
        self._exe = Executable(g)

    def run(self, arrays: list, executor: str) -> list:
        return self._exe.run(arrays, executor)


def segment(g: Graph) -> list:
    """`g`'s nodes as a list of `Segment`s and host-call nodes, in program order."""
    last_use: dict[int, float] = {}
    for i, n in enumerate(g.nodes):
        for v in n.inputs:
            last_use[id(v)] = i
    for v in g.outputs:
        last_use[id(v)] = float("inf")
    steps, run, start = [], [], 0

    def flush(end: int):
        if not run:
            return
        defined, inputs, seen = set(), [], set()
        for n in run:
            for v in n.inputs:
                if id(v) not in defined and id(v) not in seen:
                    seen.add(id(v))
                    inputs.append(v)
            defined.update(id(o) for o in n.outputs)
        outs = [o for n in run for o in n.outputs if last_use.get(id(o), -1) > end]
        if outs:
            steps.append(Segment(Graph(f"{g.name}.{len(steps)}", inputs, list(run), outs)))
        run.clear()

    for i, n in enumerate(g.nodes):
        if n.op == HOST:
            flush(i - 1)
            steps.append(n)
        else:
            run.append(n)
    flush(len(g.nodes))
    return steps


def run_segmented(g: Graph, steps: list, arrays: list, run: BackwardRun, executor: str) -> list:
    env = {id(v): a for v, a in zip(g.inputs, arrays)}
    for step in steps:
        if isinstance(step, Segment):
            outs = step.run([env[id(v)] for v in step.graph.inputs], executor)
            env.update(zip(map(id, step.graph.outputs), outs))
        else:
            outs = call_arrays(step, [env[id(v)] for v in step.inputs], run)
            env.update(zip(map(id, step.outputs), outs))
    return [env[id(v)] for v in g.outputs]


def hook_calls(g: Graph) -> frozenset:
    """``(kind, node, index)`` of the tensor-hook host calls in `g`."""
    out = set()
    for n in g.nodes:
        if n.op == HOST and n.attrs["kind"] in ("tensor", "leaf"):
            out.add((n.attrs["kind"], n.attrs["node"], n.attrs["index"]))
    return frozenset(out)


class LeafHooks:
    """A leaf tensor's hooks (its ``_hooks`` slot): tensor hooks that run on the complete
    gradient before it is accumulated, and post-accumulate-grad hooks."""

    __slots__ = ("pre", "post_acc")

    def __init__(self):
        self.pre: dict = {}
        self.post_acc: dict = {}


def _leaf_table(t) -> LeafHooks:
    h = getattr(t, "_hooks", None)
    if h is None:
        h = t._hooks = LeafHooks()
    return h


def register_tensor_hook(t, fn):
    """`Tensor.register_hook`: see the Tensor method."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        table = t.grad_fn._extra().tensor_hooks.setdefault(t._out_index, {})
    else:
        table = _leaf_table(t).pre
    return add_hook(table, fn)


def register_post_accumulate_grad_hook(t, fn):
    """`Tensor.register_post_accumulate_grad_hook`: see the Tensor method."""
    if not t._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    return add_hook(_leaf_table(t).post_acc, fn)
