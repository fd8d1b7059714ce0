"""The tape record: what every mode does with an op's outputs.

`finish` records a tape node (`tape.Node`) when grad mode is on, an operand
requires grad and the op is differentiable with a floating-point (or complex)
output, as torch: a cast to int ends the graph.  The node holds the edges to
the operands' producers (a leaf's `AccumulateGrad`), the saved forward
values with their version counters, and the user's source line, found by
walking the stack to the first frame outside tracegrad (one dict lookup per
frame in `_state.INTERNAL_FILE`; formatted only when read).  Then, inside a
forward-AD dual level, the outputs get their tangents (`HOOKS.propagate`).
"""
from __future__ import annotations

import sys
import weakref

from .. import _state
from .constants import SHARED_CONSTANT, SHARED_VERSION
from . import view_meta
from .hooks import HOOKS
from .tape import CLASS_OF_OP, AccumulateGrad, op_class

_getframe = sys._getframe
_INTERNAL_FILE = _state.INTERNAL_FILE
_user_frame_from = _state.user_frame_from


def finish(state: dict, op, operands: list, ins: tuple, datas, outs: list, attrs: dict,
           out_types: tuple, in_types, plan) -> list:
    """Record `op`'s application on the tape if it needs a node; propagate tangents.

    `ins`/`datas` are the operands' and outputs' values (arrays, or IR Values while
    tracing), `outs` the output Tensors; returns `outs`.
    """
    record = False
    if state["grad_enabled"]:
        for t in operands:
            if t._requires_grad:
                record = (plan.differentiable if plan is not None
                          else op.differentiable and _any_float(out_types))
                break
    if record:
        # plain loops: in this hot block a comprehension's extra frame costs more than its body
        edges, versions = [], []
        for t in operands:
            vc = t._vc
            versions.append((vc, vc[0]) if vc is not SHARED_CONSTANT else SHARED_VERSION)
            if t.grad_fn is not None:
                edges.append((t.grad_fn, t._out_index))
            else:
                edges.append(edge(t) if t._requires_grad else None)
        if view_meta.MARKS:   # a view torch refuses after its base was written (view_meta.py)
            for e in edges:
                if e is not None and e[0].__class__ is view_meta.Refused:
                    raise e[0].error()
        for o in outs:
            vc = o._vc
            versions.append((vc, vc[0]))
        # the user's line: the first frame outside tracegrad.  The five below it are always
        # ours: this function, the mode's `apply`, the frontend's `run_plan` (or `apply`),
        # `Frontend.call` (or an internal caller of `apply`, the engine) and call's caller
        # (an operator, an _ops function, a decomposition); on the common path frame 5 is
        # the user's, found with one lookup.  A file not seen yet is classified by the slow walk
        f = _getframe(5)
        while True:
            code = f.f_code
            inside = _INTERNAL_FILE.get(code.co_filename)
            if inside is False:
                loc = (code, f.f_lineno)
                break
            if inside is None:
                loc = _user_frame_from(f)
                break
            f = f.f_back
            if f is None:
                loc = None
                break
        node = (CLASS_OF_OP.get(op) or op_class(op))(op, attrs, tuple(edges),
                                                     in_types if type(in_types) is tuple
                                                     else tuple(in_types), ins,
                                                     tuple(datas), tuple(versions), out_types,
                                                     loc, plan)
        if len(outs) == 1:   # `record`: its dtype is a differentiable one
            o = outs[0]
            o._requires_grad = True
            o.grad_fn = node
        else:
            for i, o in enumerate(outs):
                if out_types[i].dtype.is_differentiable:   # integer outputs never do
                    o._requires_grad = True
                    o.grad_fn = node
                    o._out_index = i
        if state["record_extras"]:   # anomaly stacks, saved-tensor hooks, inference tensors
            HOOKS.on_record(node, operands, outs)
    if state["fw_level"] is not None:   # inside a forward-AD dual level: output tangents
        HOOKS.propagate(op, operands, attrs, outs, in_types)
    return outs


def _any_float(types) -> bool:
    for t in types:
        if t.dtype.is_differentiable:
            return True
    return False


def edge(t):
    """The tape edge to tensor `t`: ``(grad_fn, output index)``, for a leaf that requires
    grad ``(its AccumulateGrad, 0)`` (made once, held weakly by the leaf), else None."""
    if not t._requires_grad:
        return None
    if t.grad_fn is not None:
        return (t.grad_fn, t._out_index)
    acc = t._accumulator() if t._accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accumulator = weakref.ref(acc)
    return (acc, 0)
