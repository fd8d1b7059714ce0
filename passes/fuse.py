"""Fusion: group chains of elementwise ops into fusion regions.

A node joins the region of the node producing one of its inputs when its op
declares a fusion role (`OpDef.fusion`: elementwise, or a broadcast) and it
iterates over the same shape; a reduction role (sum, amax) over that shape
may close a region.  Values read
only inside their region (its interior) then never need to exist as whole
arrays.  Regions are marked on the nodes
(``node.region``; ``{fusion=N}`` in the IR text).

The jax lowering emits a region's nodes inline (XLA fuses them); the
interpreter evaluates a region in row blocks, so its interior values only
ever exist one block at a time (see backends/interpreter.py).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from tracegrad.ir.graph import Graph, Node
from tracegrad.ir.registry import Fusion, get


@dataclass(frozen=True)
class FuseReport:
    regions: int
    fused_nodes: int


_KIND = {Fusion.ELEMENTWISE: "ew", Fusion.BROADCAST: "bcast", Fusion.REDUCE_SUM: "reduce",
         Fusion.REDUCE_MAX: "reduce", None: None}


def _kind(n: Node) -> str | None:
    """How the node takes part in a region: "ew", "bcast", "reduce" or None (never)."""
    return _KIND[get(n.op).fusion]


def _region_shape(n: Node) -> tuple:
    """The shape a node iterates over: its output's, or a reduction's input's."""
    return tuple(n.inputs[0].shape) if _kind(n) == "reduce" else tuple(n.outputs[0].shape)


def fuse(g: Graph) -> tuple[Graph, FuseReport]:
    """Assign fusion regions (on copies of the nodes; the input graph is not changed)."""
    users: dict[int, list[Node]] = {}
    for n in g.nodes:
        for v in n.inputs:
            users.setdefault(id(v), []).append(n)
    outputs = {id(v) for v in g.outputs}
    region_of: dict[int, int] = {}      # id(node) -> region
    closed: set[int] = set()            # regions ended by a reduction
    sizes: dict[int, int] = {}
    shape_of: dict[int, tuple] = {}     # the iteration shape of each region
    parent: dict[int, int] = {}         # union-find: regions merged through a shared consumer

    def find(r: int) -> int:
        while parent[r] != r:
            r = parent[r]
        return r

    for n in g.nodes:
        kind = _kind(n)
        if kind is None:
            continue
        joined = None
        for v in n.inputs:   # join (and merge) the open regions of same-shape producers
            r = region_of.get(id(v.node)) if v.node is not None else None
            r = find(r) if r is not None else None
            if r is None or r in closed or shape_of[r] != _region_shape(n) or r == joined:
                continue
            if joined is None:
                joined = r
            else:
                parent[r] = joined
                sizes[joined] += sizes.pop(r)
        if joined is None:
            if kind == "reduce":
                continue            # a lone reduction is no region
            joined = len(parent)
            parent[joined] = joined
            sizes[joined] = 0
            shape_of[joined] = _region_shape(n)
        region_of[id(n)] = joined
        sizes[joined] += 1
        if kind == "reduce":
            closed.add(joined)
    # a region of one node fuses nothing: drop it; number the rest densely
    renumber = {r: i for i, r in enumerate(r for r, k in sizes.items() if k > 1)}
    region_of = {k: find(r) for k, r in region_of.items()}
    env: dict = {}
    nodes = []
    for n in g.nodes:
        c = Node(n.op, [env.get(id(v), v) for v in n.inputs], n.attrs,
                 [o.type for o in n.outputs], n.loc, n.fwd_id, n.id)
        c.region = renumber.get(region_of.get(id(n)))
        for o, co in zip(n.outputs, c.outputs):
            env[id(o)] = co
        nodes.append(c)
    out = Graph(g.name, list(g.inputs), _schedule(nodes), [env.get(id(v), v) for v in g.outputs],
                set(g.saved))
    fused = sum(k for r, k in sizes.items() if r in renumber)
    return out, FuseReport(regions=len(renumber), fused_nodes=fused)


def _schedule(nodes: list[Node]) -> list[Node]:
    """A topological order keeping each region's nodes together where dependencies allow.

    Kahn's algorithm: among ready nodes, prefer one of the region just being
    emitted, else constants (nodes without inputs, so they never split a
    region), else the earliest in the original order.
    """
    key = {id(n): (bool(n.inputs), i) for i, n in enumerate(nodes)}
    producer = {id(o): n for n in nodes for o in n.outputs}
    deps = {id(n): {id(producer[id(v)]) for v in n.inputs if id(v) in producer} for n in nodes}
    waiting = {k: len(d) for k, d in deps.items()}
    consumers: dict[int, list[Node]] = {}
    for n in nodes:
        for p in deps[id(n)]:
            consumers.setdefault(p, []).append(n)
    ready: list = []
    by_region: dict[int, list] = {}

    def push(n: Node) -> None:
        heapq.heappush(ready, key[id(n)])
        if n.region is not None:
            by_region.setdefault(n.region, []).append(key[id(n)])

    for n in nodes:
        if waiting[id(n)] == 0:
            push(n)
    done: set = set()
    order: list[Node] = []
    current = None
    while len(order) < len(nodes):
        k = None
        pending = by_region.get(current) if current is not None else None
        while pending and k is None:
            j = pending.pop()
            k = None if j in done else j
        while k is None:
            j = heapq.heappop(ready)
            k = None if j in done else j
        done.add(k)
        n = nodes[k[1]]
        order.append(n)
        current = n.region
        for c in consumers.get(id(n), []):
            waiting[id(c)] -= 1
            if waiting[id(c)] == 0:
                push(c)
    return order

