"""The autograd engine: reachable tape -> cached static backward program -> gradients.

`backward` and `grad` share one path (`_differentiate`):

1. collect the tape nodes reachable from the roots, in recording order;
2. compute a structural key (ops, attrs, types, wiring, which values want
   gradients) and look the backward program up in a bounded cache;
3. on a miss, rebuild the forward IR graph from the tape and run the pass
   pipeline (autodiff -> prune -> partition) to get the backward program
   and the list of saved forward values it reads;
4. run it: on the chosen executor with the saved arrays, or, when the
   result must itself be differentiable (``create_graph``) or while
   ``tg.compile`` traces, op by op through the tensor dispatcher, which
   records the backward ops on the tape (or into the traced program).

Hooks and custom `Function` backwards are ``host_call`` nodes of the
program, placed by marks in the forward graph built here (see hooks.py); a
program with host calls runs segment by segment around them.  In anomaly
mode a program runs node by node on NumPy with checks (anomaly.py).  A tape
without hooks, Functions or packed saved values takes exactly the path it
took before any of these existed.
"""
from __future__ import annotations

import logging
from collections import OrderedDict

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.graph import Graph, Node as IRNode
from tracegrad.ir.registry import get as get_op
from tracegrad.passes import build_backward

from .. import _dump, _state
from ..backends.executable import Executable
from ..tensor import Tensor
from . import anomaly, hooks
from .function import CUSTOM_FUNCTION
from . import graph as graph_mod
from .graph import AccumulateGrad, Node
from .saved_hooks import PACKED, unpack_value

log = logging.getLogger("tracegrad.autograd")

CACHE_SIZE = 512
HOT_AFTER = 2   # "auto" executor: lower to jax on a program's third run


class BackwardProgram:
    """A cached backward program and what it reads from the tape."""

    def __init__(self, graph: Graph, feeds: tuple, n_cotangents: int, saved_bytes: int,
                 markers: dict | None = None):
        self.graph = graph
        self.feeds = feeds   # per saved input: (node position, is_output, index, version checks)
        self.n_cotangents = n_cotangents
        self.saved_bytes = saved_bytes
        self.markers = markers or {}   # forward id of a hook mark -> ("node", i) | ("leaf", li)
        self.host = any(n.op == hooks.HOST for n in graph.nodes)
        self.hook_calls = hooks.hook_calls(graph) if self.host else frozenset()
        self.runs = 0
        self._exe = Executable(graph)
        self._steps = None
        self._nan_plan = None

    def nan_plan(self) -> list:
        if self._nan_plan is None:
            self._nan_plan = anomaly.nan_plan(self.graph)
        return self._nan_plan

    def run_arrays(self, arrays: list, run: hooks.BackwardRun | None = None) -> list[np.ndarray]:
        executor = _state.get_executor()
        if _state.local.anomaly:   # node by node on NumPy, with checks
            self.runs += 1
            return anomaly.run(self, arrays, run)
        if executor == "auto":
            executor = "jax" if self.runs >= HOT_AFTER else "interpreter"
        self.runs += 1
        if self.host:   # hooks / Function backwards: Python between compiled segments
            if self._steps is None:
                self._steps = hooks.segment(self.graph)
            return hooks.run_segmented(self.graph, self._steps, arrays, run, executor)
        return self._exe.run(arrays, executor)


_cache: OrderedDict = OrderedDict()


def clear_cache() -> None:
    _cache.clear()


def cache_info() -> dict:
    return {"programs": len(_cache), "max": CACHE_SIZE}


def _collect(roots: list[Tensor]) -> list[Node]:
    seen: dict[int, Node] = {}
    stack = [r.grad_fn for r in roots if r.grad_fn is not None]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        for e in n.edges:
            if e is not None and isinstance(e[0], Node) and id(e[0]) not in seen:
                stack.append(e[0])
    return sorted(seen.values(), key=lambda n: n.seq)


def _attrs_key(attrs: dict):
    return tuple(attrs.values())


class _Wiring:
    """The structure of a reachable tape: the cache key and what to feed where."""

    def __init__(self, nodes: list[Node], roots: list[Tensor], targets: list[Tensor]):
        self.pos = pos = {id(n): i for i, n in enumerate(nodes)}
        self.leaves: list[AccumulateGrad] = []
        self.leaf_pos = leaf_pos = {}
        self.refs = []
        self.hooks: dict[int, tuple] = {}   # node position -> NodeExtra.hook_signature()
        self.leaf_hooked: list[int] = []    # leaves with tensor hooks
        self.packed = False                 # some saved value is held by a pack hook
        key = []
        for i, n in enumerate(nodes):
            refs = []
            for k, e in enumerate(n.edges):
                if e is None:
                    refs.append(("c",))
                elif isinstance(e[0], AccumulateGrad):
                    li = leaf_pos.get(id(e[0]))
                    if li is None:
                        li = leaf_pos[id(e[0])] = len(self.leaves)
                        self.leaves.append(e[0])
                        if graph_mod.LEAF_HOOKS_USED[0] and hooks.leaf_hooks(e[0].variable):
                            self.leaf_hooked.append(li)
                    refs.append(("l", li))
                else:
                    refs.append(("n", pos[id(e[0])], e[1]))
            refs = tuple(refs)
            self.refs.append(refs)
            entry = (n.op.name, _attrs_key(n.attrs), refs, n.in_types)
            if n.extra is not None:
                self.packed = self.packed or bool(n.extra.packed)
                sig = n.extra.hook_signature()
                if sig is not None:
                    self.hooks[i] = sig
                    entry += (sig,)
            key.append(entry)
        self.nodes_key = tuple(key)
        self.roots = tuple(_ref_of(r, pos, leaf_pos) for r in roots)
        self.targets = tuple(_ref_of(t, pos, leaf_pos) for t in targets)
        self.rekey()

    def rekey(self) -> None:
        self.key = (self.nodes_key, self.roots, self.targets, tuple(self.leaf_hooked))


def _ref_of(t: Tensor, pos, leaf_pos):
    """Where tensor `t` lives in the wiring, or None when it is not reached."""
    if t.grad_fn is not None:
        i = pos.get(id(t.grad_fn))
        return None if i is None else ("n", i, t._out_index)
    acc = t._accumulator() if t._accumulator is not None else None
    li = leaf_pos.get(id(acc)) if acc is not None else None
    return None if li is None else ("l", li)


def _build_program(nodes: list[Node], w: _Wiring) -> BackwardProgram:
    """The forward IR graph of the tape, then its backward program.

    Hooked tensors get a ``tensor_hooks`` mark that every use reads (roots
    included) while gradients requested for them read the unmarked value,
    and nodes with node hooks become ``node_hooks``; see hooks.py.  Forward
    node ids are tape positions; marks get ids from ``len(nodes)`` on.
    """
    g = Graph(name="tape")
    feed_of: dict[int, tuple] = {}
    leaf_vals = [None] * len(w.leaves)   # what consumers read (a mark when hooked)
    leaf_raw = [None] * len(w.leaves)
    outs: list[list] = []
    raw_outs: list[list] = []
    markers: dict[int, tuple] = {}
    hooked_leaves = set(w.leaf_hooked)

    def mark(v, attrs: dict, owner: tuple):
        mid = len(nodes) + len(markers)
        markers[mid] = owner
        m = IRNode(hooks.TENSOR_HOOKS.name, [v], attrs, [v.type], None, id=mid)
        g.nodes.append(m)
        feed_of[id(m.outputs[0])] = feed_of[id(v)]
        return m.outputs[0]

    for i, (n, refs) in enumerate(zip(nodes, w.refs)):
        ins = []
        for k, r in enumerate(refs):
            if r[0] == "n":
                v = outs[r[1]][r[2]]
            elif r[0] == "l" and leaf_vals[r[1]] is not None:
                v = leaf_vals[r[1]]
            else:
                v = g.add_input(n.in_types[k])
                feed_of[id(v)] = (i, False, k)
                if r[0] == "l":
                    leaf_raw[r[1]] = v
                    if r[1] in hooked_leaves:
                        v = mark(v, {"node": -1, "index": r[1], "leaf": True}, ("leaf", r[1]))
                    leaf_vals[r[1]] = v
            ins.append(v)
        attrs = n.attrs if n.op is not CUSTOM_FUNCTION else dict(n.attrs, node=i)
        sig = w.hooks.get(i)
        if sig is not None and (sig[0] or sig[1]):
            node = IRNode(hooks.NODE_HOOKS.name, ins, {
                "node": i, "op": n.op.name, "op_attrs": tuple(attrs.items()),
                "out_types": tuple(n.out_types), "needs": tuple(e is not None for e in n.edges),
                "pre": sig[0], "post": sig[1]}, n.out_types, n.loc, id=i)
        else:
            node = IRNode(n.op.name, ins, attrs, n.out_types, n.loc, id=i)
        g.nodes.append(node)
        for j, o in enumerate(node.outputs):
            feed_of[id(o)] = (i, True, j)
        raw_outs.append(node.outputs)
        consumed = list(node.outputs)
        for k in (sig[2] if sig is not None else ()):
            consumed[k] = mark(consumed[k], {"node": i, "index": k, "leaf": False}, ("node", i))
        outs.append(consumed)

    def value(ref, raw: bool):
        if ref[0] == "n":
            return (raw_outs if raw else outs)[ref[1]][ref[2]]
        return (leaf_raw if raw else leaf_vals)[ref[1]]

    g.outputs = [value(r, False) for r in w.roots]
    wrt = [value(r, True) for r in w.targets]
    prefix = None
    if _dump.directory() is not None:   # TRACEGRAD_DUMP: this program and each pass
        prefix = f"backward_{_dump.short_hash(repr(w.key))}"
    part = build_backward(g, wrt, on_pass=_dump.pass_writer(prefix) if prefix else None)
    if prefix:
        from tracegrad.ir.printer import print_graph
        _dump.write(f"{prefix}.tgir", print_graph(part.backward))
    by_id = {n.id: n for n in g.nodes}
    feeds = tuple(feed_of[id(v)] + (_readers(g, part, s, by_id),)
                  for s, v in enumerate(part.saved))
    log.debug("built backward program: %d nodes, %d saved values (%d bytes)",
              len(part.backward.nodes), len(feeds), part.saved_bytes)
    return BackwardProgram(part.backward, feeds, len(w.roots), part.saved_bytes, markers)


def _readers(g: Graph, part, s: int, by_id: dict) -> tuple:
    """Version checks for saved value `s`: one per forward op whose VJP reads it, as torch
    checks each saved variable against the version its own node saw:
    ``(node position, is_output, index)``."""
    v = part.saved[s]
    placeholder = part.backward.inputs[len(g.outputs) + s]
    checks = set()
    for n in part.backward.nodes:
        if n.fwd_id is None or not any(u is placeholder for u in n.inputs):
            continue
        fwd = by_id.get(n.fwd_id)
        if fwd is None:
            continue
        for k, u in enumerate(fwd.inputs):
            if u is v:
                checks.add((n.fwd_id, False, k))
        for k, u in enumerate(fwd.outputs):
            if u is v:
                checks.add((n.fwd_id, True, k))
    return tuple(sorted(checks))


def _program_for(nodes: list[Node], w: _Wiring) -> BackwardProgram:
    prog = _cache.get(w.key)
    if prog is None:
        prog = _build_program(nodes, w)
        _cache[w.key] = prog
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    else:
        _cache.move_to_end(w.key)
    return prog


_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors "
          "after they have already been freed). Saved intermediate values of the graph are freed "
          "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
          "backward through the graph a second time or if you need to access saved tensors after "
          "calling backward.")


def _saved_value(nodes: list[Node], feed: tuple):
    """The saved array `feed` names, after checking it against every reader's version."""
    i, is_out, k, readers = feed
    src = nodes[i].saved_outputs if is_out else nodes[i].saved_inputs
    if src is None:
        raise RuntimeError(_FREED)
    for r, r_out, rk in readers or ((i, is_out, k),):
        n = nodes[r]
        box, seen = n.versions[rk + (len(n.in_types) if r_out else 0)]
        if box[0] != seen:
            t = n.out_types[rk] if r_out else n.in_types[rk]
            role = f"output {rk}" if r_out else f"input {rk}"
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by "
                f"an inplace operation: [{t}], which is {role} of {n.name()}, is at version "
                f"{box[0]}; expected version {seen} instead. Hint: the op was recorded at "
                f"{n.loc}; avoid modifying this tensor in place before backward.")
    return src[k]


def _saved_tensor(nodes: list[Node], w: _Wiring, feed: tuple) -> Tensor:
    """The saved value as a tensor connected to the tape (for differentiable backward)."""
    data = _saved_value(nodes, feed)
    i, is_out, k, _ = feed
    n = nodes[i]
    if is_out:
        return Tensor(data, requires_grad=True, grad_fn=n, out_index=k)
    edge = n.edges[k]
    if edge is None:
        return Tensor(data)
    if isinstance(edge[0], AccumulateGrad):
        return edge[0].variable
    return Tensor(data, requires_grad=True, grad_fn=edge[0], out_index=edge[1])


def _saved_packed(nodes: list[Node], feed: tuple):
    """`_saved_value` when pack hooks hold saved values: the unpacked tensor of the first
    reader whose value is packed (hooks own it: no version check), else the checked array."""
    i, is_out, k, readers = feed
    src = nodes[i].saved_outputs if is_out else nodes[i].saved_inputs
    if src is None:
        raise RuntimeError(_FREED)
    value = None
    for r, r_out, rk in readers or ((i, is_out, k),):   # each reader's own saved value, as torch
        ex = nodes[r].extra
        if ex is not None and ex.packed and (r_out, rk) in ex.packed:
            t = unpack_value(nodes[r], r_out, rk)
            value = t if value is None else value
    if value is not None:
        return value
    if src[k] is PACKED:
        return unpack_value(nodes[i], is_out, k)
    return _saved_value(nodes, feed)


def _saved_inputs(nodes: list[Node], w: _Wiring, prog: BackwardProgram, tensors: bool) -> list:
    """The saved values `prog` reads: arrays, or tape-connected tensors (`tensors`)."""
    if not w.packed:
        if tensors:
            return [_saved_tensor(nodes, w, f) for f in prog.feeds]
        return [_saved_value(nodes, f) for f in prog.feeds]
    # unpack hooks run in torch's order: the last recorded node first, its inputs first
    order = sorted(range(len(prog.feeds)), key=lambda j: _unpack_order(prog.feeds[j]))
    values: list = [None] * len(prog.feeds)
    for j in order:
        v = _saved_packed(nodes, prog.feeds[j])
        if isinstance(v, Tensor):
            values[j] = v if tensors else v._data
        else:
            values[j] = _saved_tensor(nodes, w, prog.feeds[j]) if tensors else v
    return values


def _unpack_order(feed: tuple) -> tuple:
    i, is_out, k, readers = feed
    r, r_out, rk = max(readers or ((i, is_out, k),), key=lambda x: (x[0], -x[1], -x[2]))
    return (-r, r_out, rk)


def run_graph_on_tensors(g: Graph, inputs: list[Tensor], tape: list[Node] = (),
                         run: hooks.BackwardRun | None = None) -> list[Tensor]:
    """Execute a program op by op through the tensor dispatcher (records a tape / traces).

    Backward nodes keep their provenance: while tracing, each emitted node
    carries the forward op's source line and the traced forward node's id.
    Host calls (hooks, Function backwards) run on the tensors (see hooks.py).
    """
    from .._dispatch import EAGER
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
            from .._ops import full
            g = full(t.shape, 1, t.dtype)
        else:
            if not isinstance(g, Tensor):
                from .._creation import tensor
                g = tensor(g, dtype=t.dtype)
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{list(g.shape)} and output[{i}] has a shape of {list(t.shape)}.")
            if g.dtype is not t.dtype:
                g = g.to(t.dtype)
        cts.append(g)
    return cts


def _differentiate(roots, cts, targets, retain_graph, create_graph):
    """Gradients of `roots` (with cotangents `cts`) for each of `targets` (None: unreached)."""
    nodes = _collect(roots)
    w = _Wiring(nodes, roots, targets)
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
        if create_graph or _state.local.tracer is not None:
            saved = _saved_inputs(nodes, w, prog, tensors=True)
            from .grad_mode import set_grad_enabled
            with set_grad_enabled(create_graph), (run or _NO_RUN):
                grads = run_graph_on_tensors(prog.graph, list(cts) + saved, nodes, run)
        else:
            if w.packed:
                saved = _saved_inputs(nodes, w, prog, tensors=False)
            else:
                saved = [_saved_value(nodes, f) for f in prog.feeds]
            if run is None:
                arrays = prog.run_arrays([c._data for c in cts] + saved)
            else:
                with run:
                    arrays = prog.run_arrays([c._data for c in cts] + saved, run)
            grads = [Tensor(a) for a in arrays]
        for i, g in zip(wanted, grads):
            results[i] = g
    if not retain_graph:
        for n in nodes:
            n.saved_inputs = n.saved_outputs = None
    return results


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
    from .grad_mode import set_grad_enabled
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
    cts = _root_cotangents(tensors, grad_tensors)
    if inputs is not None:
        targets = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        if not targets:
            raise RuntimeError("backward: 'inputs' argument to backward() cannot be empty.")
    else:
        nodes = _collect(tensors)
        targets = _leaves_and_retained(nodes, tensors)
    grads = _differentiate(tensors, cts, targets, retain_graph, create_graph)
    leaf_hooks = graph_mod.LEAF_HOOKS_USED[0]
    for t, g in zip(targets, grads):
        if g is not None:
            if leaf_hooks and t.grad_fn is None:
                _accumulate_with_hooks(t, g, create_graph)
            else:
                _accumulate(t, g, create_graph)


def _accumulate_with_hooks(t: Tensor, g: Tensor, create_graph: bool) -> None:
    """AccumulateGrad with its hooks, in torch's order: the node's pre-hooks on ``(grad,)``,
    accumulation, the tensor's post-accumulate-grad hooks, the node's post-hooks."""
    from .grad_mode import set_grad_enabled
    acc = t._accumulator() if t._accumulator is not None else None
    ex = acc.extra if acc is not None else None
    with set_grad_enabled(create_graph):
        if ex is not None and ex.pre_hooks:
            g = hooks._run_node_hooks(ex.pre_hooks, lambda cur: (cur,), (g,), "pre")[0]
    if g is None:
        return
    _accumulate(t, g, create_graph)
    table = getattr(t, "_hooks", None)
    if table is not None and table.post_acc:
        for fn in list(table.post_acc.values()):
            fn(t)
    if ex is not None and ex.post_hooks:
        for fn in list(ex.post_hooks.values()):
            fn((), (g,))


def _leaves_and_retained(nodes: list[Node], roots: list[Tensor]) -> list[Tensor]:
    out, seen = [], set()
    for r in roots:  # a root that is itself a leaf / retains grad
        if (r.grad_fn is None or r._retains_grad) and id(r) not in seen:
            seen.add(id(r))
            out.append(r)
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


def _accumulate(t: Tensor, g: Tensor, create_graph: bool) -> None:
    from .grad_mode import no_grad
    if t._grad is None:
        t._set_grad(g if create_graph else _detached(g))
    elif create_graph:
        t._set_grad(t._grad + g)
    else:
        with no_grad():
            if t._grad._base is None and not t._grad._requires_grad:
                t._grad.add_(g)
            else:
                t._set_grad(t._grad + g)


def _detached(g: Tensor) -> Tensor:
    """`g` cut from the graph and from any view base (a gradient owns its value)."""
    if g.grad_fn is None and not g._requires_grad and g._base is None:
        return g
    return Tensor(g._data)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Gradients of `outputs` w.r.t. `inputs`, returned, not accumulated (torch.autograd.grad).

    Raises:
        RuntimeError: an input was not used to compute the outputs and
            ``allow_unused`` is False (torch's message).
    """
    if isinstance(outputs, Tensor):
        outputs = [outputs]
    single = isinstance(inputs, Tensor)
    inputs = [inputs] if single else list(inputs)
    if isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    outputs = list(outputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError(f"grad: input {i} does not require grad")
    cts = _root_cotangents(outputs, grad_outputs)
    grads = _differentiate(outputs, cts, inputs, retain_graph, create_graph)
    out = []
    for i, (t, g) in enumerate(zip(inputs, grads)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}, shape "
                                   f"{list(t.shape)}) appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from .._creation import zeros_like
                g = zeros_like(t)
        elif not create_graph:
            g = _detached(g)
        out.append(g)
    return tuple(out)
