"""`TensorFrontend`: the one entry point of every op call on Tensors.

``a + b``, ``tg.mul(a, b)``, ``a.mul(b)`` and the engine's replay of a
backward program all reach `DISPATCHER.call` (`ir.builder.Frontend.call`):
bind the arguments by the op's declaration, expand a composite, promote,
infer, with the outcome cached per (op, attributes, operand types) as a
`_Plan`.  Then `run_plan` turns scalar operands into shared constants and
hands the application to the thread's mode (`modes.py`: eager kernels, a
tg.compile trace, the profiler), which records the tape (`record.py`).

What is costly per op is done once per kind of call instead (see
docs/performance.md, "Eager per-op overhead"): the plan cache, the thread
state read once as its dict, shared scalar constants, the user's line
captured as (code, line) and formatted only when read.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.builder import _PY_SCALARS, Frontend, py_number
from tracegrad.ir.errors import named, with_location
from tracegrad.ir.registry import MULTI_VIEW, SCALAR_ARGS
from tracegrad.ir.graph import Value

from .. import _state, tensor as _tensor_module
from ..backends.device_arrays import ARRAY_TYPES
from ..tensor import Tensor
from . import view_meta
from . import modes  # noqa: F401  (installs the thread's mode selector in _state)
from .constants import CONSTANTS, SHARED_CONSTANT, scalar_tensor, shared_constant
from .hooks import HOOKS
from .record import edge
from .tape import TapeNode, _camel

_LOCAL = _state.local


class TensorFrontend(Frontend):
    """Applies ops to Tensors through the thread's mode (see the module docstring)."""

    def is_operand(self, x) -> bool:
        return isinstance(x, Tensor)

    def composite_result(self, op, operands, out, params=None):
        # the decomposition's last node stands for the composite: it takes the composite's
        # torch name (MeanBackward0, not the DivBackward0 of its last step; the outermost
        # composite names it last).  A node an operand already had (a decomposition
        # returning its input) and torch's special names (CopySlices) are kept.  Where
        # torch records the op as one node (`CompositeDef.node_inputs`), the node also
        # shows that node's edges, to the composite's operands (NodeExtra.edges); the
        # engine keeps following the decomposition's own edges
        outs = out if isinstance(out, tuple) else (out,)
        inner = False
        if op.flags & MULTI_VIEW and type(out) in (tuple, list) and out and all(
                isinstance(t, Tensor) and t._base is not None for t in out):
            # several views of the input (unbind, split, chunk): torch forbids writing to them
            name = op.node_name[:-len("Backward0")] if op.node_name else _camel(op.name)
            view_meta.mark_multi(operands[0], out, name, _state.local.grad_enabled)
            inner = not op.node_name   # split with a list: split_with_sizes names the nodes
        mine = {id(x.grad_fn) for x in operands if isinstance(x, Tensor)}
        shown = None
        for t in outs:
            node = t.grad_fn if isinstance(t, Tensor) else None
            if node is None or id(node) in mine or not isinstance(node, TapeNode):
                continue
            if inner and node.extra is not None and node.extra.name:
                continue
            if node.extra is None or not (node.extra.name or "").startswith("torch::"):
                extra = node._extra()
                extra.name = op.node_name or f"{_camel(op.name)}Backward0"
                if op.node_inputs is not None:
                    if shown is None:
                        xs = op.node_operands(operands, params, self.is_operand)
                        shown = False if xs is None else tuple(
                            None if x is None else edge(x) for x in xs)
                    if shown is not False:
                        extra.edges = shown
        return out

    def known_value(self, x: Tensor):
        d = x._data   # a device array's value is read on the host (checks, constants)
        return None if isinstance(d, Value) else (np.asarray(d) if type(d) in ARRAY_TYPES else d)

    def type_of(self, x: Tensor) -> T.TensorType:
        return x._type

    def autocast_call(self, op, args, kwargs):   # reached only inside tg.autocast
        return HOOKS.autocast(self, op, args, kwargs)

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
        if not state["mode"].shares_constants:   # tracing: a literal node, not a program input
            return super().constant(value, dtype)
        t = self._new_constant(None, value, dtype)
        if t._vc is not SHARED_CONSTANT or state["record_extras"]:
            # not shared while record-time extras run: saved-tensor pack hooks see operands
            return scalar_tensor(t._data, state["inference"])
        return t

    def _new_constant(self, op, value, dtype):
        try:
            return shared_constant(value, dtype)
        except OverflowError as e:   # an int beyond 64 bits: torch's words, the op, the line
            raise with_location(e if op is None else named(e, op.name), self.location()) from None

    def run_plan(self, op, plan, operands):
        # Frontend.run_plan with `constant` inlined for the common case (scalar operands,
        # eager, no record-time extras): the thread state read once; the rest goes the
        # generic way
        state = _LOCAL.__dict__
        mode = state["mode"]
        if plan.converts or (plan.consts and (state["record_extras"] or not mode.shares_constants
                                              or op.flags & SCALAR_ARGS)):
            return super().run_plan(op, plan, operands)
        if plan.consts:
            operands = list(operands)
            for i, dtype in plan.consts:
                x = operands[i]
                t = CONSTANTS.get((type(x), x, dtype))   # `shared_constant`'s hit, inline
                if t is None:
                    t = self._new_constant(op, x if type(x) in _PY_SCALARS else py_number(x),
                                           dtype)
                    if t._vc is not SHARED_CONSTANT:
                        t = scalar_tensor(t._data, state["inference"])
                operands[i] = t
        results = mode.apply(self, state, op, operands, plan.attrs, plan.out_types,
                             plan.in_types, plan)
        return results if plan.multi else results[0]

    def apply(self, op, operands, attrs, out_types, in_types, plan=None):
        # this thread's state (_state.local) as its dict: reading a thread-local attribute
        # costs ~0.1 us, five times what a dict read does, and an op reads several
        state = _LOCAL.__dict__
        return state["mode"].apply(self, state, op, operands, attrs, out_types, in_types, plan)


DISPATCHER = TensorFrontend()
EAGER = DISPATCHER   # the name the rest of tracegrad knows it by (it also traces)
_tensor_module._DISPATCH = DISPATCHER   # Tensor's operators call it (tensor.py is below us)
