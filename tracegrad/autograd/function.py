"""Custom differentiable operations: `Function` (torch.autograd.Function).

    class Exp(tg.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    y = Exp.apply(x)          # y.grad_fn.name() == "ExpBackward"

``apply`` runs ``forward`` without recording and leaves one tape node, the
``ctx`` itself (``y.grad_fn is ctx``, an instance of ``<Name>Backward``).
In the backward program the node is a ``custom_function`` mark whose VJP
is one opaque ``host_call`` node (see hooks.py): the array executors call
``backward`` in Python between the compiled segments around it (on jax
too: the program is split there, no ``pure_callback``).  When the backward
runs on tensors (``create_graph=True`` or inside ``tg.compile``), the
host call calls ``backward`` on those tensors, so a ``backward`` written
with tracegrad ops is recorded (differentiable: double backward works) or
traced into the compiled program, i.e. inlined.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.ops.host import CUSTOM_FUNCTION

from .. import _state, _views
from .._ops import full, sum_to_size
from ..dispatch import view_meta
from ..dispatch.record import edge as _edge
from ..tensor import Tensor
from .anomaly import nan_error
from .grad_mode import no_grad
from .graph import TapeNode
from .record import INFERENCE_SAVED, forward_stack
from .saved_hooks import _FREED, PACKED


class FunctionCtx:
    """The methods ``ctx`` offers inside ``forward``/``setup_context`` and ``backward``."""

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for ``backward``; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for ``jvp`` (forward-mode AD), which reads them as ``ctx.saved_tensors``."""
        self._saved_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that ``forward`` modified in place (they must be returned)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs without gradient (``backward`` still gets a zero gradient for each)."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, ``backward`` gets None (not zeros) for outputs no gradient reached."""
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes.

        Raises:
            RuntimeError: after backward freed them (retain_graph=False), or when
                one was modified in place since (torch's messages).
        """
        if getattr(self, "_in_jvp", False):   # inside Function.jvp: save_for_forward's
            return tuple(getattr(self, "_saved_forward", ()))
        if not getattr(self, "_recorded", False):
            return tuple(getattr(self, "_to_save", ()))
        if self.saved_outputs is None:   # freed by a backward without retain_graph
            raise RuntimeError(_FREED)
        out = []
        for j, entry in enumerate(self._saved):
            if entry is PACKED:
                out.append(_unpack(self, j))
                continue
            if entry is not None:
                box, seen = self._saved_versions[j]
                if box[0] != seen:
                    raise RuntimeError(
                        f"one of the variables needed for gradient computation has been modified "
                        f"by an inplace operation: [{entry._type}], which is saved tensor {j} of "
                        f"{self.name()}, is at version {box[0]}; expected version {seen} instead. "
                        f"Hint: save_for_backward was called at {self.loc}; avoid modifying this "
                        "tensor in place before backward.")
            out.append(entry)
        return tuple(out)

    @property
    def saved_variables(self) -> tuple:
        return self.saved_tensors


class BackwardCFunction(TapeNode, FunctionCtx):
    """The tape node of one `Function.apply` (and its ``ctx``); subclassed per Function as
    ``<Name>Backward``."""

    _forward_cls = None

    def name(self) -> str:
        return type(self).__name__

    def _fields_saved(self) -> dict:
        return {}

    def apply(self, *args):
        """Call the Function's ``backward`` (or ``vjp``) with this node as ``ctx`` and `args` as
        the output gradients, as torch's ``BackwardCFunction.apply``: no materialising, shape
        fitting or checks, the result as ``backward`` returns it (recorded if grad mode is on)."""
        return self._forward_cls._user_backward()(self, *args)

    def _init_ctx(self, needs: tuple) -> None:
        self.extra = None
        self.needs_input_grad = needs
        self._to_save = ()
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize = True
        self._recorded = False


class Function:
    """Base class of custom differentiable operations (torch.autograd.Function).

    Subclasses define the staticmethods ``forward(ctx, *args, **kwargs)``
    (or ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``) and
    ``backward(ctx, *grad_outputs)``, which returns one gradient per
    ``forward`` argument (None for non-tensor arguments and inputs needing
    none).  Call ``Function.apply(*args)``, never ``forward`` directly.
    See the module docstring for how ``backward`` runs in the compiled
    backward program.
    """

    _backward_cls = BackwardCFunction

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. "
                           "Please use new-style autograd function with static forward method. "
                           f"(call {type(self).__name__}.apply(...))")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def _user_backward(cls):
        """``backward`` or ``vjp``, whichever the subclass defines (torch's _get_user_fn)."""
        backward, vjp = cls.backward, cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return vjp if vjp is not Function.vjp else backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Output tangents from input tangents, for forward-mode AD (one per ``forward`` argument:
        zeros for a tensor without tangent, None for a non-tensor); see forward_ad.py."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and record one node whose backward is ``cls.backward``."""
        if kwargs or _uses_setup_context(cls):   # bind keywords and defaults, as torch
            args = _bind(cls, args, kwargs)
        if _state.local.fw_level is not None:   # dual inputs: tangents by cls.jvp
            from .forward_ad import function_apply
            return function_apply(cls, args, _apply)
        return _apply(cls, args)


def _uses_setup_context(cls) -> bool:
    return cls.setup_context is not Function.setup_context


def _bind(cls, args, kwargs) -> tuple:
    sig = inspect.signature(cls.forward)
    params = list(sig.parameters.values())
    if not _uses_setup_context(cls):
        params = params[1:]   # ctx
    bound = inspect.Signature(params).bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:   # keyword-only parameters: torch's apply passes no keywords on
        raise TypeError(f"forward() got an unexpected keyword argument "
                        f"'{next(iter(bound.kwargs))}'")
    return tuple(bound.args)


def _apply(cls, args: tuple, ctx_out: list | None = None):
    local = _state.local
    grad_on = local.grad_enabled
    # as torch, needs_input_grad is each input's requires_grad, also under no_grad
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    ctx = cls._backward_cls.__new__(cls._backward_cls)
    ctx._init_ctx(needs)
    if ctx_out is not None:   # forward_ad.function_apply calls jvp on this ctx afterwards
        ctx_out.append(ctx)
    tensor_args = [a for a in args if isinstance(a, Tensor)]
    edges = tuple(_edge(a) if n and grad_on else None
                  for a, n in zip(args, needs) if isinstance(a, Tensor))
    in_types = tuple(a._type for a in tensor_args)
    in_saved = tuple(a._data for a in tensor_args)   # before forward can modify them in place
    in_versions = tuple((a._vc, a._vc[0]) for a in tensor_args)
    with no_grad():
        if _uses_setup_context(cls):
            output = cls.forward(*args)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args)
    if not (grad_on and any(needs)):
        if grad_on:   # torch still marks the views made inside forward (view_meta.py)
            _mark_views_made_inside(cls, output, tensor_args)
        return output
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    positions = [i for i, o in enumerate(outputs) if isinstance(o, Tensor)]
    if not positions:
        return output
    dirty = {id(t) for t in ctx._dirty}
    for t in ctx._dirty:
        if not any(o is t for o in outputs):
            raise RuntimeError(f"{cls.__name__}: some elements marked as dirty during the forward "
                               "method were not returned as output. The inputs that are modified "
                               "inplace must all be outputs of the Function.")
        if t._requires_grad and t.grad_fn is None:
            raise RuntimeError(f"{cls.__name__}: a leaf Variable that requires grad has been used "
                               "in an in-place operation (mark_dirty).")
        if _tracked_view(t) and t._base._requires_grad and t._base.grad_fn is None:
            raise RuntimeError(f"{cls.__name__}: a view of a leaf Variable that requires grad is "
                               "being used in an in-place operation.")
    non_diff = {id(t) for t in ctx._non_differentiable}
    input_ids = {id(a) for a in tensor_args}
    new_outputs = list(outputs)
    out_tensors = []
    for i in positions:
        o = outputs[i]
        if id(o) in dirty:
            pass                   # modified in place: the input itself takes the new history
        elif id(o) in input_ids or o._requires_grad or o.grad_fn is not None or o._base is not None:
            o = Tensor(o._data)    # an input (or a view, or a tensor with history): a new tensor
        new_outputs[i] = o
        out_tensors.append(o)
    out_types = tuple(o._type for o in out_tensors)
    extra = ctx.extra   # metadata set inside forward survives
    versions = in_versions + tuple((t._vc, t._vc[0] + (id(t) in dirty)) for t in out_tensors)
    TapeNode.__init__(ctx, CUSTOM_FUNCTION, {"name": cls.__name__, "node": -1, "out_types": out_types},
                  edges, in_types, in_saved, tuple(o._data for o in out_tensors), versions,
                  out_types, _state.user_location(3))
    ctx.extra = extra
    ctx._arg_is_tensor = tuple(isinstance(a, Tensor) for a in args)
    # backward gets one gradient per forward output (None for a non-tensor one, as torch)
    ctx._out_positions, ctx._n_outputs = tuple(positions), len(outputs)
    ctx._out_differentiable = tuple(o.dtype.is_differentiable and id(outputs[i]) not in non_diff
                                    for i, o in zip(positions, out_tensors))
    # views among several differentiable outputs get torch's multi-output mark
    n_diff = sum(ctx._out_differentiable)
    view_kind = view_meta.MULTI if n_diff > 1 else view_meta.CUSTOM
    for k, o in enumerate(out_tensors):
        if o.dtype.is_differentiable and id(outputs[positions[k]]) not in non_diff:
            o._requires_grad = True
            o.grad_fn = ctx
            o._out_index = k
            orig = outputs[positions[k]]
            if id(orig) not in dirty and (id(orig) in input_ids or orig._base is not None):
                # a view made inside forward, or an input returned as is: torch forbids
                # in-place ops on it (they would bypass the custom backward)
                view_meta.mark(o, view_kind, cls.__name__, k, has_node=True)
        else:
            o._requires_grad = False
        if id(o) in dirty:
            o._vc[0] += 1   # torch bumps a dirty tensor's version once more
    for o in out_tensors:
        if id(o) in dirty and o.grad_fn is ctx and _tracked_view(o):
            _rebase_view_base(o)
    _save(ctx, local)
    ctx._recorded = True
    if local.anomaly:
        ctx._extra().stack = forward_stack()
    return new_outputs[0] if single else tuple(new_outputs)


def _tracked_view(t: Tensor) -> bool:
    """A view whose writes reach its base's history (not a ``detach()`` / ``.data`` alias)."""
    return t._base is not None and not any(op == "alias" for op, _ in t._view_ops)


def _rebase_view_base(view: Tensor) -> None:
    """A dirty output that is a view: its base takes the new history too, as any in-place op
    through a view gives it (torch's ``rebase_history``: the base's grad_fn becomes
    CopySlices around the Function's node, and the view, regenerated from the base, shows
    AsStridedBackward0).  The values are already in place (forward wrote them, and the
    versions were bumped); only the history moves."""
    base = view._base
    new = _views.write_through(view, view, dirty=True)
    base._data = new._data
    base.grad_fn, base._out_index, base._requires_grad = new.grad_fn, new._out_index, True
    if base._views:
        _views.refresh(base)


def _mark_views_made_inside(cls, output, inputs) -> None:
    """The views forward made, when no input requires grad: torch's custom-Function mark
    (with no node), or its multi-view one among several tensor outputs."""
    outs = [o for o in (output if isinstance(output, tuple) else (output,))
            if isinstance(o, Tensor)]
    ids = {id(a) for a in inputs}
    kind = view_meta.MULTI if len(outs) > 1 else view_meta.CUSTOM
    for k, o in enumerate(outs):
        if o._base is not None and id(o) not in ids and o.dtype.is_differentiable:
            view_meta.mark(o, kind, cls.__name__, k)


def _save(ctx: BackwardCFunction, local) -> None:
    """Turn ``ctx.save_for_backward``'s tensors into the node's saved values (packing them
    under saved-tensor hooks, refusing inference tensors)."""
    saved = tuple(ctx._to_save)
    ctx._saved_versions = tuple((t._vc, t._vc[0]) if t is not None else (None, None)
                                for t in saved)
    ctx._to_save = ()
    if local.inference_seen:
        for t in saved:
            if t is not None and getattr(t, "_inference", False):
                raise RuntimeError(f"{ctx.name()}: {INFERENCE_SAVED}")
    if local.saved_hooks and saved:
        pack, unpack = local.saved_hooks[-1]
        stack, local.saved_hooks = local.saved_hooks, []
        try:
            packed = [_pack_one(pack, t) if t is not None else None for t in saved]
        finally:
            local.saved_hooks = stack
        ex = ctx._extra()
        ex.packed = ex.packed or {}
        for j, (t, p) in enumerate(zip(saved, packed)):
            if t is not None:
                ex.packed[("ctx", j)] = (p, unpack)
        saved = tuple(PACKED if t is not None else None for t in saved)
    ctx._saved = saved


def _pack_one(pack, t: Tensor):
    """``pack(t)``, refusing in-place changes to `t` inside it (torch's error)."""
    view_meta.PACKING.append(t)
    try:
        return pack(t)
    finally:
        view_meta.PACKING.pop()


def _unpack(ctx: BackwardCFunction, j: int):
    packed, unpack = ctx.extra.packed[("ctx", j)]
    local = _state.local
    stack, local.saved_hooks = local.saved_hooks, []
    try:
        t = unpack(packed)
    finally:
        local.saved_hooks = stack
    if not isinstance(t, Tensor):
        raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(t).__name__} ({ctx.name()}, saved tensor {j})")
    return t


# ---- running backward (a host call; see hooks.py) ----------------------------------------------

def run_backward(node: BackwardCFunction, attrs: dict, inputs: list) -> list:
    """Call ``Function.backward`` for `node` with the gradients of its outputs; returns one
    gradient per floating-point tensor input (None: no gradient)."""
    cls = node._forward_cls
    it = iter(inputs)
    grads = [None] * node._n_outputs
    materialize_non_diff = getattr(node, "_materialize_non_diff_grads", True)
    for pos, defined, diff, t in zip(node._out_positions, attrs["mask"],
                                     node._out_differentiable, node.out_types):
        g = next(it) if defined else None
        if g is None and node._materialize and (diff or materialize_non_diff):
            g = full(t.shape, 0, t.dtype)   # torch: zeros, also for an integer output
        grads[pos] = g
    result = cls._user_backward()(node, *grads)
    if not isinstance(result, tuple):
        result = (result,)
    n_args = len(node.needs_input_grad)
    if len(result) > n_args and all(r is None for r in result[n_args:]):
        result = result[:n_args]
    if len(result) != n_args:
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {n_args}, got {len(result)})")
    out, k = [], 0
    check_nan = _state.local.anomaly and _state.local.anomaly_check_nan
    for i, r in enumerate(result):
        if not node._arg_is_tensor[i]:
            if r is not None:
                raise RuntimeError(f"function {node.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   "input was not a Variable")
            continue
        t = node.in_types[k]
        k += 1
        if not t.dtype.is_differentiable:
            continue
        if r is not None:
            if not isinstance(r, Tensor):
                raise TypeError(f"function {node.name()} returned a {type(r).__name__} as "
                                f"gradient {i}; expected a Tensor or None")
            r = _fit_grad(node, i, r, t)
            if check_nan and isinstance(r._data, np.ndarray) and np.isnan(r._data).any():
                raise nan_error(node, i, None)
        out.append(r)
    return out


def _fit_grad(node, i: int, g, t: T.TensorType):
    """torch's validate_outputs: sum a broadcast gradient to the input's shape, cast dtype."""
    if g.shape != t.shape:
        if not _expandable(t.shape, g.shape):
            raise RuntimeError(f"Function {node.name()} returned an invalid gradient at index {i} "
                               f"- got {list(g.shape)} but expected shape compatible with "
                               f"{list(t.shape)}")
        g = sum_to_size(g, t.shape)
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    return g


def _expandable(shape, to) -> bool:
    if len(shape) > len(to):
        return False
    for a, b in zip(reversed(shape), reversed(to)):
        if a != b and a != 1:
            return False
    return True


# ---- once_differentiable ---------------------------------------------------------------------

class _DelayedError(Function):
    """Outputs whose backward raises: what @once_differentiable returns under create_graph."""

    @staticmethod
    def forward(ctx, *grads):
        outs = tuple(Tensor(g._data) for g in grads)
        return outs if len(outs) > 1 else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_DelayedError._backward_cls.__name__ = "Error"   # torch's name for this node


def once_differentiable(fn):
    """Mark a ``backward`` as not differentiable (torch.autograd.function.once_differentiable).

    It runs without recording; under ``create_graph=True`` its results get a
    node that raises "trying to differentiate twice a function that was
    marked with @once_differentiable" if differentiated again.
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.local.grad_enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        fake = []
        for o in outs:
            if isinstance(o, Tensor):
                o = Tensor(o._data, requires_grad=True)
            fake.append(o)
        tensors = [o for o in fake if isinstance(o, Tensor)]
        if not tensors:
            return outputs
        wrapped = _DelayedError.apply(*tensors)
        wrapped = list(wrapped) if isinstance(wrapped, tuple) else [wrapped]
        it = iter(wrapped)
        res = tuple(next(it) if isinstance(o, Tensor) else o for o in fake)
        return res[0] if single else res
    return wrapper


class InplaceFunction(Function):
    """torch.autograd.function.InplaceFunction: a Function with an ``inplace`` flag."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):   # pragma: no cover - legacy torch API, not supported
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("NestedIOFunction (legacy torch API) is not supported")


__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction", "once_differentiable"]
