"""What a program costs: ops by kind, estimated FLOPs, fusion regions, saved tensors.

The text and HTML reports of `tracegrad dump` and `tracegrad.ir.dump` are
built from these records.  The FLOP estimate reads only the op's declaration
and the static types of the node's inputs and outputs:

- an op declaring a `Cost` (``defop(..., cost=...)``; the rules are in
  ir/ops/_cost.py: matmul, conv, pools, scans, softmax, linalg) counts by it;
- elementwise ops (registry flag ``ELEMENTWISE``): ``numel(out)``;
- reductions (flag ``REDUCTION``): ``numel(input)``;
- everything else (views, reshapes, copies, indexing, scatter/gather,
  sort, creation, random bits, host calls): 0, counted as data movement.

It is an estimate for comparing programs (what a pass or a code change did),
not a hardware counter: exp and add cost one each, fused or not.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from .graph import Graph, Node, SourceLoc, Value
from .printer import format_loc, value_names
from .registry import CREATION, ELEMENTWISE, RANDOM, REDUCTION, VIEW, get
from .types import TensorType


def _numel(v: Value) -> int:
    return math.prod(v.shape)


def op_kind(n: Node) -> str:
    """The op's kind for the summary: matmul, conv, linalg, pool, scan, softmax,
    elementwise, reduction, view, creation, random or data movement."""
    op = get(n.op)
    if op.cost is not None:
        return op.cost.kind
    flags = op.flags
    for flag, kind in ((RANDOM, "random"), (CREATION, "creation"), (ELEMENTWISE, "elementwise"),
                       (REDUCTION, "reduction"), (VIEW, "view")):
        if flags & flag:
            return kind
    return "data movement"


def node_flops(n: Node) -> int:
    """Estimated floating-point operations of one node (rules in the module docstring)."""
    cost = get(n.op).cost
    if cost is not None:
        return cost.flops(n)
    kind = op_kind(n)
    if kind == "elementwise":
        return sum(_numel(o) for o in n.outputs)
    if kind == "reduction":
        return _numel(n.inputs[0]) if n.inputs else 0
    return 0


@dataclass(frozen=True)
class SavedRow:
    """One value a backward program reads from the forward (a ``{saved}`` input)."""

    name: str                 # its name in the backward program's text
    type: TensorType
    nbytes: int
    loc: SourceLoc | None     # where it was computed (or first read, for a program input)
    reason: str               # why it is saved rather than recomputed


def saved_rows(backward: Graph, saved=None, reasons=None) -> list[SavedRow]:
    """The ``{saved}`` inputs of `backward`, in order.

    `saved` (the forward Values, as in ``Partition.saved``) and `reasons` (by
    id, ``Partition.reasons``) add where each was computed and why it is
    saved; without them the source line is that of the first backward node
    reading it and the reason is unknown.
    """
    names = value_names(backward)
    placeholders = [v for v in backward.inputs if id(v) in backward.saved]
    first_reader: dict[int, SourceLoc] = {}
    for n in backward.nodes:
        for v in n.inputs:
            if n.loc is not None:
                first_reader.setdefault(id(v), n.loc)
    rows = []
    for k, p in enumerate(placeholders):
        fwd = saved[k] if saved is not None and k < len(saved) else None
        loc = fwd.node.loc if fwd is not None and fwd.node is not None else None
        reason = (reasons or {}).get(id(fwd), "") if fwd is not None else ""
        rows.append(SavedRow(names[id(p)], p.type, p.type.nbytes, loc or first_reader.get(id(p)),
                             reason or "unknown: not recorded with this graph"))
    return rows


@dataclass
class ProgramReport:
    """One program of a report: its graph, the graph after each pass that built it (for a
    backward program), and its saved tensors (None when it reads none from a forward)."""

    label: str
    graph: Graph
    passes: list = field(default_factory=list)     # (pass name, Graph), in order
    saved: list | None = None                      # SavedRow
    saved_bytes: int | None = None                 # None: the sum of the rows

    @property
    def total_saved_bytes(self) -> int:
        if self.saved_bytes is not None:
            return self.saved_bytes
        return sum(r.nbytes for r in self.saved or ())


@dataclass(frozen=True)
class Summary:
    """Counts for one graph: nodes, inputs, outputs, fusion regions, FLOPs, and per op
    ``(kind, count, flops)``."""

    nodes: int
    inputs: int
    outputs: int
    regions: int
    flops: int
    by_op: dict


def summarize(g: Graph) -> Summary:
    counts: Counter = Counter()
    flops: Counter = Counter()
    for n in g.nodes:
        counts[n.op] += 1
        flops[n.op] += node_flops(n)
    by_op = {op: (op_kind(next(n for n in g.nodes if n.op == op)), counts[op], flops[op])
             for op in sorted(counts, key=lambda o: (-flops[o], -counts[o], o))}
    regions = len({n.region for n in g.nodes if n.region is not None})
    return Summary(len(g.nodes), len(g.inputs), len(g.outputs), regions, sum(flops.values()),
                   by_op)


def format_loc_short(loc: SourceLoc | None) -> str:
    return format_loc(loc) or "-"


def format_report(programs: list[ProgramReport]) -> str:
    """The plain-text summary: one table of programs, then per program its ops by kind,
    its passes and its saved tensors (largest first)."""
    w = max([len("program")] + [len(p.label) for p in programs])
    lines = [f"{'program':<{w}} {'nodes':>6} {'inputs':>6} {'outputs':>7} {'regions':>7} "
             f"{'saved bytes':>12} {'est. FLOPs':>14}"]
    sums = [summarize(p.graph) for p in programs]
    for p, s in zip(programs, sums):
        saved = f"{p.total_saved_bytes:,}" if p.saved is not None else "-"
        lines.append(f"{p.label:<{w}} {s.nodes:>6} {s.inputs:>6} {s.outputs:>7} {s.regions:>7} "
                     f"{saved:>12} {s.flops:>14,}")
    for p, s in zip(programs, sums):
        lines += ["", f"== {p.label}: ops by kind", f"  {'op':<24} {'kind':<14} {'count':>6} "
                  f"{'est. FLOPs':>14}"]
        for op, (kind, count, fl) in s.by_op.items():
            lines.append(f"  {op:<24} {kind:<14} {count:>6} {fl:>14,}")
        if p.passes:
            lines += ["", f"== {p.label}: nodes after each pass"]
            lines += [f"  {k}. {name:<12} {len(g.nodes):>6}" for k, (name, g) in
                      enumerate(p.passes)]
        if p.saved is not None:
            which = ("bytes, program inputs not counted" if p.saved_bytes is not None
                     else "bytes")
            lines += ["", f"== {p.label}: saved for backward ({len(p.saved)} values, "
                      f"{p.total_saved_bytes:,} {which})"]
            lines.append(f"  {'value':<7} {'type':<18} {'bytes':>12}  source: reason")
            for r in sorted(p.saved, key=lambda r: -r.nbytes):
                lines.append(f"  {r.name:<7} {str(r.type):<18} {r.nbytes:>12,}  "
                             f"{format_loc_short(r.loc)}: {r.reason}")
    return "\n".join(lines)
