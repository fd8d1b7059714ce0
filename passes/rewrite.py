"""A small forward rewriting driver shared by the local passes (simplify, CSE).

`rewrite(g, rule)` walks the nodes in order with their inputs already
rewritten; `rule(b, node, ins)` returns either a Value that replaces the
node's single output (it may build new nodes with the builder `b`, which
appends them to the output graph right here, stamped with the node's
provenance) or None (the node is kept, with rewritten inputs).  Pure:
returns a new Graph and the number of nodes replaced.
"""
from __future__ import annotations

from typing import Callable

from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph, Node, Value


def rewrite(g: Graph, rule: Callable, on_kept: Callable | None = None) -> tuple[Graph, int]:
    """See the module docstring; `on_kept(node)` sees each node that stays (as copied)."""
    out = Graph(g.name, list(g.inputs), [], [], set(g.saved))
    b = Builder(out)
    env: dict[int, Value] = {}
    replaced = 0
    for n in g.nodes:
        ins = [env.get(id(v), v) for v in n.inputs]
        b.loc, b.fwd_id = n.loc, n.fwd_id
        new = rule(b, n, ins) if len(n.outputs) == 1 else None
        if new is not None:
            env[id(n.outputs[0])] = new
            replaced += 1
            continue
        if all(a is c for a, c in zip(ins, n.inputs)):
            c = n
        else:
            c = Node(n.op, ins, n.attrs, [o.type for o in n.outputs], n.loc, n.fwd_id, n.id)
            c.region = n.region
            for o, co in zip(n.outputs, c.outputs):
                env[id(o)] = co
        out.nodes.append(c)
        if on_kept is not None:
            on_kept(c)
    out.outputs = [env.get(id(v), v) for v in g.outputs]
    return out, replaced
