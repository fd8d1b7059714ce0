"""Reverse-mode autodiff: forward graph -> joint forward+backward graph.

For each forward node, in reverse order, the op's VJP rule emits backward
nodes (stamped with the forward node's source location and id).  Cotangents
of values used more than once are summed; a cotangent computed at a
broadcast shape is summed back to its input's shape (sum_to_size); one of a
different dtype is converted.  Only nodes on a path from `wrt` to the
outputs are differentiated.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph, Node, Value
from tracegrad.ir.registry import get


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


def autodiff(fwd: Graph, wrt: list[Value]) -> Joint:
    """Build the joint graph computing d(fwd.outputs)/d(wrt) given output cotangents."""
    joint = Graph(name=f"{fwd.name}_joint", inputs=list(fwd.inputs), nodes=list(fwd.nodes))
    cts = tuple(joint.add_input(o.type) for o in fwd.outputs)
    live = depends_on(fwd, wrt)
    ct_of: dict[int, Value] = {}
    b = Builder(joint)

    def accumulate(v: Value, g: Value) -> None:
        if g.shape != v.shape:
            g = b.sum_to_size(g, v.shape)
        if g.dtype is not v.dtype:
            g = b.convert(g, v.dtype)
        prev = ct_of.get(id(v))
        ct_of[id(v)] = g if prev is None else b.add(prev, g)

    for o, ct in zip(fwd.outputs, cts):
        if id(o) in live:
            accumulate(o, ct)

    for index in range(len(fwd.nodes) - 1, -1, -1):
        node = fwd.nodes[index]
        outs = [ct_of.get(id(o)) for o in node.outputs]
        if all(c is None for c in outs) or not any(id(v) in live for v in node.inputs):
            continue
        b.loc, b.fwd_id = node.loc, node.id if node.id is not None else index
        outs = [c if c is not None else b.full(o.shape, 0, o.dtype) for c, o in zip(outs, node.outputs)]
        ct = outs[0] if len(outs) == 1 else tuple(outs)
        grads = get(node.op).vjp(b, ct, *node.inputs, *node.outputs, **node.attrs)
        for v, g in zip(node.inputs, grads):
            if g is not None and id(v) in live:
                accumulate(v, g)

    b.loc = b.fwd_id = None
    joint.outputs = [ct_of.get(id(w)) or b.full(w.shape, 0, w.dtype) for w in wrt]
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
