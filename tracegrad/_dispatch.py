"""The eager/traced op path: run the kernel (or emit a node while tracing), record the tape.

This is the per-op hot loop; it stays lean: one kernel call, and a tape node
only when grad mode is on and an input requires grad.
"""
from __future__ import annotations

import weakref

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.builder import Frontend, with_location
from tracegrad.ir.errors import TracegradError
from tracegrad.ir.graph import Value
from tracegrad.ir.registry import VIEW

from . import _state
from .autograd.graph import AccumulateGrad, Node
from .autograd.record import on_record
from .tensor import Tensor



class EagerFrontend(Frontend):
    """Applies ops to Tensors: NumPy kernels eagerly, graph nodes while tracing."""

    def is_operand(self, x) -> bool:
        return isinstance(x, Tensor)

    def known_value(self, x: Tensor):
        return None if isinstance(x._data, Value) else x._data

    def type_of(self, x: Tensor) -> T.TensorType:
        return x._type

    def location(self):
        return _state.user_location(2)

    def constant(self, value, dtype):
        if _state.local.tracer is not None:   # a literal node, not a program input
            return super().constant(value, dtype)
        return Tensor(np.asarray(value, dtype=dtype.numpy))

    def apply(self, op, operands, attrs, out_types, in_types):
        local = _state.local
        tracer = local.tracer
        if tracer is not None:
            datas = tracer.emit(op, operands, attrs, out_types)
        else:
            try:
                with np.errstate(all="ignore"):
                    out = op.kernel(np, *[t._data for t in operands], **attrs)
            except (TracegradError, TypeError, IndexError, ValueError) as e:
                raise _kernel_error(op, operands, e) from None
            datas = out if isinstance(out, tuple) else (out,)
            datas = [d if type(d) is np.ndarray else np.asarray(d) for d in datas]
        # torch: only floating-point results require grad (a cast to int ends the graph)
        record = (local.grad_enabled and op.differentiable
                  and any(t._requires_grad for t in operands)
                  and any(t.dtype.is_floating_point for t in out_types))
        base = None
        if op.flags & VIEW:   # aliases its first operand's storage (see _views.py)
            src = operands[0]
            base = src._base if src._base is not None else src
            chain = src._view_ops + ((op.name, attrs),)
            outs = [Tensor(d, base=base, view_ops=chain) for d in datas]
        else:
            outs = [Tensor(d) for d in datas]
        if base is not None:
            if base._views is None:
                base._views = []
            base._views.extend(weakref.ref(o) for o in outs)
        if record:
            edges = tuple(_edge(t) for t in operands)
            versions = tuple((t._vc, t._vc[0]) for t in operands) + tuple((o._vc, o._vc[0]) for o in outs)
            node = Node(op, attrs, edges, tuple(in_types), tuple(t._data for t in operands),
                        tuple(datas), versions, out_types, _state.user_location(3))
            for i, (o, t) in enumerate(zip(outs, out_types)):
                if t.dtype.is_floating_point:   # integer outputs (indices) never require grad
                    o._requires_grad = True
                    o.grad_fn = node
                    o._out_index = i
            if local.record_extras:   # anomaly stacks, saved-tensor hooks, inference tensors
                on_record(node, operands, outs)
        return outs


def _edge(t: Tensor):
    if not t._requires_grad:
        return None
    if t.grad_fn is not None:
        return (t.grad_fn, t._out_index)
    acc = t._accumulator() if t._accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accumulator = weakref.ref(acc)
    return (acc, 0)


def _kernel_error(op, operands, e):
    types = ", ".join(str(t._type) for t in operands)
    err = e if isinstance(e, TracegradError) else type(e)(f"{op.name}: failed on operands "
                                                         f"({types}): {e}")
    return with_location(err, _state.user_location(3))


EAGER = EagerFrontend()
