"""One program, runnable on either executor: the interpreter, or its lazily lowered jax.jit.

Under cross-check mode (tests) every run also goes through the other executor and
the two must agree (see crosscheck.py).
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir.graph import Graph

from . import crosscheck, device_arrays, interpreter, jax_backend


class Executable:
    """``donate``, ``in_shardings`` and ``pack_small`` go to the jax lowering (see
    jax_backend.Lowered)."""

    def __init__(self, graph: Graph, donate: tuple[int, ...] = (), in_shardings=None,
                 pack_small: bool = False):
        self.graph = graph
        self.donate = donate
        self.in_shardings = in_shardings
        self.pack_small = pack_small
        self._lowered = None
        self._interpret = None   # interpreter.prepare(graph), made on first use

    def run(self, arrays: list, executor: str) -> list:
        """Outputs of the program on `executor` ("interpreter" or "jax"): NumPy arrays, or,
        when an input is a device array (backends/device_arrays.py), jax arrays on its
        device from the jax executor."""
        check = crosscheck.enabled()
        if device_arrays.LIVE[0] and device_arrays.first_device_array(arrays) is not None:
            # device-resident values: on jax whatever `executor` says (the interpreter is a
            # NumPy executor), and the outputs stay on the device
            host = [np.array(device_arrays.host(a)) for a in arrays] if check else None
            outs = list(self.lowered()(arrays))   # (read before: donated inputs are deleted)
            if check:
                crosscheck.compare(self.graph, host, [np.asarray(a) for a in outs])
            return outs
        if executor == "interpreter" and not check:
            if self._interpret is None:
                self._interpret = interpreter.prepare(self.graph)
            return self._interpret(arrays)
        outs = [np.asarray(a) for a in self.lowered()(arrays)]
        return crosscheck.compare(self.graph, arrays, outs) if check else outs

    def lowered(self):
        """The jax lowering (made on first use)."""
        if self._lowered is None:
            self._lowered = jax_backend.lower(self.graph, self.donate, self.in_shardings,
                                              self.pack_small)
        return self._lowered
