"""The pass manager: run named `Graph -> (Graph, report)` passes, verify and dump between them."""
from __future__ import annotations

import contextlib
import gc
import os
import time
from dataclasses import dataclass, field
from typing import Callable

from tracegrad.ir.graph import Graph
from tracegrad.ir.verifier import verify


@dataclass
class PassRecord:
    name: str
    report: object
    seconds: float
    nodes_after: int


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
    verify_each: bool = field(default_factory=lambda: os.environ.get("TRACEGRAD_VERIFY") == "1")
    on_pass: Callable | None = None

    def run(self, g: Graph) -> tuple[Graph, list[PassRecord]]:
        records = []
        for name, fn in self.steps:
            t0 = time.perf_counter()
            g, report = fn(g)
            dt = time.perf_counter() - t0
            if self.verify_each:
                verify(g)
            if self.on_pass is not None:
                self.on_pass(name, g)
            records.append(PassRecord(name, report, dt, len(g.nodes)))
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
