"""Simplify: fold the no-op patterns autodiff leaves behind, and uniform constants.

Rules (each exact: no gradient changes, NaN/inf behaviour kept):
- each op's own algebra, declared with the op (`OpDef.simplify`, builders in
  ir/ops/_rewrites.py): ``x + 0``, ``x * 1`` ... -> ``x`` where the constant changes
  neither shape nor dtype; ``neg(neg(x))`` -> ``x``; identity reshape / permute /
  expand / convert / slice and sum over no dims -> ``x``; ``reshape(reshape(x))`` and
  ``permute(permute(x))`` -> one op;
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
from tracegrad.ir.ops.creation import constant_value
from tracegrad.ir.registry import ELEMENTWISE, RANDOM, get

from .rewrite import rewrite


@dataclass(frozen=True)
class SimplifyReport:
    removed: int


def _rule(b: Builder, n: Node, ins: list) -> Value | None:
    opdef = get(n.op)
    if opdef.simplify is not None:          # the op's own algebra (OpDef.simplify)
        v = opdef.simplify(b, n, ins)
        if v is not None:
            return v
    values = [constant_value(v) for v in ins]
    if (opdef.flags & ELEMENTWISE and not opdef.flags & RANDOM and ins
            and all(c is not None for c in values)):
        out = n.outputs[0]
        scalars = [np.full((), c, v.dtype.numpy) for c, v in zip(values, ins)]
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
