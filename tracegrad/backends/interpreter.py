"""The reference executor: runs an IR graph node by node on NumPy.

Slow, simple, transparent. With ``check_nan`` it stops at the first node
whose output holds NaN/Inf and names it with its source line.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir.graph import Graph
from tracegrad.ir.printer import format_loc
from tracegrad.ir.registry import get


def run(g: Graph, inputs: list, *, check_nan: bool = False) -> list[np.ndarray]:
    """Execute `g` on NumPy arrays; returns one array per graph output."""
    if len(inputs) != len(g.inputs):
        raise ValueError(f"@{g.name} takes {len(g.inputs)} inputs, got {len(inputs)}")
    env = {id(v): np.asarray(a) for v, a in zip(g.inputs, inputs)}
    with np.errstate(all="ignore"):
        for i, n in enumerate(g.nodes):
            op = get(n.op)
            out = op.kernel_for("numpy")(np, *[env[id(v)] for v in n.inputs], **n.attrs)
            outs = out if isinstance(out, tuple) else (out,)
            for o, a in zip(n.outputs, outs):
                a = np.asarray(a)
                if check_nan and a.dtype.kind == "f" and not np.isfinite(a).all():
                    where = format_loc(n.loc) or "unknown source"
                    raise FloatingPointError(
                        f"node {i} ({n.op} -> {o.type}) of @{g.name} produced NaN/Inf; "
                        f"recorded at {where}")
                env[id(o)] = a
    return [env[id(v)] for v in g.outputs]
