"""The static backward program behind `tg.compile` results that still require grad.

At trace time the joint graph of the returned tensors is partitioned by the min-cut policy
(docs/passes.md); the forward program also returns the saved values, and the outputs'
``grad_fn`` (a custom `Function`) runs the backward program on them.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tracegrad import passes
from tracegrad.ir.graph import Graph

from ..autograd.function import Function
from ..backends.executable import Executable
from ..tensor import Tensor
from .trace import TraceResult


class SavedSource(NamedTuple):
    """Where a saved value of the backward program comes from: forward program output
    (`from_output`) or input number `index`."""

    from_output: bool
    index: int


class BackwardPlan:
    """Returned tensors that require grad: the forward program also outputs the values the
    min-cut partition saves, and the outputs' grad_fn runs the static backward program."""

    def __init__(self, tr: TraceResult):
        g = tr.graph
        self.outputs = list(tr.grad_outputs)
        self.wrt = [i for i, lf in enumerate(tr.lifted) if lf.requires_grad]
        view = Graph(g.name, list(g.inputs), list(g.nodes), [g.outputs[i] for i in self.outputs])
        part = passes.build_backward(view, [g.inputs[i] for i in self.wrt], policy="min_bytes")
        position = {id(v): SavedSource(False, i) for i, v in enumerate(g.inputs)}
        self.saved: list[SavedSource] = []
        for v in part.saved:
            if id(v) not in position:
                g.outputs.append(v)            # the forward program returns it as well
                position[id(v)] = SavedSource(True, len(g.outputs) - 1)
            self.saved.append(position[id(v)])
        self.backward = part.backward
        self.saved_bytes = part.saved_bytes
        self.partition = part   # saved values and why (CompiledFunction.programs)
        self._exe = None

    def attach(self, outs, inputs, lifted, executor) -> dict:
        """Output tensors (by output index) whose grad_fn runs the backward program."""
        if self._exe is None:
            self._exe = Executable(self.backward)
        saved = [outs[i] if from_output else inputs[i] for from_output, i in self.saved]
        wrt = [lifted[i] for i in self.wrt]
        values = [outs[i] for i in self.outputs]
        res = _CompiledBackward.apply(self, saved, values, executor, *wrt)
        res = res if isinstance(res, tuple) else (res,)
        return dict(zip(self.outputs, res))


class _CompiledBackward(Function):
    @staticmethod
    def forward(ctx, plan, saved, values, executor, *wrt):
        ctx.plan, ctx.saved, ctx.executor = plan, saved, executor
        out = tuple(Tensor(v) for v in values)
        return out if len(out) > 1 else out[0]

    @staticmethod
    def backward(ctx, *cts):
        plan = ctx.plan
        arrays = [c._data if c is not None else np.zeros(v.shape, v.dtype.numpy)
                  for c, v in zip(cts, plan.backward.inputs)] + list(ctx.saved)
        grads = plan._exe.run(arrays, ctx.executor)
        return (None, None, None, None) + tuple(Tensor(g) for g in grads)
