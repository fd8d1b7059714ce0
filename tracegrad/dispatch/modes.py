"""The modes an op can be applied in, and how a thread's current one is chosen.

As JAX's trace stack picks the interpreter of a primitive, the thread state's
``mode`` (tracegrad/_state.py) is the object the dispatcher hands every op
application to; it is re-chosen only when a tracer or a profiler starts or
stops on the thread, so the per-op path reads one entry:

- `EagerMode` (the bottom of the stack): run the op's NumPy kernel;
- `TraceMode` (``tg.compile`` tracing): emit a node into the traced graph
  (compiler/trace.py's ``Tracer.emit``); its values are IR Values;
- `ProfileMode` over either: ``autograd.profiler.profile`` times the call of
  the mode below it.

Both the eager and the trace mode then hand the outputs to `record.finish`,
which records the tape node (traced programs differentiate through the tape
too) and propagates forward-AD tangents.
"""
from __future__ import annotations

import weakref
from operator import attrgetter

import numpy as np

from tracegrad.ir.registry import VIEW

from .. import _state
from ..backends import device_arrays
from ..backends.device_arrays import LIVE as DEVICE_LIVE
from ..backends.device_arrays import first_device_array
from ..tensor import Tensor, _new_tensor
from . import view_meta
from .constants import SHARED_CONSTANT
from .kernels import KERNEL_ERRORS, as_arrays, kernel_error, nested_call, new_kernel_runner
from .record import finish

_DATA = attrgetter("_data")


class Mode:
    """How ops are applied on a thread; see the module docstring.

    Attributes:
        shares_constants: scalar operands may become shared constant tensors
            (`constants.py`); a trace makes them literal nodes instead.
    """

    shares_constants = True

    def apply(self, frontend, state: dict, op, operands: list, attrs: dict, out_types: tuple,
              in_types, plan) -> list:
        """Apply `op` to `operands` (Tensors), returning the output Tensors.

        ``state`` is the thread state's dict; ``plan`` the `_Plan` of the call, or None.
        """
        raise NotImplementedError


class EagerMode(Mode):
    """Runs the op's NumPy kernel (the hot path: see docs/performance.md)."""

    def apply(self, frontend, state, op, operands, attrs, out_types, in_types, plan):
        view = op.flags & VIEW
        if view and operands[0]._vc is SHARED_CONSTANT:   # a view of a scalar: of a copy
            operands = [_new_tensor(operands[0]._data.copy(), state["inference"]), *operands[1:]]
        ins = tuple(map(_DATA, operands))
        if DEVICE_LIVE[0] and first_device_array(ins) is not None:   # tensors on a device
            datas = device_arrays.run_op(
                op, operands, ins, attrs,
                lambda *a: as_arrays(_run_numpy(state, op, operands, a, attrs)))
        else:
            out = _run_numpy(state, op, operands, ins, attrs)
            datas = (out,) if type(out) is np.ndarray else as_arrays(out)
        if view:
            outs = view_outputs(op, attrs, operands[0], datas)
        elif len(datas) == 1:
            outs = [_new_tensor(datas[0], state["inference"])]
        else:
            outs = [_new_tensor(d, state["inference"]) for d in datas]
        return finish(state, op, operands, ins, datas, outs, attrs, out_types, in_types, plan)


def _run_numpy(state, op, operands, ins, attrs):
    run = state["run_kernel"] or new_kernel_runner(state)
    try:
        # floating-point errors ignored; most ops have no attributes: no kwargs dict
        return run(op.kernel, np, *ins, **attrs) if attrs else run(op.kernel, np, *ins)
    except KERNEL_ERRORS as e:
        raise kernel_error(op, operands, e) from None
    except RuntimeError:
        if not nested_call():
            raise
        # a kernel applying an op: already inside the context that ignores fp errors
        return op.kernel(np, *ins, **attrs)


class TraceMode(Mode):
    """Emits a node into the graph `tracer` builds (tg.compile); nothing runs."""

    shares_constants = False

    def __init__(self, tracer):
        self.tracer = tracer

    def apply(self, frontend, state, op, operands, attrs, out_types, in_types, plan):
        ins = tuple(map(_DATA, operands))
        datas = self.tracer.emit(op, operands, attrs, out_types)
        if op.flags & VIEW:
            outs = view_outputs(op, attrs, operands[0], datas)
        else:   # Tensor() (not _new_tensor): the tracer sees every new tensor
            outs = [Tensor(d) for d in datas]
        return finish(state, op, operands, ins, datas, outs, attrs, out_types, in_types, plan)


class ProfileMode(Mode):
    """``autograd.profiler.profile`` recording: its ``op`` times the mode below (it clears
    the thread's profiler around the inner call, which re-selects that mode)."""

    def __init__(self, profiler, below: Mode):
        self.profiler = profiler
        self.shares_constants = below.shares_constants

    def apply(self, frontend, state, op, operands, attrs, out_types, in_types, plan):
        return self.profiler.op(frontend, op, operands, attrs, out_types, in_types)


EAGER_MODE = EagerMode()


def select(tracer, profiler) -> Mode:
    """The thread's mode for its tracer and profiler (either may be None)."""
    mode = EAGER_MODE if tracer is None else TraceMode(tracer)
    return mode if profiler is None else ProfileMode(profiler, mode)


def view_outputs(op, attrs: dict, src: Tensor, datas) -> list:
    """The outputs of view op `op` on `src`: tensors aliasing its base's storage, which
    remembers them (see tracegrad/_views.py)."""
    base = src._base if src._base is not None else src
    if op.view_pieces is None:
        chain = src._view_ops + ((op.name, attrs),)
        outs = [Tensor(d, base=base, view_ops=chain) for d in datas]
    else:   # one node, several views (split): each replays as the single views making it
        shape = src._type.shape
        outs = [Tensor(d, base=base, view_ops=src._view_ops + op.view_pieces(shape, i, **attrs))
                for i, d in enumerate(datas)]
    register_views(op.name, src, base, outs)
    return outs


def adopt_view(name: str, src: Tensor, out: Tensor, chain: tuple) -> None:
    """Make `out`, a view op `name` made of some intermediate of `src`, a view of `src`'s
    base reached from it by `chain` (as_strided of a view reads its base's storage:
    tracegrad/_strided.py)."""
    base = src._base if src._base is not None else src
    old = out._base
    if old is not None and old._views:
        old._views = [r for r in old._views if r() is not out]
    out._base, out._view_ops, out._vc = base, chain, base._vc
    register_views(name, src, base, [out])


def register_views(name: str, src: Tensor, base: Tensor, outs: list) -> None:
    """`base` remembers its new views `outs` of `src`; they count on `src`'s version counter
    and take the marks torch gives views made from it (see view_meta.py)."""
    if src._vc is not base._vc:   # a view of `.data` counts on `.data`'s own counter
        for o in outs:
            o._vc = src._vc
    if base._views is None:
        base._views = []
    base._views.extend(weakref.ref(o) for o in outs)
    local = _state.local
    if local.inference and not getattr(base, "_inference", False):
        for o in outs:   # a view of a normal tensor is a normal tensor (torch 2.13)
            o._inference = False
    if view_meta.MARKS or not local.grad_enabled:   # views torch forbids writing to
        view_meta.mark_new_views(src, base, outs, name, local.grad_enabled, local.inference)


_state.install_mode_selector(select)
