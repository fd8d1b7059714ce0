"""Common-subexpression elimination: one node per (op, inputs, attributes).

Random ops are never merged (two draws are two draws).
"""
from __future__ import annotations

from dataclasses import dataclass

from tracegrad.ir.graph import Graph, attr_key
from tracegrad.ir.registry import RANDOM, get

from .rewrite import rewrite


@dataclass(frozen=True)
class CSEReport:
    removed: int


def _key(op: str, ins, attrs: dict):
    key = (op, tuple(id(v) for v in ins), tuple((k, attr_key(a)) for k, a in attrs.items()))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def cse(g: Graph, *, frozen: frozenset = frozenset()) -> tuple[Graph, CSEReport]:
    """Merge duplicate nodes; nodes whose id is in `frozen` are kept as they are."""
    seen: dict = {}

    def rule(b, n, ins):
        if get(n.op).flags & RANDOM or id(n) in frozen:
            return None
        key = _key(n.op, ins, n.attrs)
        return seen.get(key) if key is not None else None

    def on_kept(n):
        if len(n.outputs) == 1 and not get(n.op).flags & RANDOM:
            key = _key(n.op, n.inputs, n.attrs)
            if key is not None:
                seen.setdefault(key, n.outputs[0])

    out, removed = rewrite(g, rule, on_kept)
    return out, CSEReport(removed=removed)
