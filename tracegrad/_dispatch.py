"""The eager/traced op path: run the kernel (or emit a node while tracing), record the tape.

This is the per-op hot loop; it stays lean: one kernel call, and a tape node
only when grad mode is on and an input requires grad.  What is costly per
op is done once per kind of call instead: `Frontend.call` caches binding,
promotion and inference per (op, attributes, operand types); the user's
source line is captured as (code, line) and formatted only when read;
kernels run in a per-thread context where NumPy ignores floating-point errors
(`_kernel_runner`); a scalar operand becomes a shared read-only constant.
"""
from __future__ import annotations

import contextvars
import sys
import weakref
from operator import attrgetter

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.builder import _PY_SCALARS, Frontend, py_number, with_location
from tracegrad.ir.errors import TracegradError
from tracegrad.ir.graph import Value
from tracegrad.ir.registry import VIEW

from . import _state
from .autograd import forward_ad
from .autograd.graph import AccumulateGrad, Node, _camel
from .autograd.record import on_record
from .tensor import Tensor, _new_tensor


def _run_ignoring_fp_errors(kernel, *args, **kwargs):
    with np.errstate(all="ignore"):
        return kernel(*args, **kwargs)


def _kernel_runner():
    """``run(kernel, *args, **kwargs)`` with NumPy's floating-point errors ignored, as torch
    neither warns nor raises on inf/nan.  NumPy 2 keeps its error state in a context
    variable: the runner is the ``run`` of a copy of this thread's context with that
    variable set, ~0.1 us per op where ``with np.errstate(...)`` costs ~0.9 us."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar
    except ImportError:   # pragma: no cover - NumPy 1: a thread-wide error state
        return _run_ignoring_fp_errors
    with np.errstate(all="ignore"):
        ignore = _extobj_contextvar.get()
    context = contextvars.copy_context()
    context.run(_extobj_contextvar.set, ignore)
    return context.run


def _new_kernel_runner(state: dict):
    state["run_kernel"] = run = _kernel_runner()
    return run


_DATA = attrgetter("_data")
_LOCAL = _state.local
_getframe = sys._getframe
_INTERNAL_FILE = _state._internal_file   # co_filename -> inside tracegrad (user_frame fills it)
_NUMPY_DTYPE: dict = {}   # DType -> np.dtype (DType.numpy builds a new one per call)
_CONSTANTS: dict = {}     # (type, value, DType) -> shared constant tensor (EagerFrontend.constant)
_SHARED_CONSTANT = [0]    # the version counter of the shared constants (never bumped)
_SHARED_VERSION = (_SHARED_CONSTANT, 0)   # what a tape node records for one of them


class EagerFrontend(Frontend):
    """Applies ops to Tensors: NumPy kernels eagerly, graph nodes while tracing."""

    def is_operand(self, x) -> bool:
        return isinstance(x, Tensor)

    def composite_result(self, op, operands, out):
        # the decomposition's last node stands for the composite: it takes the composite's
        # torch name (MeanBackward0, not the DivBackward0 of its last step; the outermost
        # composite names it last).  A node an operand already had (a decomposition
        # returning its input) and torch's special names (CopySlices) are kept
        outs = out if isinstance(out, tuple) else (out,)
        mine = {id(x.grad_fn) for x in operands if isinstance(x, Tensor)}
        for t in outs:
            node = t.grad_fn if isinstance(t, Tensor) else None
            if node is None or id(node) in mine or not isinstance(node, Node):
                continue
            if node.extra is None or not (node.extra.name or "").startswith("torch::"):
                node._extra().name = op.node_name or f"{_camel(op.name)}Backward0"
        return out

    def known_value(self, x: Tensor):
        return None if isinstance(x._data, Value) else x._data

    def type_of(self, x: Tensor) -> T.TensorType:
        return x._type

    def autocast_call(self, op, args, kwargs):   # reached only inside tg.autocast
        from .amp import call
        return call(self, op, args, kwargs)

    def plan_key(self, op, attrs_key, operands):
        # shape and dtype straight from the array (or the traced Value): cheaper than x._type;
        # flat (a shape is a tuple, a scalar's entry a type: the key reads back unambiguously)
        key = [op, attrs_key]
        for x in operands:
            if isinstance(x, Tensor):
                d = x._data
                key.append(d.shape)
                key.append(d.dtype)
            else:
                key.append(type(x))
        return tuple(key)

    def location(self):
        return _state.user_location(2)

    def constant(self, value, dtype):
        state = _LOCAL.__dict__   # see `apply`
        if state["tracer"] is not None:   # a literal node, not a program input
            return super().constant(value, dtype)
        t = _shared_constant(value, dtype)
        if t._vc is not _SHARED_CONSTANT or state["record_extras"]:
            # not shared while record-time extras run: saved-tensor pack hooks see operands
            return _new_tensor(t._data, state["inference"])
        return t

    def run_plan(self, op, plan, operands):
        # Frontend.run_plan fused with `constant` and `apply`: the thread state read once
        state = _LOCAL.__dict__
        if plan.converts or (plan.consts and (state["tracer"] is not None
                                              or state["record_extras"])):
            return super().run_plan(op, plan, operands)
        if plan.consts:
            operands = list(operands)
            for i, dtype in plan.consts:
                x = operands[i]
                t = _CONSTANTS.get((type(x), x, dtype))   # `_shared_constant`'s hit, inline
                if t is None:
                    t = _shared_constant(x if type(x) in _PY_SCALARS else py_number(x), dtype)
                    if t._vc is not _SHARED_CONSTANT:
                        t = _new_tensor(t._data, state["inference"])
                operands[i] = t
        results = self._apply(state, op, operands, plan.attrs, plan.out_types, plan.in_types,
                              plan)
        return results if plan.multi else results[0]

    def apply(self, op, operands, attrs, out_types, in_types, plan=None):
        # this thread's state (_state.local) as its dict: reading a thread-local attribute
        # costs ~0.1 us, five times what a dict read does, and `_apply` reads several per op
        return self._apply(_LOCAL.__dict__, op, operands, attrs, out_types, in_types, plan)

    def _apply(self, state, op, operands, attrs, out_types, in_types, plan):
        if state["profiler"] is not None:   # tg.autograd.profiler: times this call, then re-enters
            return state["profiler"].op(self, op, operands, attrs, out_types, in_types)
        tracer = state["tracer"]
        view = op.flags & VIEW
        if view and operands[0]._vc is _SHARED_CONSTANT:   # a view of a scalar
            operands = [_new_tensor(operands[0]._data.copy(), state["inference"]), *operands[1:]]
        ins = tuple(map(_DATA, operands))
        if tracer is not None:
            datas = tracer.emit(op, operands, attrs, out_types)
        else:
            run = state["run_kernel"] or _new_kernel_runner(state)
            try:
                # floating-point errors ignored; most ops have no attributes: no kwargs dict
                out = run(op.kernel, np, *ins, **attrs) if attrs else run(op.kernel, np, *ins)
            except (TracegradError, TypeError, IndexError, ValueError) as e:
                raise _kernel_error(op, operands, e) from None
            except RuntimeError as e:   # a kernel applying an op: the context is entered
                if "cannot enter context" not in str(e):
                    raise
                out = _run_ignoring_fp_errors(op.kernel, np, *ins, **attrs)
            datas = (out,) if type(out) is np.ndarray else _as_arrays(out)
        # torch: only floating-point results require grad (a cast to int ends the graph)
        record = False
        if state["grad_enabled"]:
            for t in operands:
                if t._requires_grad:
                    record = (plan.differentiable if plan is not None
                              else op.differentiable and _any_float(out_types))
                    break
        if view:   # aliases its first operand's storage (see _views.py)
            src = operands[0]
            base = src._base if src._base is not None else src
            chain = src._view_ops + ((op.name, attrs),)
            outs = [Tensor(d, base=base, view_ops=chain) for d in datas]
            if src._vc is not base._vc:   # a view of `.data` counts on `.data`'s own counter
                for o in outs:
                    o._vc = src._vc
            if base._views is None:
                base._views = []
            base._views.extend(weakref.ref(o) for o in outs)
        elif tracer is not None:   # the tracer sees every new tensor
            outs = [Tensor(d) for d in datas]
        elif len(datas) == 1:
            outs = [_new_tensor(datas[0], state["inference"])]
        else:
            outs = [_new_tensor(d, state["inference"]) for d in datas]
        if record:
            # plain loops: in this hot block a comprehension's extra frame costs more than its body
            edges, versions = [], []
            for t in operands:
                vc = t._vc
                versions.append((vc, vc[0]) if vc is not _SHARED_CONSTANT else _SHARED_VERSION)
                if t.grad_fn is not None:
                    edges.append((t.grad_fn, t._out_index))
                else:
                    edges.append(_edge(t) if t._requires_grad else None)
            for o in outs:
                vc = o._vc
                versions.append((vc, vc[0]))
            # the user's line: frame 4 is above _apply, run_plan (or apply), Frontend.call
            # and call's caller, tracegrad's own (an operator, an _ops function, a
            # decomposition, the engine); usually the user's, else `user_frame` walks on
            f = _getframe(4)
            code = f.f_code
            loc = ((code, f.f_lineno) if _INTERNAL_FILE.get(code.co_filename) is False
                   else _state.user_frame(5))
            node = Node(op, attrs, tuple(edges),
                        in_types if type(in_types) is tuple else tuple(in_types), ins,
                        tuple(datas), tuple(versions), out_types, loc, plan)
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
                on_record(node, operands, outs)
        if state["fw_level"] is not None:   # inside a forward-AD dual level: output tangents
            forward_ad.propagate(op, operands, attrs, outs, in_types)
        return outs


def _shared_constant(value, dtype: T.DType) -> Tensor:
    """The constant tensor of Python number `value` as `dtype`: one shared read-only tensor
    per (value, dtype) (`x * 0.5` in a loop), never the base of a view (`_apply` copies
    it first); complex numbers and floats whose equality is not identity (0.0 == -0.0,
    NaN != NaN) get a new tensor each time."""
    key = (type(value), value, dtype)
    t = _CONSTANTS.get(key)
    if t is not None:
        return t
    np_dtype = _NUMPY_DTYPE.get(dtype)
    if np_dtype is None:
        np_dtype = _NUMPY_DTYPE[dtype] = dtype.numpy
    data = np.asarray(value, dtype=np_dtype)
    if type(value) is complex or value != value or (value == 0 and type(value) is float):
        return _new_tensor(data, False)   # not shared (its own version counter)
    data.flags.writeable = False
    t = _new_tensor(data, False)
    t._vc = _SHARED_CONSTANT
    if len(_CONSTANTS) >= 1024:
        _CONSTANTS.clear()
    _CONSTANTS[key] = t
    return t


def _as_arrays(out) -> list:
    """A kernel's result (an array, a NumPy scalar, or a tuple of them) as a list of arrays."""
    return [d if type(d) is np.ndarray else np.asarray(d)
            for d in (out if isinstance(out, tuple) else (out,))]


def _any_float(types) -> bool:
    for t in types:
        if t.dtype.is_differentiable:
            return True
    return False


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
    return with_location(err, _state.user_location(4))


EAGER = EagerFrontend()
