"""`tg.explain(fn, *args)`: what the compiler saves for backward, and why.

Traces `fn` (which returns a scalar loss) with abstract tensors, prunes the
forward, builds the joint forward+backward graph, runs the pass pipeline
(`passes.optimized_joint`), and partitions it with the chosen policy
(`passes.partition_joint`); reports the saved values next to the `save_all`
baseline, and every pass that ran (`ExplainReport.passes`).
"""
from __future__ import annotations

from dataclasses import dataclass

from tracegrad.ir.errors import TraceError
from tracegrad.ir.graph import Graph, SourceLoc
from tracegrad.ir.printer import format_loc, print_graph, value_names
from tracegrad.passes import (PassManager, PassRecord, format_records, optimized_joint,
                              partition_joint, prune)

from .. import _state
from ..backends import interpreter
from ..tensor import Tensor
from .trace import Tracer


@dataclass(frozen=True)
class SavedTensor:
    """One value the backward program reads from the forward."""

    name: str            # its name in the forward program's text
    shape: tuple
    dtype: str
    nbytes: int
    loc: SourceLoc | None
    reason: str
    is_input: bool


@dataclass(frozen=True)
class ExplainReport:
    """Attributes: forward, backward (Graphs), saved_tensors, saved_bytes, save_all_bytes,
    policy, and ``passes``: the `PassRecord` of every pass that built the programs, in order
    (prune of the traced forward, autodiff ... partition)."""

    forward: Graph
    backward: Graph
    saved_tensors: tuple
    saved_bytes: int
    save_all_bytes: int
    policy: str
    recomputed: int
    example_inputs: tuple = ()   # arrays of the forward inputs at trace time
    saved_values: tuple = ()     # forward-program values the backward program reads, in order
    passes: tuple[PassRecord, ...] = ()

    def backward_inputs(self) -> list:
        """Concrete inputs of the backward program: a unit cotangent, then the saved values
        computed by running the forward program on the example inputs (interpreter)."""
        import numpy as np
        probe = Graph("saved", list(self.forward.inputs), list(self.forward.nodes),
                      list(self.saved_values))
        ct = np.ones(self.forward.outputs[0].shape, self.forward.outputs[0].dtype.numpy)
        return [ct] + interpreter.run(probe, list(self.example_inputs))

    def __str__(self) -> str:
        rows = [f"policy {self.policy}: {self.saved_bytes:,} bytes saved for backward "
                f"(save_all would save {self.save_all_bytes:,}); "
                f"{self.recomputed} forward ops recomputed in backward", "",
                f"{'value':>7}  {'type':<16} {'bytes':>12}  source / why"]
        for s in sorted(self.saved_tensors, key=lambda s: -s.nbytes):
            t = f"{s.dtype}[{','.join(map(str, s.shape))}]"
            where = format_loc(s.loc) or "-"
            rows.append(f"{s.name:>7}  {t:<16} {s.nbytes:>12,}  {where}: {s.reason}")
        if self.passes:
            rows += ["", "passes:", format_records(self.passes)]
        return "\n".join(rows + ["", "forward:", print_graph(self.forward), "",
                                 "backward:", print_graph(self.backward)])


def trace_loss(fn, args) -> tuple[Graph, list, list, frozenset, list]:
    """Trace `fn(*args)` to a forward graph with one output, pruned.

    Returns (graph, wrt values, the arrays the graph's inputs held at trace time,
    ids of the nodes inside `tg.utils.checkpoint` regions, the prune's PassRecords).
    Only pruned: the checkpoint ids name the traced nodes, which a rewrite would replace.
    """
    if _state.local.tracer is not None:
        raise TraceError("tg.explain cannot run inside a traced function")
    tracer = Tracer(getattr(fn, "__name__", "fn"))
    _state.local.tracer = tracer
    try:
        for a in args:
            if isinstance(a, Tensor):
                tracer.value_of(a)
        out = fn(*args)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise TypeError("tg.explain: fn must return a one-element tensor (a loss), got "
                            f"{type(out).__name__}")
        g = tracer.graph
        lifted = list(tracer.lifted.values())
        g.inputs = [lf.value for lf in lifted] + [c[1] for c in tracer.constants.values()]
        g.outputs = [tracer.value_of(out)]
        wrt = [lf.value for lf in lifted if lf.requires_grad]
        arrays = [lf.data for lf in lifted] + [c[2] for c in tracer.constants.values()]
        recompute = frozenset(tracer.recompute)
    finally:
        _state.local.tracer = None
        tracer.restore()
    if not wrt:
        raise ValueError("tg.explain: no tensor reached by fn requires grad")
    g, records = PassManager([("prune", prune)]).run(g)
    return g, wrt, arrays, recompute, records


def explain(fn, *args, policy: str = "min_bytes") -> ExplainReport:
    """Report the forward and backward programs of ``fn(*args).backward()`` and the saved values.

    Args:
        fn: returns a one-element loss tensor; tensors it reaches that require
            grad (arguments, module parameters) are differentiated.
        policy: "min_bytes" (default), "save_all" or "save_names" (see passes/partition.py).
    Returns:
        ExplainReport; ``print(report)`` shows the table and both programs.
    """
    fwd, wrt, arrays, recompute, pruned = trace_loss(fn, args)
    joint = optimized_joint(fwd, wrt)
    part = partition_joint(joint, policy=policy, recompute=recompute, fused=False)
    baseline = (part if policy == "save_all"
                else partition_joint(joint, policy="save_all", fused=False))
    forward = Graph(f"{fwd.name}_forward", list(fwd.inputs), list(fwd.nodes))
    inputs = {id(v) for v in fwd.inputs}
    forward.outputs = list(fwd.outputs) + [v for v in part.saved if id(v) not in inputs]
    names = value_names(forward)
    saved = tuple(SavedTensor(names.get(id(v), "%?"), v.shape, v.dtype.short, v.type.nbytes,
                              v.node.loc if v.node is not None else None,
                              part.reasons[id(v)], id(v) in inputs) for v in part.saved)
    return ExplainReport(forward, part.backward, saved, part.saved_bytes, baseline.saved_bytes,
                         policy, len(part.recomputed), tuple(arrays), tuple(part.saved),
                         tuple(pruned) + part.passes)
