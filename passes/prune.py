"""Dead-node pruning: keep only nodes some graph output depends on."""
from __future__ import annotations

from dataclasses import dataclass

from tracegrad.ir.graph import Graph


@dataclass(frozen=True)
class PruneReport:
    removed: int


def prune(g: Graph) -> tuple[Graph, PruneReport]:
    """Drop every node whose outputs no graph output needs. Inputs are kept (they are the interface)."""
    needed = {id(v) for v in g.outputs}
    kept = []
    for n in reversed(g.nodes):
        if any(id(o) in needed for o in n.outputs):
            kept.append(n)
            needed.update(id(v) for v in n.inputs)
    kept.reverse()
    out = Graph(g.name, list(g.inputs), kept, list(g.outputs), set(g.saved))
    return out, PruneReport(removed=len(g.nodes) - len(kept))
