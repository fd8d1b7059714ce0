"""Simplify: fold the no-op patterns autodiff leaves behind, and uniform constants.

Rules (each exact: no gradient changes, NaN/inf behaviour kept):
- ``x + 0``, ``x - 0``, ``x * 1``, ``x / 1`` where the constant does not
  change the shape or dtype -> ``x``;  ``neg(neg(x))`` -> ``x``;
- identity reshape / permute / expand / convert / slice, and sum over no dims -> ``x``;
  ``reshape(reshape(x))`` -> one reshape; ``permute(permute(x))`` -> one permute;
- an elementwise op whose inputs are all uniform constants (`full`) ->
  one `full` holding the value the kernel computes (constant folding).

Multiplication by zero is *not* folded: ``inf * 0`` is NaN, and folding it
would change a gradient.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph, Node, Value
from tracegrad.ir.registry import ELEMENTWISE, RANDOM, get

from .rewrite import rewrite


@dataclass(frozen=True)
class SimplifyReport:
    removed: int


def _const(v: Value):
    """The fill value when `v` is produced by `full`, else None."""
    n = v.node
    return n.attrs["fill_value"] if n is not None and n.op == "full" else None


def _same_type(a: Value, b: Value) -> bool:
    return a.type == b.type


def _rule(b: Builder, n: Node, ins: list) -> Value | None:
    op, out = n.op, n.outputs[0]
    if op in ("add", "sub") and _const(ins[1]) == 0 and _same_type(ins[0], out):
        return ins[0]
    if op == "add" and _const(ins[0]) == 0 and _same_type(ins[1], out):
        return ins[1]
    if op in ("mul", "div") and _const(ins[1]) == 1 and _same_type(ins[0], out):
        return ins[0]
    if op == "mul" and _const(ins[0]) == 1 and _same_type(ins[1], out):
        return ins[1]
    if op == "neg" and ins[0].node is not None and ins[0].node.op == "neg":
        return ins[0].node.inputs[0]
    if op in ("reshape", "expand", "convert", "slice") and _same_type(ins[0], out):
        return ins[0]
    if op == "permute" and n.attrs["dims"] == tuple(range(len(n.attrs["dims"]))):
        return ins[0]
    if op == "sum" and not n.attrs["dim"] and _same_type(ins[0], out):
        return ins[0]
    src = ins[0].node if ins else None
    if op == "reshape" and src is not None and src.op == "reshape":
        return b.reshape(src.inputs[0], n.attrs["shape"])
    if op == "permute" and src is not None and src.op == "permute":
        inner, outer = src.attrs["dims"], n.attrs["dims"]
        return b.permute(src.inputs[0], tuple(inner[d] for d in outer))
    opdef = get(op)
    if (opdef.flags & ELEMENTWISE and not opdef.flags & RANDOM and ins
            and all(_const(v) is not None for v in ins)):
        scalars = [np.full((), _const(v), v.dtype.numpy) for v in ins]
        with np.errstate(all="ignore"):
            value = np.asarray(opdef.kernel(np, *scalars, **n.attrs)).item()
        return b.full(out.shape, value, out.dtype)
    return None


def simplify(g: Graph, *, frozen: frozenset = frozenset()) -> tuple[Graph, SimplifyReport]:
    """Apply the rules until nothing changes; dead nodes are left for `prune`.

    Nodes whose id is in `frozen` are left alone (the eager backward freezes the
    forward part of a joint graph: its values are fed from the tape).
    """
    total = 0

    def rule(b, n, ins):
        return None if id(n) in frozen else _rule(b, n, ins)

    while True:
        g, replaced = rewrite(g, rule)
        total += replaced
        if not replaced:
            return g, SimplifyReport(removed=total)
