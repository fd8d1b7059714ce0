"""Per-op JVP programs: how an op's output tangent is computed, as a small cached IR program.

For one (op, attributes, operand types, which operands carry tangents), `op_jvp`
builds the program from the first of the rules listed in forward_ad.py's module
docstring (a hand rule, LINEAR, elementwise VJP, transposed VJP) and caches it.
`jvp_graph` inlines the same programs into a whole IR graph (the functional
API's forward-mode Jacobian and forward-over-reverse Hessian).  Dual tensors and
levels, which run these programs eagerly, are in forward_ad.py.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from tracegrad.ir import types as T
from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph, Node as IRNode, Value, attr_key
from tracegrad.ir.registry import ELEMENTWISE, LINEAR, NONDIFF, NotImplementedGrad, OpDef, get
from tracegrad.passes import PassManager, autodiff, cse, prune, simplify


def _differentiable(dtype: T.DType) -> bool:
    return dtype.category >= T.FLOAT   # floating point and complex


# ---- per-op JVP programs ------------------------------------------------------------------------
@dataclass(frozen=True)
class OpJvp:
    """An op's tangent program for one (attributes, operand types, tangent mask).

    Attributes:
        graph: inputs = the op's operands, its outputs, then the tangents of the
            operands in `mask`; outputs = one tangent per entry of `out_index`.
        out_index: which of the op's outputs get a tangent (the differentiable ones).
        source: how it was made: "rule", "linear", "elementwise" or "transpose".
    """

    graph: Graph
    out_index: tuple[int, ...]
    source: str


_CACHE: OrderedDict = OrderedDict()
CACHE_SIZE = 4096


class _NotDiagonal(Exception):
    """An elementwise op's VJP reduced its cotangent: derive by transposition instead."""


def op_jvp(op: OpDef, attrs: dict, in_types: tuple, out_types: tuple, mask: tuple) -> OpJvp:
    """The cached tangent program of `op` (see the module docstring for the rule order).

    Raises:
        NotImplementedError: the op has no gradient, or is a host call (hooks,
            custom Functions), which no IR program can differentiate.
    """
    key = (op.name, tuple((k, attr_key(v)) for k, v in attrs.items()), in_types, out_types, mask)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    prog = _build(op, attrs, in_types, out_types, mask)
    _CACHE[key] = prog
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return prog


def clear_cache() -> None:
    _CACHE.clear()


def _build(op, attrs, in_types, out_types, mask) -> OpJvp:
    if op.vjp is NONDIFF or not callable(op.vjp) and op.jvp is None:
        raise NotImplementedError(f"forward-mode AD: {op.name} has no derivative")
    complex_ = any(t.dtype.is_complex for t in in_types + out_types)
    if op.jvp is LINEAR:
        return _assemble(op, attrs, in_types, out_types, mask, _linear, "linear")
    if callable(op.jvp) and not complex_:   # hand rules follow the real formulas
        return _assemble(op, attrs, in_types, out_types, mask, _hand, "rule")
    if (op.flags & ELEMENTWISE and len(out_types) == 1 and not complex_
            and all(t.dtype is out_types[0].dtype for t, m in zip(in_types, mask) if m)):
        try:
            return _assemble(op, attrs, in_types, out_types, mask, _elementwise, "elementwise")
        except _NotDiagonal:
            pass
    return _assemble(op, attrs, in_types, out_types, mask, _transpose, "transpose")


def _assemble(op, attrs, in_types, out_types, mask, rule, source: str) -> OpJvp:
    g = Graph(name=f"jvp_{op.name}")
    xs = [g.add_input(t) for t in in_types]
    outs = [g.add_input(t) for t in out_types]
    ts = [g.add_input(t) if m else None for t, m in zip(in_types, mask)]
    b = Builder(g)
    tangents = rule(op, b, ts, xs, outs, attrs)
    out_index, results = [], []
    for k, o in enumerate(out_types):
        if not _differentiable(o.dtype):
            continue
        t = tangents[k] if k < len(tangents) else None
        if t is None:
            t = b.full(o.shape, 0, o.dtype)
        if t.dtype is not o.dtype:
            t = b.convert(t, o.dtype)
        if t.shape != o.shape:
            t = b.expand(t, o.shape)
        out_index.append(k)
        results.append(t)
    g.outputs = results
    g, _ = PassManager([("prune", prune), ("simplify", simplify), ("cse", cse),
                        ("prune", prune)]).run(g)
    for n in g.nodes:   # per-op programs carry no provenance; `jvp_graph` stamps the caller's
        n.loc = n.fwd_id = n.id = None
    return OpJvp(g, tuple(out_index), source)


def _as_list(r, n_out: int) -> list:
    if isinstance(r, (list, tuple)):
        return list(r)
    return [r] + [None] * (n_out - 1)


def _hand(op, b, ts, xs, outs, attrs) -> list:
    t = ts[0] if op.n_inputs == 1 and not op.variadic else tuple(ts)
    return _as_list(op.jvp(b, t, *xs, *outs, **attrs), len(outs))


def _linear(op, b, ts, xs, outs, attrs) -> list:
    operands = []
    for x, t in zip(xs, ts):
        if t is not None:
            operands.append(t)
        elif _differentiable(x.dtype):
            operands.append(b.full(x.shape, 0, x.dtype))
        else:
            operands.append(x)      # indices, masks: the same as the primal's
    return list(b.apply(op, operands, dict(attrs), tuple(o.type for o in outs),
                        [v.type for v in operands]))


def _elementwise(op, b, ts, xs, outs, attrs) -> list:
    out = outs[0]
    acc = None
    for i, t in enumerate(ts):
        if t is None:
            continue
        ct = t if t.shape == out.shape else b.expand(t, out.shape)
        g = op.vjp(b, ct, *xs, *outs, **attrs)[i]
        if type(g) is NotImplementedGrad:   # torch: no formula, forward mode included
            raise g.error()
        if g is None:
            continue
        if g.shape != out.shape:
            raise _NotDiagonal(op.name)
        acc = g if acc is None else b.add(acc, g)
    return [acc]


def _transpose(op, b, ts, xs, outs, attrs) -> list:
    """J t as the transpose of the linear map ct -> vjp(ct), by the autodiff pass."""
    vg = Graph(name=f"vjp_{op.name}")
    xs2 = [vg.add_input(x.type) for x in xs]
    outs2 = [vg.add_input(o.type) for o in outs]
    vb = Builder(vg)
    # cotangents are inputs, not zero constants: rules skip terms for a structurally zero one
    cts = [vg.add_input(o.type) for o in outs]
    grads = op.vjp(vb, cts[0] if len(cts) == 1 else tuple(cts), *xs2, *outs2, **attrs)
    used = []
    for i, (x, t) in enumerate(zip(xs2, ts)):
        g = grads[i] if i < len(grads) else None
        if t is None or g is None:
            continue
        if type(g) is NotImplementedGrad:
            raise g.error()
        if g.shape != x.shape:
            g = vb.sum_to_size(g, x.shape)
        if g.dtype is not x.dtype:
            g = vb.convert(g, x.dtype)
        vg.outputs.append(g)
        used.append(i)
    wrt = [c for c, o in zip(cts, outs) if _differentiable(o.dtype)]
    if not used or not wrt:
        return [None] * len(outs)
    _check_transposable(op, vg, cts)
    joint = autodiff(vg, wrt).graph
    n = len(xs2) + len(outs2)
    env = {id(v): w for v, w in zip(joint.inputs[:n], xs + outs)}
    # the map is linear in ct, so its transpose does not read ct; a leftover read gets zeros
    env.update((id(c), b.full(o.shape, 0, o.dtype)) for c, o in zip(cts, outs))
    env.update((id(c), ts[i]) for c, i in zip(joint.inputs[n + len(cts):], used))
    _inline(b.graph, joint.nodes, env, None, None)
    results = iter(env.get(id(v), v) for v in joint.outputs)
    return [next(results) if _differentiable(o.dtype) else None for o in outs]


def _check_transposable(op, vg: Graph, cts: list) -> None:
    """Every op the cotangent flows through must itself be differentiable (a host call, which
    runs Python hooks or a custom Function's backward, is not): else transposing would drop it."""
    reach = {id(c) for c in cts}
    for n in vg.nodes:
        if any(id(v) in reach for v in n.inputs):
            if get(n.op).vjp is NONDIFF:
                raise NotImplementedError(
                    f"forward-mode AD: no JVP for {op.name}: its VJP passes the cotangent "
                    f"through {n.op}, which has no derivative (give {op.name} a jvp rule)")
            reach.update(id(o) for o in n.outputs)


def _inline(g: Graph, nodes: list, env: dict, loc, fwd_id) -> None:
    """Append copies of `nodes` to `g`, reading inputs through `env` (id -> Value), extending it."""
    for n in nodes:
        c = IRNode(n.op, [env.get(id(v), v) for v in n.inputs], dict(n.attrs),
                   [o.type for o in n.outputs], loc, fwd_id)
        for o, co in zip(n.outputs, c.outputs):
            env[id(o)] = co
        g.nodes.append(c)


# ---- whole graphs -------------------------------------------------------------------------------
def jvp_graph(g: Graph, wrt: list[Value], *, name: str | None = None) -> Graph:
    """The forward-mode program of `g`: tangents of its outputs given tangents of `wrt`.

    Returns a graph whose inputs are ``g.inputs`` then one tangent per `wrt`
    value, and whose outputs are one tangent per output of `g` (zeros where an
    output does not depend on `wrt`).  Each node's tangent program (`op_jvp`)
    is inlined, stamped with the node's source location and id.

    Raises:
        NotImplementedError: a node on a path from `wrt` is a host call (a hook or
            custom Function) or an op without derivative.
    """
    out = Graph(name=name or f"{g.name}_jvp", inputs=list(g.inputs))
    tan: dict[int, Value] = {}
    for v in wrt:
        tan[id(v)] = out.add_input(v.type)
    b = Builder(out)
    for index, n in enumerate(g.nodes):
        out.nodes.append(n)
        ts = [tan.get(id(v)) for v in n.inputs]
        if all(t is None for t in ts):
            continue
        op = get(n.op)
        if op.vjp is NONDIFF or not any(_differentiable(o.dtype) for o in n.outputs):
            continue
        prog = op_jvp(op, n.attrs, tuple(v.type for v in n.inputs),
                      tuple(o.type for o in n.outputs), tuple(t is not None for t in ts))
        pg = prog.graph
        k = len(n.inputs) + len(n.outputs)
        env = {id(p): v for p, v in zip(pg.inputs[:k], list(n.inputs) + list(n.outputs))}
        env.update((id(p), t) for p, t in zip(pg.inputs[k:], [t for t in ts if t is not None]))
        _inline(out, pg.nodes, env, n.loc, n.id if n.id is not None else index)
        for j, v in zip(prog.out_index, pg.outputs):
            tan[id(n.outputs[j])] = env.get(id(v), v)
    out.outputs = [tan.get(id(o)) or b.full(o.shape, 0, o.dtype) for o in g.outputs]
    return out
