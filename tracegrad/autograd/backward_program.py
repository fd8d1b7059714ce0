"""Backward programs of tapes: built from the wiring, cached by its key, run on arrays.

`_build_program` rebuilds the forward IR graph of a reachable tape (hook marks and
custom-Function nodes included, see hooks.py) and runs the pass pipeline
(`passes.build_backward`); the program records, per saved input, a `Feed`: where its
value lives on the tape and which readers' versions to check before it is read
(saved_values.py).
"""
from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import NamedTuple

import numpy as np

from tracegrad.ir.graph import Graph, Node as IRNode
from tracegrad.ir.jax_caches import programs_evicted
from tracegrad.passes import build_backward, settings

from .. import _dump, _state
from ..backends import device_arrays
from ..backends.buffers import distinct
from ..backends.executable import Executable
from . import anomaly, hooks, profiler
from .function import CUSTOM_FUNCTION
from .graph import TapeNode
from .wiring import LeafRef, NodeRef, _Wiring

log = logging.getLogger("tracegrad.autograd")


class SavedSlot(NamedTuple):
    """A value a tape node holds: input (or, with `is_output`, output) `index` of the node
    at position `node`."""

    node: int
    is_output: bool
    index: int


class Feed(NamedTuple):
    """A saved input of a backward program: the tape slot its value is read from, and the
    slots of the forward ops whose VJP reads it (`readers`; each is checked against the
    version its node saw; empty: the slot itself is checked)."""

    node: int
    is_output: bool
    index: int
    readers: tuple

    def checked(self) -> tuple:
        """The slots whose versions are checked before the value is read."""
        return self.readers or (SavedSlot(self.node, self.is_output, self.index),)


class VersionCheck(NamedTuple):
    """One version check of a feed: entry `slot` of ``TapeNode.versions`` of tape node `node`."""

    node: int
    slot: int


CACHE_SIZE = 512

# The "auto" executor's promotion rule (ski rental): a program runs on the NumPy
# interpreter (no compile) until the interpreter time it has used reaches what its XLA
# compile is expected to cost, then on jax for good.  A program run once never compiles,
# and with an exact estimate no program costs more than twice what the better of
# "never compile" and "compile at once" would have (the rent paid, then the purchase).
# The third-run rule before compiled every program seen three times: an actor-critic
# episode's 1367-node backward program, interpreted in ~5 ms, paid ~5 s of XLA compile.
#
# The cost model: seconds of the first jax call (trace + lowering + XLA compile, minus a
# steady call), measured twice per backward program on this 2-core machine (load 3-5),
# nodes -> seconds: the benchmarks' training steps mlp 35 -> 0.37-0.51, lstm 40 ->
# 1.10-1.18, cnn 63 -> 1.44-1.55, transformer 293 -> 1.86-2.28; pytorch/examples' MNIST
# 65 -> 1.07-1.14 and DCGAN 243 -> 1.61, 268 -> 3.6-4.1; actor-critic episodes 512 ->
# 1.94, 1367 -> 4.0-6.3; elementwise chains 27 -> 0.18-0.22, 102 -> 0.17-0.29, 402 ->
# 0.48-0.65.  Least squares over the 26 figures: 0.75 s + 3.2 ms per node.  Programs
# with convolutions compile up to 2x slower than the fit, elementwise chains 2-3x faster;
# an underestimate only promotes sooner (as the old third-run rule did).  The threshold
# is the estimate itself (factor 1, the classic ski-rental point): a steady jax run
# measured 5-20% of the interpreter's on these programs (0.3-0.6 on the chains), so the
# break-even compile / (1 - jax/interpreter) is within 1.25x of it, inside the fit's noise.
COMPILE_S_BASE = 0.75
COMPILE_S_PER_NODE = 0.0032
_clock = time.perf_counter   # tests replace it by a fake clock (deterministic promotion)


def compile_estimate(prog: "BackwardProgram") -> float:
    """Seconds the first jax run of `prog` is expected to cost (see the model above)."""
    return COMPILE_S_BASE + COMPILE_S_PER_NODE * len(prog.graph.nodes)


def auto_executor(prog: "BackwardProgram") -> str:
    """The executor "auto" runs `prog` on next: "jax" once the interpreter time spent on it
    reaches `compile_estimate`, else "interpreter".  ``TRACEGRAD_HOT_AFTER=N`` (an int)
    replaces the rule by a run count: jax from the program's run N + 1 (the rule before,
    N = 2; deterministic, for tests and comparisons).  The one place of the rule: the
    profiler's event args (profiler_programs.py) read it too."""
    hot_after = settings.hot_after()
    if hot_after is not None:
        return "jax" if prog.runs >= hot_after else "interpreter"
    return "jax" if prog.interpreted_s >= compile_estimate(prog) else "interpreter"


class BackwardProgram:
    """A cached backward program and what it reads from the tape."""

    def __init__(self, graph: Graph, feeds: tuple, n_cotangents: int, saved_bytes: int,
                 markers: dict | None = None):
        self.graph = graph
        self.feeds = feeds   # per saved input: a `Feed`
        self.n_cotangents = n_cotangents
        self.saved_bytes = saved_bytes
        self.markers = markers or {}   # forward id of a hook mark -> ("node", i) | ("leaf", li)
        self.host = any(n.op == hooks.HOST for n in graph.nodes)
        self.hook_calls = hooks.hook_calls(graph) if self.host else frozenset()
        self.runs = 0
        self.interpreted_s = 0.0   # wall time of its interpreter runs ("auto": auto_executor)
        self._exe = Executable(graph, pack_small=True)   # many small saved values: see jax_backend
        self._steps = None
        self._nan_plan = None
        self.version_checks = ()   # per feed, its `VersionCheck`s (set by _build_program)

    def nan_plan(self) -> list:
        if self._nan_plan is None:
            self._nan_plan = anomaly.nan_plan(self.graph)
        return self._nan_plan

    def run_arrays(self, arrays: list, run: hooks.BackwardRun | None = None) -> list[np.ndarray]:
        """The gradients, each its own buffer (two equal gradients CSE merged, or one that is
        the cotangent passed through, become ``.grad`` tensors: backends/buffers.py)."""
        return distinct(self._run_arrays(arrays, run), arrays)

    def _run_arrays(self, arrays: list, run: hooks.BackwardRun | None) -> list[np.ndarray]:
        on_device = device_arrays.first_device_array(arrays)
        if on_device is not None:
            if _state.local.anomaly:   # node by node on NumPy: host copies in, the
                dev = on_device.device   # gradients back on the device of the values
                outs = self._run_arrays([device_arrays.host(a) for a in arrays], run)
                return [device_arrays.put(o, dev) for o in outs]
            self.runs += 1   # device values: on jax from the first run (Executable.run;
            return self._run_on(arrays, run, "jax")   # hooks' host calls get device tensors)
        executor = _state.get_executor()
        if _state.local.anomaly:   # node by node on NumPy, with checks
            self.runs += 1
            return anomaly.run(self, arrays, run)
        if executor == "auto":
            executor = auto_executor(self)
        self.runs += 1
        if executor != "interpreter":
            return self._run_on(arrays, run, executor)
        start = _clock()
        try:
            return self._run_on(arrays, run, executor)
        finally:
            self.interpreted_s += _clock() - start

    def _run_on(self, arrays: list, run: hooks.BackwardRun | None, executor: str) -> list:
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


def _build_program(nodes: list[TapeNode], w: _Wiring) -> BackwardProgram:
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
    reach = None   # per node, per input edge: does a gradient flow to a target (_reaching)

    def mark(v, attrs: dict, owner: tuple):
        mid = len(nodes) + len(markers)
        markers[mid] = owner
        m = IRNode(hooks.TENSOR_HOOKS.name, [v], attrs, [v.type], None, id=mid)
        g.nodes.append(m)
        feed_of[id(m.outputs[0])] = feed_of[id(v)]
        return m.outputs[0]

    for i, (n, refs) in enumerate(zip(nodes, w.refs)):
        ins = []
        new_marks = []   # hooked leaves first used here
        for k, r in enumerate(refs):
            kind = type(r)
            if kind is NodeRef:
                v = outs[r.node][r.output]
            elif kind is LeafRef and leaf_vals[r.leaf] is not None:
                v = leaf_vals[r.leaf]
            else:
                v = g.add_input(n.in_types[k])
                feed_of[id(v)] = SavedSlot(i, False, k)
                if kind is LeafRef:
                    leaf_raw[r.leaf] = leaf_vals[r.leaf] = v
                    if r.leaf in hooked_leaves:
                        new_marks.append(r.leaf)
            ins.append(v)
        if new_marks:
            # marks in reverse input order: autodiff emits them last-first, so the leaves'
            # host calls run in input order, as torch's engine runs the AccumulateGrads
            for li in reversed(new_marks):
                leaf_vals[li] = mark(leaf_raw[li], {"node": -1, "index": li, "leaf": True},
                                     ("leaf", li))
            ins = [leaf_vals[r.leaf] if type(r) is LeafRef else v for r, v in zip(refs, ins)]
        attrs = n.attrs if n.op is not CUSTOM_FUNCTION else dict(n.attrs, node=i)
        sig = w.hooks.get(i)
        if sig is not None and (sig[0] or sig[1]):
            if reach is None:
                reach = _reaching(nodes, w)
            node = IRNode(hooks.NODE_HOOKS.name, ins, {
                "node": i, "op": n.op.name, "op_attrs": tuple(attrs.items()),
                "out_types": tuple(n.out_types), "needs": reach[i],
                "pre": sig[0], "post": sig[1]}, n.out_types, n.loc, id=i)
        else:
            node = IRNode(n.op.name, ins, attrs, n.out_types, n.loc, id=i)
        g.nodes.append(node)
        for j, o in enumerate(node.outputs):
            feed_of[id(o)] = SavedSlot(i, True, j)
        raw_outs.append(node.outputs)
        consumed = list(node.outputs)
        hooked = sig[2] if sig is not None else ()
        if hooked and len(node.outputs) > 1:
            # every differentiable output, so that when the node runs the hooks of an output
            # no gradient reached are called with None, as torch (hooks.call)
            hooked = [k for k, t in enumerate(n.out_types) if t.dtype.is_differentiable]
        for k in hooked:
            consumed[k] = mark(consumed[k], {"node": i, "index": k, "leaf": False}, ("node", i))
        outs.append(consumed)

    def value(ref, raw: bool):
        if type(ref) is NodeRef:
            return (raw_outs if raw else outs)[ref.node][ref.output]
        return (leaf_raw if raw else leaf_vals)[ref.leaf]

    g.outputs = [value(r, False) for r in w.roots]
    wrt = [value(r, True) for r in w.targets]
    prefix = None
    if _dump.directory() is not None:   # TRACEGRAD_DUMP: this program and each pass
        prefix = f"backward_{_dump.short_hash(repr(w.key))}"
    part = build_backward(g, wrt, on_pass=_dump.pass_writer(prefix) if prefix else None)
    if prefix:
        _dump.backward_built(prefix, part)
    feeds = tuple(Feed(*feed_of[id(v)], readers)
                  for v, readers in zip(part.saved, _readers(g, part)))
    log.debug("built backward program: %d nodes, %d saved values (%d bytes)",
              len(part.backward.nodes), len(feeds), part.saved_bytes)
    prog = BackwardProgram(part.backward, feeds, len(w.roots), part.saved_bytes, markers)
    prog.version_checks = tuple(
        tuple(VersionCheck(r, rk + (len(nodes[r].in_types) if r_out else 0))
              for r, r_out, rk in f.checked())
        for f in feeds)
    return prog


def _reaching(nodes: list[TapeNode], w: _Wiring) -> list[tuple]:
    """Per node, per input edge, whether it leads to a target: a node's post-hooks get None
    for the other inputs, as torch's engine computes no gradient there (``inputs=``)."""
    wanted_leaves = {r.leaf for r in w.targets if isinstance(r, LeafRef)}
    wanted_outs = {(r.node, r.output) for r in w.targets if isinstance(r, NodeRef)}
    pos, leaf_pos = w.index, w.leaf_index
    reaches = [False] * len(nodes)
    out = []
    for i, n in enumerate(nodes):   # producers come first
        row = []
        for e in n.edges:
            if e is None:
                row.append(False)
                continue
            j = pos.get(e[0])
            hit = (reaches[j] or (j, e[1]) in wanted_outs if j is not None
                   else leaf_pos.get(e[0]) in wanted_leaves)
            row.append(hit)
        reaches[i] = any(row)
        out.append(tuple(row))
    return out


def _readers(g: Graph, part) -> list[tuple]:
    """Version checks per saved value: one `SavedSlot` per forward op whose VJP reads it, as
    torch checks each saved variable against the version its own node saw.  One pass over
    the backward program (linear in its size: a per-saved-value scan was quadratic on deep
    tapes)."""
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
                    checks.add(SavedSlot(fid, False, k))
            for k, u in enumerate(fwd.outputs):
                if u is v:
                    checks.add(SavedSlot(fid, True, k))
        out.append(tuple(sorted(checks)))
    return out


def _program_for(nodes: list[TapeNode], w: _Wiring) -> BackwardProgram:
    prog = _cache.get(w.key)
    if prog is None:
        with profiler.region(profiler.BUILD):
            prog = _build_program(nodes, w)
        _cache[w.key] = prog
        if len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)   # its jax function, jaxpr and executable go with it
            programs_evicted()           # and what jax kept for it (ir/jax_caches.py)
    else:
        _cache.move_to_end(w.key)
    return prog
