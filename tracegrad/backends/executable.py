"""One program, runnable on either executor: the interpreter, or its lazily lowered jax.jit.

Under cross-check mode (tests) every run also goes through the other executor and
the two must agree (see crosscheck.py).
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir.graph import Graph

from . import crosscheck


class Executable:
    def __init__(self, graph: Graph):
        self.graph = graph
        self._lowered = None

    def run(self, arrays: list, executor: str) -> list:
        """Outputs of the program on `executor` ("interpreter" or "jax")."""
        check = crosscheck.enabled()
        if executor == "interpreter" and not check:
            from . import interpreter
            return interpreter.run(self.graph, arrays)
        if self._lowered is None:
            from . import jax_backend
            self._lowered = jax_backend.lower(self.graph)
        outs = [np.asarray(a) for a in self._lowered(arrays)]
        return crosscheck.compare(self.graph, arrays, outs) if check else outs
