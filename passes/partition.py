"""Split a joint graph into the backward program and the forward values it reads.

Policy ``save_all`` (the baseline): every forward value a backward node reads
is saved; nothing is recomputed.  The backward program's inputs are the
cotangents followed by those saved values (marked ``{saved}`` in the text).
"""
from __future__ import annotations

from dataclasses import dataclass

from tracegrad.ir.graph import Graph, Node, Value

from .autodiff import Joint


@dataclass(frozen=True)
class Partition:
    """The backward program and, per saved input, the forward value it stands for."""

    backward: Graph
    saved: tuple          # forward Values, in the order of backward.inputs after the cotangents
    saved_bytes: int


def clone_nodes(nodes: list[Node], env: dict[int, Value]) -> list[Node]:
    """Copy nodes, mapping input values through `env` (id -> Value) and extending it."""
    out = []
    for n in nodes:
        c = Node(n.op, [env.get(id(v), v) for v in n.inputs], dict(n.attrs),
                 [o.type for o in n.outputs], n.loc, n.fwd_id, n.id)
        c.region = n.region
        for o, co in zip(n.outputs, c.outputs):
            env[id(o)] = co
        out.append(c)
    return out


def partition(joint: Joint) -> Partition:
    g = joint.graph
    ct_ids = {id(c) for c in joint.cotangents}
    forward_values = {id(v) for v in g.inputs if id(v) not in ct_ids}
    for n in g.nodes:
        if id(n) in joint.forward:
            forward_values.update(id(o) for o in n.outputs)
    bwd_nodes = [n for n in g.nodes if id(n) not in joint.forward]
    saved: list[Value] = []
    seen = set()
    for v in [v for n in bwd_nodes for v in n.inputs] + list(g.outputs):
        if id(v) in forward_values and id(v) not in seen:
            seen.add(id(v))
            saved.append(v)
    bwd = Graph(name=g.name.replace("_joint", "") + "_backward")
    env: dict[int, Value] = {}
    for c in joint.cotangents:
        env[id(c)] = bwd.add_input(c.type)
    for v in saved:
        env[id(v)] = nv = bwd.add_input(v.type)
        bwd.saved.add(id(nv))
    bwd.nodes = clone_nodes(bwd_nodes, env)
    bwd.outputs = [env[id(v)] for v in g.outputs]
    return Partition(bwd, tuple(saved), sum(v.type.nbytes for v in saved))
