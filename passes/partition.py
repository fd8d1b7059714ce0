"""Split a joint graph into the backward program and the forward values it reads.

Policies:

- ``"save_all"``: every forward value a backward node reads is saved; nothing
  is recomputed (the baseline, what a plain tape does).
- ``"min_bytes"`` (default): a minimum cut over the forward graph decides which
  values to save and which to recompute in the backward program from saved
  ones, minimizing saved bytes (shape x dtype size, so a bool mask costs a
  quarter of a float32).  Only cheap ops (flag CHEAP: elementwise, shape
  ops, casts, cheap reductions; never matmul, sort or random ops) are
  recomputed.  Program inputs (parameters, data) cost nothing: they are kept
  anyway.  This is the formulation of PyTorch's AOTAutograd min-cut
  partitioner; the cost model is written down in docs/passes.md.
- ``"save_names"``: like min_bytes, but values tagged with
  ``tg.checkpoint_name`` (all, or those in `names`) cost nothing to save and
  win ties against program inputs (jax.checkpoint's ``save_only_these_names``
  in spirit).

Forward nodes listed in `recompute` (a ``tg.utils.checkpoint`` region's
interior) are recomputed whatever their cost: their outputs are never saved.

The backward program's inputs are the cotangents followed by the saved
values (marked ``{saved}`` in the text); recomputed forward nodes come first
in its body.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from tracegrad.ir.graph import Graph, Node, Value
from tracegrad.ir.ops.shape import CHECKPOINT_NAME
from tracegrad.ir.registry import ALIAS, CHEAP, RANDOM, get

from .autodiff import Joint

POLICIES = ("min_bytes", "save_all", "save_names")


@dataclass(frozen=True)
class Partition:
    """The backward program and, per saved input, the forward value it stands for.

    Attributes:
        backward: the backward program (cotangents, then saved values -> gradients).
        saved: forward Values, in the order of backward.inputs after the cotangents.
        saved_bytes: bytes of the saved values that are not program inputs.
        recomputed: forward nodes the backward program recomputes.
        reasons: per saved value (by id), why it is saved rather than recomputed.
        passes: the `PassRecord`s of the pipeline that built it, autodiff to fuse
            (filled in by `passes.build_backward`; empty from `partition` itself).
    """

    backward: Graph
    saved: tuple
    saved_bytes: int
    recomputed: tuple = ()
    reasons: dict = field(default_factory=dict)
    passes: tuple = ()

    def report(self, policy: str) -> "PartitionReport":
        return PartitionReport(policy, len(self.saved), self.saved_bytes, len(self.recomputed))


@dataclass(frozen=True)
class PartitionReport:
    """What the partition pass did: the policy, how many values (and bytes) it saved and
    how many forward nodes the backward program recomputes."""

    policy: str
    saved: int
    saved_bytes: int
    recomputed: int


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


def recomputable(n: Node) -> bool:
    flags = get(n.op).flags
    return bool(flags & CHEAP) and not flags & RANDOM


def partition(joint: Joint, *, policy: str = "save_all", names: frozenset = frozenset(),
              recompute: frozenset = frozenset()) -> Partition:
    """Choose saved values by `policy` (see the module docstring) and build the backward program."""
    if policy not in POLICIES:
        raise ValueError(f"partition: unknown policy {policy!r}; expected one of {POLICIES}")
    g = joint.graph
    ct_ids = {id(c) for c in joint.cotangents}
    inputs = {id(v) for v in g.inputs if id(v) not in ct_ids}
    fwd_nodes = [n for n in g.nodes if id(n) in joint.forward]
    bwd_nodes = [n for n in g.nodes if id(n) not in joint.forward]
    producer = {id(o): n for n in fwd_nodes for o in n.outputs}
    # an ALIAS op's output is its operand's value: the backward reads the operand instead,
    # so a program input behind one (an index behind its index_check) costs nothing to save
    alias: dict[int, Value] = {}
    for n in fwd_nodes:
        if get(n.op).flags & ALIAS:
            alias[id(n.outputs[0])] = alias.get(id(n.inputs[0]), n.inputs[0])
    needed: list[Value] = []
    seen = set()
    for v in [v for n in bwd_nodes for v in n.inputs] + list(g.outputs):
        v = alias.get(id(v), v)
        if (id(v) in inputs or id(v) in producer) and id(v) not in seen:
            seen.add(id(v))
            needed.append(v)
    if policy == "save_all" and not recompute:
        saved, recomputed = needed, []
    else:
        saved, recomputed = _min_cut(g, fwd_nodes, needed, inputs, producer, policy, names,
                                     recompute)
    # a value saved behind ALIAS ops is saved as their source (once)
    saved = list({id(v): v for v in (alias.get(id(v), v) for v in saved)}.values())
    reasons = {id(v): _reason(v, inputs, producer, policy, names) for v in saved}
    bwd = Graph(name=g.name.replace("_joint", "") + "_backward")
    env: dict[int, Value] = {}
    for c in joint.cotangents:
        env[id(c)] = bwd.add_input(c.type)
    for v in saved:
        env[id(v)] = nv = bwd.add_input(v.type)
        bwd.saved.add(id(nv))
    _through_aliases(alias, env)   # recomputed and backward nodes read the sources
    recomputed_nodes = clone_nodes(recomputed, env)
    _through_aliases(alias, env)
    bwd.nodes = recomputed_nodes + clone_nodes(bwd_nodes, env)
    bwd.outputs = [env[id(v)] for v in g.outputs]
    saved_bytes = sum(v.type.nbytes for v in saved if id(v) not in inputs)
    return Partition(bwd, tuple(saved), saved_bytes, tuple(recomputed), reasons)


def _through_aliases(alias: dict, env: dict) -> None:
    """Map each ALIAS output to the backward's value of its source, where it has one."""
    for key, v in alias.items():
        if id(v) in env:
            env[key] = env[id(v)]


def _named(n: Node, policy: str, names: frozenset) -> bool:
    """A checkpoint_name value the save_names policy keeps (all names unless `names` given)."""
    return policy == "save_names" and (not names or n.attrs["name"] in names)


def _reason(v: Value, inputs, producer, policy, names) -> str:
    if id(v) in inputs:
        return "program input (kept anyway, costs nothing)"
    n = producer[id(v)]
    if n.op == CHECKPOINT_NAME and _named(n, policy, names):
        return f"named {n.attrs['name']!r} by checkpoint_name"
    if not recomputable(n):
        return f"output of {n.op}, which is never recomputed"
    if policy == "save_all":
        return "policy save_all"
    return "fewer bytes to save than the values it would be recomputed from"


def _min_cut(g, fwd_nodes, needed, inputs, producer, policy, names, recompute):
    """Saved values and recomputed forward nodes from a minimum s-t cut.

    Network: each forward value v is an edge v_in -> v_out with capacity = its bytes
    (0 for program inputs); an op's inputs feed its outputs (infinite edges); values
    that must be computed in the forward (program inputs, outputs of ops that are
    never recomputed) hang off the source; values the backward reads lead to the sink.
    The cut edges are the saved values; what lies on the sink side is recomputed.
    """
    if not needed:   # the backward reads no forward value (e.g. of an add): nothing to cut
        return [], []
    net = nx.DiGraph()
    src, sink = "source", "sink"

    def vin(v):
        return (id(v), 0)

    def vout(v):
        return (id(v), 1)

    values = {id(v): v for v in g.inputs if id(v) in inputs}
    for n in fwd_nodes:
        for o in n.outputs:
            values[id(o)] = o
    for key, v in values.items():
        n = producer.get(key)
        if n is not None and id(n) in recompute:
            net.add_edge(vin(v), vout(v))                      # infinite: never saved
        elif n is not None and n.op == CHECKPOINT_NAME and _named(n, policy, names):
            net.add_edge(vin(v), vout(v), capacity=0)
        elif key in inputs:   # kept anyway; under save_names a named value wins a tie with it
            net.add_edge(vin(v), vout(v), capacity=1 if policy == "save_names" else 0)
        else:
            net.add_edge(vin(v), vout(v), capacity=v.type.nbytes)
        if n is None or (not recomputable(n) and id(n) not in recompute):
            net.add_edge(src, vin(v))
    for n in fwd_nodes:
        for u in n.inputs:
            for o in n.outputs:
                net.add_edge(vout(u), vin(o))
    for v in needed:
        net.add_edge(vout(v), sink)
    _, (source_side, _) = nx.minimum_cut(net, src, sink)
    saved = [v for v in values.values() if vin(v) in source_side and vout(v) not in source_side]
    # recompute exactly what the backward needs and does not get saved, back to saved values
    available = {id(v) for v in saved}
    stack = [v for v in needed if id(v) not in available]
    chosen: set[int] = set()
    while stack:
        n = producer[id(stack.pop())]
        if id(n) in chosen:
            continue
        chosen.add(id(n))
        stack.extend(u for u in n.inputs if id(u) not in available)
    recomputed = [n for n in fwd_nodes if id(n) in chosen]
    return _in_order(g, saved), recomputed


def _in_order(g: Graph, vals: list[Value]) -> list[Value]:
    order = {id(v): i for i, v in enumerate(g.inputs)}
    for n in g.nodes:
        for o in n.outputs:
            order.setdefault(id(o), len(order))
    return sorted(vals, key=lambda v: order[id(v)])
