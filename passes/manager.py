"""The pass manager: run named `Graph -> (Graph, report)` passes; verify, time, dump and
record each one.

Every pass of every pipeline runs through a `PassManager` (autodiff and the partition
included, see passes/__init__.py), so each program carries the list of `PassRecord`s that
built it: `tg.explain` prints it and ``TRACEGRAD_DUMP`` / ``tracegrad dump`` write it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import gc
import time
from dataclasses import dataclass, field
from typing import Callable

from tracegrad.ir.graph import Graph
from tracegrad.ir.verifier import verify

from . import settings


@dataclass(frozen=True, slots=True)
class PassRecord:
    """One pass as it ran.

    Attributes:
        name: the step's name (``"cse"``, ``"partition"``...).
        seconds: wall time of the pass itself (verification and dumps not counted).
        nodes_before: nodes of the graph it was given.
        nodes_after: nodes of the graph it returned.
        report: the pass's own frozen report (``CSEReport(removed=2)``, ...).
    """

    name: str
    seconds: float
    nodes_before: int
    nodes_after: int
    report: object

    def summary(self) -> str:
        """What the pass did, from its report: ``"removed=2"``."""
        r = self.report
        if dataclasses.is_dataclass(r):
            return ", ".join(f"{f.name}={getattr(r, f.name)}" for f in dataclasses.fields(r))
        return "" if r is None else str(r)


def format_records(records) -> str:
    """A table of `PassRecord`s, one line per pass (tg.explain, the dump)."""
    w = max([4] + [len(r.name) for r in records])
    lines = [f"  {'pass':<{w}} {'ms':>8} {'nodes':>13}  what it did"]
    for r in records:
        nodes = f"{r.nodes_before} -> {r.nodes_after}"
        lines.append(f"  {r.name:<{w}} {1e3 * r.seconds:>8.3f} {nodes:>13}  {r.summary()}")
    return "\n".join(lines)


@dataclass
class PassManager:
    """Runs `steps` in order.

    Attributes:
        steps: ``(name, fn)`` with ``fn(graph) -> (graph, report)``.
        verify_each: run the verifier after every pass (tests and
            ``TRACEGRAD_VERIFY=1`` turn it on).
        on_pass: callback ``(name, graph)`` after each pass (IR dumps).
    """

    steps: list[tuple[str, Callable]]
    verify_each: bool = field(default_factory=settings.verify)
    on_pass: Callable | None = None

    def run(self, g: Graph) -> tuple[Graph, list[PassRecord]]:
        """The graph after every step, and one `PassRecord` per step."""
        records = []
        for name, fn in self.steps:
            before = len(g.nodes)
            t0 = time.perf_counter()
            g, report = fn(g)
            dt = time.perf_counter() - t0
            if self.verify_each:
                verify(g)
            if self.on_pass is not None:
                self.on_pass(name, g)
            records.append(PassRecord(name, dt, before, len(g.nodes), report))
        return g, records


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a program is built (also a decorator).

    IR nodes and values form reference cycles (``value.node.outputs``), a build allocates
    several of them per tape node, and every automatic full collection walks the whole heap:
    on a 10,000-node tape about half the build time went to collections, growing
    superlinearly (docs/performance.md, workload 4).  The garbage is collected once, when the
    collector next runs.  Nested uses and a collector the user turned off are left alone.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
