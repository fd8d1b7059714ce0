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
from operator import attrgetter

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.graph import Graph, Node as IRNode
from tracegrad.ir.registry import get as get_op
from tracegrad.passes import build_backward

from .. import _dump, _state
from .._creation import tensor, zeros_like
from .._ops import full
from ..backends.executable import Executable
from ..dispatch.frontend import EAGER
from ..tensor import Tensor
from . import anomaly, forward_ad, hooks, profiler
from .function import CUSTOM_FUNCTION
from . import graph as graph_mod
from .grad_mode import no_grad, set_grad_enabled
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
        self._exe = Executable(graph, pack_small=True)   # many small saved values: see jax_backend
        self._steps = None
        self._nan_plan = None
        self.version_checks = ()   # set by _build_program (see _saved_values)

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
    """The tape nodes reachable from `roots`, in recording order."""
    seen: set[Node] = set()   # tape nodes hash by identity
    nodes = []
    stack = [r.grad_fn for r in roots if r.grad_fn is not None]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        nodes.append(n)
        for e in n.edges:
            if e is not None:
                p = e[0]
                if p not in seen and isinstance(p, Node):
                    stack.append(p)
    nodes.sort(key=_SEQ)
    return nodes


_SEQ = attrgetter("seq")


def _entry(n: Node) -> tuple:
    """What a node contributes to the cache key when it has no `Node.sig`."""
    return (n.op.name, tuple(n.attrs.values()), n.in_types)


class _Hooked:
    def __repr__(self) -> str:   # stable: dump file names hash the key's repr
        return "HOOKED"


_HOOKED = _Hooked()   # key marker: the node's hook signature follows


class _Wiring:
    """The structure of a reachable tape: the cache key and what to feed where.

    The key is one flat tuple, built in a single pass: per node its signature
    (`Node.sig`, or `_entry`), then its hook signature when it has hooks, then one
    entry per input edge: -1 no gradient, ``-2 - i`` leaf i, ``j`` output 0 of node
    j, ``(j, k)`` output k of node j.  The node's signature fixes how many inputs
    follow, so the encoding reads back unambiguously.  On a 200-op chain: built in
    0.3 us per node and looked up in 0.03 us per node; the nested per-node tuples it
    replaces took 0.7 and 0.15 us.
    """

    def __init__(self, nodes: list[Node], roots: list[Tensor], targets: list[Tensor] | None):
        self.nodes = nodes
        # position of each node / leaf; tape nodes and AccumulateGrads hash by identity
        self.index = pos = {n: i for i, n in enumerate(nodes)}
        self.leaves: list[AccumulateGrad] = []
        self.leaf_index = leaf_pos = {}
        self.hooks: dict[int, tuple] = {}   # node position -> NodeExtra.hook_signature()
        self.leaf_hooked: list[int] = []    # leaves with tensor hooks
        self.packed = False                 # some saved value is held by a pack hook
        self.retained = False               # some node has outputs that called retain_grad()
        self._refs = None
        leaf_hooks_used = graph_mod.LEAF_HOOKS_USED[0]
        key = []
        add = key.append
        for i, n in enumerate(nodes):
            add(n.sig if n.sig is not None else _entry(n))
            if n.retained:
                self.retained = True
            if n.extra is not None:
                self.packed = self.packed or bool(n.extra.packed)
                sig = n.extra.hook_signature()
                if sig is not None:
                    self.hooks[i] = sig
                    add(_HOOKED)
                    add(sig)
            for e in n.edges:
                if e is None:
                    add(-1)
                    continue
                p = e[0]
                j = pos.get(p)
                if j is not None:
                    add(j if e[1] == 0 else (j, e[1]))
                    continue
                li = leaf_pos.get(p)   # every other producer is an AccumulateGrad
                if li is None:
                    li = leaf_pos[p] = len(self.leaves)
                    self.leaves.append(p)
                    if leaf_hooks_used and hooks.leaf_hooks(p.variable):
                        self.leaf_hooked.append(li)
                add(-2 - li)
        self.nodes_key = tuple(key)
        self.roots = tuple(_ref_of(r, pos, leaf_pos) for r in roots)
        if targets is not None:
            self.set_targets(targets)

    def set_targets(self, targets: list[Tensor]) -> None:
        """The tensors gradients are wanted for (may be set after construction)."""
        self.targets = tuple(_ref_of(t, self.index, self.leaf_index) for t in targets)
        self.rekey()

    @property
    def pos(self) -> dict[int, int]:
        """``id(node) -> position`` (hooks.BackwardRun's view of `index`)."""
        return {id(n): i for n, i in self.index.items()}

    @property
    def leaf_pos(self) -> dict[int, int]:
        """``id(AccumulateGrad) -> leaf position``."""
        return {id(a): i for a, i in self.leaf_index.items()}

    @property
    def refs(self) -> list[tuple]:
        """Per node, per input: ``("c",)`` no gradient, ``("l", leaf)``, ``("n", node,
        output)`` (what `_build_program` wires; made only on a cache miss)."""
        if self._refs is None:
            pos, leaf_pos = self.index, self.leaf_index
            self._refs = [tuple(("c",) if e is None
                                else ("n", pos[e[0]], e[1]) if e[0] in pos
                                else ("l", leaf_pos[e[0]]) for e in n.edges)
                          for n in self.nodes]
        return self._refs

    def rekey(self) -> None:
        self.key = (self.nodes_key, self.roots, self.targets, tuple(self.leaf_hooked))


def _ref_of(t: Tensor, index: dict, leaf_index: dict):
    """Where tensor `t` lives in the wiring, or None when it is not reached."""
    if t.grad_fn is not None:
        i = index.get(t.grad_fn)
        return None if i is None else ("n", i, t._out_index)
    acc = t._accumulator() if t._accumulator is not None else None
    li = leaf_index.get(acc) if acc is not None else None
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
        _dump.backward_built(prefix, part)
    feeds = tuple(feed_of[id(v)] + (checks,) for v, checks in zip(part.saved, _readers(g, part)))
    log.debug("built backward program: %d nodes, %d saved values (%d bytes)",
              len(part.backward.nodes), len(feeds), part.saved_bytes)
    prog = BackwardProgram(part.backward, feeds, len(w.roots), part.saved_bytes, markers)
    # per feed, the `Node.versions` entries to check: ((reader position, index), ...)
    prog.version_checks = tuple(
        tuple((r, rk + (len(nodes[r].in_types) if r_out else 0))
              for r, r_out, rk in (readers or ((i, is_out, k),)))
        for i, is_out, k, readers in feeds)
    return prog


def _readers(g: Graph, part) -> list[tuple]:
    """Version checks per saved value: one per forward op whose VJP reads it, as torch
    checks each saved variable against the version its own node saw:
    ``(node position, is_output, index)``.  One pass over the backward program (linear in
    its size: a per-saved-value scan was quadratic on deep tapes)."""
    slot = {id(p): s for s, p in enumerate(part.backward.inputs[len(g.outputs):])}
    fwd_ids: list[set] = [set() for _ in part.saved]
    for n in part.backward.nodes:
        if n.fwd_id is None:
            continue
        for u in n.inputs:
            s = slot.get(id(u))
            if s is not None:
                fwd_ids[s].add(n.fwd_id)
    by_id = {n.id: n for n in g.nodes}
    out = []
    for v, ids in zip(part.saved, fwd_ids):
        checks = set()
        for fid in ids:
            fwd = by_id.get(fid)
            if fwd is None:
                continue
            for k, u in enumerate(fwd.inputs):
                if u is v:
                    checks.add((fid, False, k))
            for k, u in enumerate(fwd.outputs):
                if u is v:
                    checks.add((fid, True, k))
        out.append(tuple(sorted(checks)))
    return out


def _program_for(nodes: list[Node], w: _Wiring) -> BackwardProgram:
    prog = _cache.get(w.key)
    if prog is None:
        with profiler.region(profiler.BUILD):
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


def _saved_values(nodes: list[Node], prog: BackwardProgram) -> list:
    """``[_saved_value(nodes, f) for f in prog.feeds]`` in one loop (the common case:
    nothing freed or modified; else `_saved_value` raises its error)."""
    out = []
    for feed, checks in zip(prog.feeds, prog.version_checks):
        n = nodes[feed[0]]
        src = n.saved_outputs if feed[1] else n.saved_inputs
        if src is None:
            raise RuntimeError(_FREED)
        for r, v in checks:
            box, seen = nodes[r].versions[v]
            if box[0] != seen:
                _saved_value(nodes, feed)   # raises the version error, naming the op
        out.append(src[feed[2]])
    return out


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
            if t.dtype.is_complex:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {t.dtype.name}; take .real, .abs() or "
                                   "pass `gradient=`")
            if _state.local.tracer is None and isinstance(t._data, np.ndarray):
                g = Tensor(np.ones(t._data.shape, t._data.dtype))   # full(shape, 1): quicker
            else:
                g = full(t.shape, 1, t.dtype)
        else:
            if not isinstance(g, Tensor):
                g = tensor(g, dtype=t.dtype)
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{list(g.shape)} and output[{i}] has a shape of {list(t.shape)}.")
            if g.dtype is not t.dtype:
                g = g.to(t.dtype)
        cts.append(g)
    return cts


def _differentiate(roots, cts, targets, retain_graph, create_graph, nodes=None, w=None):
    """Gradients of `roots` (with cotangents `cts`) for each of `targets` (None: unreached).

    ``nodes``, ``w``: `_collect(roots)` and its `_Wiring` (targets set) when the caller has
    them already."""
    if nodes is None:
        nodes = _collect(roots)
    if w is None:
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
            if run is None:
                arrays = _run_arrays(prog, nodes, w, [c._data for c in cts] + saved, None)
            else:
                with run:
                    arrays = _run_arrays(prog, nodes, w, [c._data for c in cts] + saved, run)
            grads = [Tensor(a) for a in arrays]
        for i, g in zip(wanted, grads):
            results[i] = g
    if not retain_graph:
        for n in nodes:
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
        cts = _root_cotangents(tensors, grad_tensors)
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
    grads = _differentiate(tensors, cts, targets, retain_graph, create_graph, nodes, w)
    leaf_hooks = graph_mod.LEAF_HOOKS_USED[0]
    for t, g in zip(targets, grads):
        if g is not None:
            with profiler.region(profiler.ACCUMULATE if t.grad_fn is None else profiler.RETAIN):
                if leaf_hooks and t.grad_fn is None:
                    _accumulate_with_hooks(t, g, create_graph)
                else:
                    _accumulate(t, g, create_graph)


def _accumulate_with_hooks(t: Tensor, g: Tensor, create_graph: bool) -> None:
    """AccumulateGrad with its hooks, in torch's order: the node's pre-hooks on ``(grad,)``,
    accumulation, the tensor's post-accumulate-grad hooks, the node's post-hooks."""
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


def _leaves_and_retained(nodes: list[Node], roots: list[Tensor],
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


def _accumulate(t: Tensor, g: Tensor, create_graph: bool) -> None:
    if t._grad is None:
        t._set_grad(g if create_graph else _detached(g))
    elif create_graph:
        t._set_grad(t._grad + g)
    else:
        old = t._grad
        if _plain_sum(old, g):   # what `old.add_(g)` does, without the op machinery
            with np.errstate(all="ignore"):
                old._data = old._data + g._data
            old._vc[0] += 1
            return
        with no_grad():
            if old._base is None and not old._requires_grad:
                old.add_(g)
            else:
                t._set_grad(old + g)


def _plain_sum(old: Tensor, g: Tensor) -> bool:
    """Can ``old.add_(g)`` be done on the arrays: eager NumPy values of one shape and dtype,
    `old` a plain tensor (no views, history, hooks, tangent or inference flag)."""
    a, b = old._data, g._data
    return (type(a) is np.ndarray and type(b) is np.ndarray and a.shape == b.shape
            and a.dtype == b.dtype and old._base is None and not old._views
            and not old._requires_grad and old.grad_fn is None
            and getattr(old, "_fw", None) is None and not getattr(old, "_inference", False)
            and _state.local.tracer is None)


def _detached(g: Tensor) -> Tensor:
    """`g` cut from the graph and from any view base (a gradient owns its value)."""
    if g.grad_fn is None and not g._requires_grad and g._base is None:
        return g
    out = Tensor(g._data)
    if getattr(g, "_fw", None) is not None:   # a forward-AD tangent stays (forward_ad.py)
        forward_ad.copy_tangent(out, g)
    return out


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
    with profiler.region(profiler.GRAPH_ROOT):
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
                g = zeros_like(t)
        elif not create_graph:
            g = _detached(g)
        out.append(g)
    return tuple(out)
