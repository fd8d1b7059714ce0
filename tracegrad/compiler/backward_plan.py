"""The static backward program behind `tg.compile` results that still require grad.

At trace time the joint graph of the returned tensors is partitioned by the min-cut policy
(docs/passes.md); the forward program also returns the saved values, and the outputs'
``grad_fn`` (a custom `Function`) runs the backward program on them.

The same node gives a history to tensors the program wrote in place with grad mode on
(an argument written through a view, ``x.view(-1)[2:].mul_(2)``): they are marked dirty,
so after the call their ``grad_fn`` is this node, as eager's would be the write's.

Two kinds of backward cannot use the static program, and replay the traced forward op by
op on tensors instead (`_replay`), then differentiate that eagerly:

- ``create_graph=True`` (``grad(f_compiled(x), x, create_graph=True)``): the gradient
  must itself have a history back to the inputs, so that its own gradient is eager's;
- ``tg.autograd.detect_anomaly()``: a NaN is then found in the backward node that made it
  and the error names it (``SqrtBackward0``), as eagerly.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from tracegrad import passes
from tracegrad.ir.graph import Graph

from .. import _state
from ..autograd.engine import grad as autograd_grad
from ..autograd.engine import run_graph_on_tensors
from ..autograd.function import Function
from ..backends.executable import Executable
from ..dispatch.grad_mode import enable_grad
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
        # output index -> lifted index, for the tensors written in place (marked dirty)
        first = tr.first_mutated_output
        self.dirty = {first + tr.mutated.index(i): i for i in tr.dirty}
        self.forward, _ = passes.prune(view)   # what `_replay` runs: the outputs' forward only
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
        # a dirty tensor already holds its new value (Entry.run wrote it back): it is its
        # own output, and takes this node as its grad_fn
        values = [lifted[self.dirty[i]] if i in self.dirty else outs[i] for i in self.outputs]
        # the outputs required grad when traced (the grad mode around the call is in the
        # cache key), also where the function itself entered enable_grad() under no_grad
        with enable_grad():
            res = _CompiledBackward.apply(self, (saved, inputs, executor), values, *wrt)
        res = res if isinstance(res, tuple) else (res,)
        return {i: r for i, r in zip(self.outputs, res) if i not in self.dirty}


class _CompiledBackward(Function):
    @staticmethod
    def forward(ctx, plan, run, values, *wrt):
        ctx.plan, (ctx.saved, ctx.inputs, ctx.executor) = plan, run
        ctx.wrt = wrt
        dirty = [v for v in values if isinstance(v, Tensor)]
        if dirty:
            ctx.mark_dirty(*dirty)
        out = tuple(v if isinstance(v, Tensor) else Tensor(v) for v in values)
        return out if len(out) > 1 else out[0]

    @staticmethod
    def backward(ctx, *cts):
        ctx.saved_tensors   # noqa: B018  torch's error once a backward freed the graph
        plan = ctx.plan
        if _state.local.grad_enabled or _state.local.anomaly:
            grads = _replay(ctx, cts)
        else:
            arrays = [c._data if c is not None else np.zeros(v.shape, v.dtype.numpy)
                      for c, v in zip(cts, plan.backward.inputs)] + list(ctx.saved)
            grads = [Tensor(g) for g in plan._exe.run(arrays, ctx.executor)]
        return (None, None, None) + tuple(grads)


def _replay(ctx, cts) -> list:
    """The gradients of the outputs with respect to the lifted tensors that require grad, from
    the traced forward run again op by op on tensors (the wrt tensors themselves, so that
    with create_graph the gradients' history reaches them), then differentiated eagerly."""
    plan = ctx.plan
    create_graph = _state.local.grad_enabled
    ins = [Tensor(a) for a in ctx.inputs]
    for i, t in zip(plan.wrt, ctx.wrt):
        if t._data is ctx.inputs[i]:
            ins[i] = t
        elif create_graph:
            raise NotImplementedError(
                "tg.compile: create_graph=True through a compiled function that wrote one of "
                "its inputs that require grad in place is not supported; call the function "
                "eagerly for higher-order gradients")
        else:   # anomaly mode on a tensor written since: its value at the call, first order
            ins[i] = Tensor(ctx.inputs[i]).requires_grad_()
    with enable_grad():
        outs = run_graph_on_tensors(plan.forward, ins)
    pairs = [(o, c) for o, c in zip(outs, cts) if c is not None and o._requires_grad]
    wrt = [ins[i] for i in plan.wrt]
    if not pairs:
        return [None] * len(wrt)
    grads = autograd_grad([o for o, _ in pairs], wrt, [c for _, c in pairs],
                          create_graph=create_graph, allow_unused=True)
    return list(grads)
