"""Algebraic rewrite rules an op declares (`OpDef.simplify`), applied by passes/simplify.py.

A rule is ``rule(b, node, ins) -> Value | None``: the value that replaces the node's
single output (built with builder `b` where it is new), or None when the rule does
not apply.  Every rule is exact: no value, gradient, NaN or inf changes; in particular
multiplication by zero is never folded (``inf * 0`` is NaN).  The builders here make
the common kinds, so each op states its algebra in one word next to its declaration.
"""
from __future__ import annotations

from .creation import constant_value


def _same_type(a, b) -> bool:
    return a.type == b.type


def identity_element(value, *, left: bool = True):
    """``x op e -> x`` (and ``e op x -> x`` when `left`) for the identity element `e`
    (``add``/``sub`` 0, ``mul``/``div`` 1), when `e` changes neither shape nor dtype."""
    def rule(b, n, ins):
        out = n.outputs[0]
        if constant_value(ins[1]) == value and _same_type(ins[0], out):
            return ins[0]
        if left and constant_value(ins[0]) == value and _same_type(ins[1], out):
            return ins[1]
        return None
    return rule


def involution(b, n, ins):
    """``f(f(x)) -> x`` (``neg``)."""
    src = ins[0].node
    return src.inputs[0] if src is not None and src.op == n.op else None


def same_type_identity(b, n, ins):
    """An op whose output has its input's type is the identity (reshape to the same
    shape, expand to the same size, convert to the same dtype, a full slice)."""
    return ins[0] if _same_type(ins[0], n.outputs[0]) else None


def first_of(*rules):
    """The first of `rules` that applies."""
    def rule(b, n, ins):
        for r in rules:
            v = r(b, n, ins)
            if v is not None:
                return v
        return None
    return rule
