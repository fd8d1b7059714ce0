"""Reverse-mode autodiff: forward graph -> joint forward+backward graph.

For each forward node, in reverse order, the op's VJP rule emits backward
nodes (stamped with the forward node's source location and id).  Cotangents
of values used more than once are summed; a cotangent computed at a
broadcast shape is summed back to its input's shape (sum_to_size); one of a
different dtype is converted.  Only nodes on a path from `wrt` to the
outputs are differentiated.

Cotangents that are `slice_backward`s of disjoint slices along one dim (the pieces of
a `split`/`unbind`/`chunk`, a recurrent layer's time steps) are not summed as padded
full-size tensors, which costs O(pieces^2) memory traffic: they are kept until the
value's producer is reached and become one `cat` (zeros filling any gaps).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tracegrad.ir.builder import Builder
from tracegrad.ir.errors import with_location
from tracegrad.ir.graph import Graph, Node, Value
from tracegrad.ir.registry import NotImplementedGrad, get


@dataclass(frozen=True)
class Joint:
    """A joint program: forward nodes, then backward nodes.

    Attributes:
        graph: inputs = forward inputs + one cotangent per forward output;
            outputs = one gradient per `wrt` value.
        forward: identities (id) of the forward nodes.
        cotangents: the cotangent input values, one per forward output.
        passes: the `PassRecord`s of the pipeline that built it (`optimized_joint`).
    """

    graph: Graph
    forward: frozenset
    cotangents: tuple
    passes: tuple = ()


@dataclass(frozen=True)
class AutodiffReport:
    """What autodiff did: backward nodes emitted (by VJP rules, cotangent sums, zeros) and
    gradients (program outputs) it returns."""

    backward_nodes: int
    gradients: int


def depends_on(g: Graph, wrt: list[Value]) -> set[int]:
    """ids of the values that depend differentiably on any of `wrt`."""
    live = {id(v) for v in wrt}
    for n in g.nodes:
        if get(n.op).differentiable and any(id(v) in live for v in n.inputs):
            live.update(id(o) for o in n.outputs)
    return live


def _slice_dim(g: Value) -> int | None:
    """The one dim a unit-step `slice_backward` `g` places its input along (the other dims
    whole), or None."""
    node = g.node
    if node is None or node.op != "slice_backward":
        return None
    a = node.attrs
    if any(st != 1 for st in a["steps"]):
        return None
    partial = [d for d, (lo, hi, n) in enumerate(zip(a["starts"], a["stops"], a["shape"]))
               if (lo, hi) != (0, n)]
    return partial[0] if len(partial) == 1 else None


def _merge_slices(b: Builder, pieces: list, v: Value) -> list:
    """Sum `slice_backward` cotangent pieces of `v`: per dim, disjoint pieces become one
    `cat` (zeros in the gaps, a `slice_backward` when they do not span the dim); returns
    the values left to add."""
    by_dim: dict[int, list] = {}
    for g in pieces:
        by_dim.setdefault(_slice_dim(g), []).append(g)
    out = []
    for d, group in by_dim.items():
        group.sort(key=lambda g: g.node.attrs["starts"][d])
        bounds = [(g.node.attrs["starts"][d], g.node.attrs["stops"][d]) for g in group]
        if len(group) == 1 or any(hi > lo for (_, hi), (lo, _) in zip(bounds, bounds[1:])):
            out += group      # one piece, or overlapping ones: summed as they are
            continue
        parts, at = [], bounds[0][0]
        for g, (lo, hi) in zip(group, bounds):
            if lo > at:
                gap = list(v.shape)
                gap[d] = lo - at
                parts.append(b.full(tuple(gap), 0, g.dtype))
            parts.append(g.node.inputs[0])
            at = hi
        merged = b.cat(parts, d)
        first, last = bounds[0][0], bounds[-1][1]
        if (first, last) != (0, v.shape[d]):
            starts, stops = [0] * len(v.shape), list(v.shape)
            starts[d], stops[d] = first, last
            merged = b.slice_backward(merged, tuple(v.shape), tuple(starts), tuple(stops),
                                      (1,) * len(v.shape))
        out.append(merged)
    return out


def autodiff(fwd: Graph, wrt: list[Value]) -> Joint:
    """Build the joint graph computing d(fwd.outputs)/d(wrt) given output cotangents."""
    joint = Graph(name=f"{fwd.name}_joint", inputs=list(fwd.inputs), nodes=list(fwd.nodes))
    cts = tuple(joint.add_input(o.type) for o in fwd.outputs)
    live = depends_on(fwd, wrt)
    ct_of: dict[int, Value] = {}
    pieces: dict[int, list] = {}      # slice_backward cotangents not summed yet, by value
    b = Builder(joint)

    def add(v: Value, g: Value) -> None:
        prev = ct_of.get(id(v))
        ct_of[id(v)] = g if prev is None else b.add(prev, g)

    def accumulate(v: Value, g: Value) -> None:
        if g.shape != v.shape:
            g = b.sum_to_size(g, v.shape)
        if g.dtype is not v.dtype:
            g = b.convert(g, v.dtype)
        if _slice_dim(g) is not None:
            pieces.setdefault(id(v), []).append(g)
        else:
            add(v, g)

    def cotangent(v: Value) -> Value | None:
        waiting = pieces.pop(id(v), None)
        if waiting:
            for g in (waiting if len(waiting) == 1 else _merge_slices(b, waiting, v)):
                add(v, g)
        return ct_of.get(id(v))

    for o, ct in zip(fwd.outputs, cts):
        if id(o) in live:
            accumulate(o, ct)

    for index in range(len(fwd.nodes) - 1, -1, -1):
        node = fwd.nodes[index]
        outs = [cotangent(o) for o in node.outputs]
        if all(c is None for c in outs) or not any(id(v) in live for v in node.inputs):
            continue
        b.loc, b.fwd_id = node.loc, node.id if node.id is not None else index
        outs = [c if c is not None else b.full(o.shape, 0, o.dtype) for c, o in zip(outs, node.outputs)]
        ct = outs[0] if len(outs) == 1 else tuple(outs)
        grads = get(node.op).vjp(b, ct, *node.inputs, *node.outputs, **node.attrs)
        for v, g in zip(node.inputs, grads):
            if type(g) is NotImplementedGrad:   # torch has no formula for this input
                if id(v) in live:
                    raise with_location(g.error(), node.loc)
            elif g is not None and id(v) in live:
                accumulate(v, g)

    b.loc = b.fwd_id = None
    joint.outputs = [cotangent(w) or b.full(w.shape, 0, w.dtype) for w in wrt]
    return Joint(joint, frozenset(id(n) for n in fwd.nodes), cts)


def autodiff_pass(wrt: list[Value], keep: list) -> Callable:
    """`autodiff` as a pass manager step ``fwd graph -> (joint graph, AutodiffReport)``;
    the `Joint` is appended to `keep` (the later steps need its forward and cotangents)."""
    def step(fwd: Graph):
        joint = autodiff(fwd, wrt)
        keep.append(joint)
        added = len(joint.graph.nodes) - len(fwd.nodes)
        return joint.graph, AutodiffReport(added, len(wrt))
    return step
