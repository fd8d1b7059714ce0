"""Forward-mode AD (torch.autograd.forward_ad): dual tensors, and JVP programs from the registry.

    import tracegrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)
        y_primal, y_tangent = fwAD.unpack_dual(y)   # y_tangent = J_f(primal) @ tangent

Inside a dual level every op whose operands carry tangents computes the
tangents of its outputs right after its kernel runs (one check in
tracegrad/dispatch/record.py, which calls `propagate` through its hook slot).  How an op's tangent is computed is one small IR program
per (op, attributes, operand types, which operands carry tangents), built
once and cached (`op_jvp`, in jvp_rules.py), from the first of:

1. the op's hand-written ``jvp`` rule (``OpDef.jvp``, next to its ``vjp``);
2. ``jvp=LINEAR``: the op is linear in its floating-point operands (views,
   reductions by sum, cat, where, indexing), so the tangent is the op
   applied to the tangents;
3. an elementwise op on real operands: its Jacobian is diagonal, hence
   symmetric, so J t is the VJP rule applied to t (broadcast to the output);
4. any other op: the VJP rule is a linear map ct -> J^T ct written with
   differentiable IR ops, so reverse-mode autodiff of that map (the
   autodiff pass, with the tangents as its cotangents) gives its transpose
   J t exactly: the "transpose of the VJP" (JAX's linear_transpose; the
   double-backward trick of torch.autograd.functional.jvp).

The eager path runs an op's program through the tensor dispatcher with
forward AD suspended, so tangents are ordinary tensors: recorded on the tape
when grad mode is on (a tangent is differentiable with respect to the primal
and to the input tangent, as in torch).  `jvp_graph` inlines the same
per-op programs into a whole IR graph (the functional API's forward-mode
Jacobian and forward-over-reverse Hessian use it).

Only one dual level exists at a time, as in torch ("Nested forward mode AD is
not supported at the moment").
"""
from __future__ import annotations

import functools
import weakref
from collections import namedtuple

from tracegrad.ir.registry import NONDIFF, VIEW, OpDef

from .. import _state, _views
from .._creation import zeros_like
from ..dispatch.frontend import EAGER
from ..dispatch.hooks import register
from ..tensor import Tensor
from .jvp_rules import (  # noqa: F401  (OpJvp ...: tg.autograd.forward_ad's names too)
    CACHE_SIZE, OpJvp, _differentiable, clear_cache, jvp_graph, op_jvp)

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("What `unpack_dual` returns: ``(primal, tangent)``; tangent is None "
                              "for a tensor without one (torch's UnpackedDualTensor).")


# ---- levels -------------------------------------------------------------------------------------
class _Level:
    """One dual level: the tensors given tangents while it was active (to clear them on exit)."""

    __slots__ = ("index", "duals", "limit")

    def __init__(self, index: int):
        self.index = index
        self.duals: list = []   # weak references; dead ones are dropped as the list grows
        self.limit = 1024


def _level_now() -> _Level | None:
    """The level that exists now, also while `_suspended` hides it from the dispatcher."""
    local = _state.local
    lv = local.fw_level
    if lv is not None:
        return lv
    return local.fw_suspended


def enter_dual_level() -> int:
    """Create the dual level and return its index (0) (torch.autograd.forward_ad.enter_dual_level).

    Raises:
        RuntimeError: a level exists already (nested forward AD is not supported, as in torch).
    """
    if _level_now() is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.local.fw_level = _Level(0)
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Destroy the dual level: every tensor made dual inside it loses its tangent.

    Raises:
        RuntimeError: no level exists, or `level` is not the last one created (torch's messages).
    """
    lv = _level_now()
    if lv is None:
        raise RuntimeError("Dual level must be a positive number." if level is None else
                           "Trying to exit a forward AD level that does not exist.")
    if level is not None and level != lv.index:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    for ref in lv.duals:
        t = ref()
        if t is not None and getattr(t, "_fw", None) is not None and t._fw[0] is lv:
            t._fw = None
    lv.duals.clear()
    for node, hit in list(_NODE_TANGENTS.items()):
        if hit[0] is lv:
            del _NODE_TANGENTS[node]
    _state.local.fw_level = None
    _state.local.fw_suspended = None


class dual_level:
    """Context manager of a dual level (torch.autograd.forward_ad.dual_level).

    ``with dual_level() as level:`` enters the level (``level == 0``) and exits
    it at the end, so the tangents made inside are dropped.  Also a decorator.
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> bool:
        exit_dual_level()
        return False

    def __call__(self, fn):

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper


class _suspended:
    """Forward AD off (tangent programs run here: their ops must not propagate again)."""

    __slots__ = ("level", "outer")

    def __enter__(self):
        local = _state.local
        self.level, self.outer = local.fw_level, local.fw_suspended
        if self.level is not None:
            local.fw_level = None
            local.fw_suspended = self.level
        return self.level

    def __exit__(self, *exc):
        local = _state.local
        local.fw_level, local.fw_suspended = self.level, self.outer
        return False


def _tangent_of(t, level: _Level):
    fw = getattr(t, "_fw", None)
    return fw[1] if fw is not None and fw[0] is level else None


def _set_tangent(t, tangent, level: _Level, owner: "_TangentOwner | None" = None) -> None:
    t._fw = (level, tangent) if owner is None else (level, tangent, owner)
    duals = level.duals
    duals.append(weakref.ref(t))
    if len(duals) > level.limit:   # a long loop inside one level: keep the list bounded
        level.duals = duals = [r for r in duals if r() is not None]
        level.limit = max(1024, 2 * len(duals))


class _TangentOwner:
    """The tangent of a dual made by `make_dual`, shared with the views made of it.

    `make_dual` returns a view of its primal whose tangent is its own (torch sets it on the
    view, not on the base): the primal's other views and the primal itself have none, and a
    write through the primal does not touch it.  The views made of the dual have tangents
    that are views of this one (torch's forward grad of a view), so an in-place op on such a
    view (``d[1:].mul_(4)``) changes this tangent where the view lies and keeps the rest.
    `depth` is the length of the dual's view chain from its base: a view of the dual reads
    its tangent by replaying its own chain past `depth` on `tangent`."""

    __slots__ = ("tangent", "depth")

    def __init__(self, tangent, depth: int):
        self.tangent, self.depth = tangent, depth


def _owner_of(t, level: _Level) -> "_TangentOwner | None":
    fw = getattr(t, "_fw", None)
    return fw[2] if fw is not None and len(fw) > 2 and fw[0] is level else None


def _owned_tangent(t, owner: _TangentOwner):
    """`t`'s tangent as a view of its owner's: the owner's tangent through the view ops that
    lead from the dual to `t` (forward AD off)."""
    with _suspended():
        return _views.replay(owner.tangent, t._view_ops[owner.depth:])


def write_view_tangent(view, result):
    """An in-place op gives `view` the value `result` inside a dual level.  When `view`'s
    tangent belongs to a `make_dual` dual (itself or one of its views), that tangent takes
    `result`'s tangent (zeros where `result` has none) where `view` lies, and `result` is
    returned without its tangent, for the base to take the value alone; otherwise None (the
    base's tangent takes the write, as for any view)."""
    lv = _state.local.fw_level
    owner = _owner_of(view, lv)
    if owner is None:
        return None
    new = _tangent_of(result, lv)
    chain = view._view_ops[owner.depth:]
    with _suspended():
        if new is None:
            new = zeros_like(result)
        parents = [owner.tangent]
        for step in chain[:-1]:
            parents.append(_views.replay(parents[-1], (step,)))
        for (op, attrs), parent in zip(reversed(chain), reversed(parents)):
            new = _views.inverse(op, attrs, parent, new)
        if new.dtype is not owner.tangent.dtype:
            new = new.to(owner.tangent.dtype)
    owner.tangent = new
    plain = Tensor(result._data, requires_grad=result._requires_grad, grad_fn=result.grad_fn,
                   out_index=result._out_index)
    return plain


def _check_level(level, fn: str) -> _Level:
    lv = _level_now()
    if lv is None:
        if fn == "make_dual":
            raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                               "make sure to enter_dual_level() first.")
        return None
    if level is not None and level != lv.index:
        raise RuntimeError(f"{fn}: level {level} does not exist; the current dual level is "
                           f"{lv.index} (nested forward mode AD is not supported)")
    return lv


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of `tensor` whose tangent is `tangent` (torch.autograd.forward_ad.make_dual).

    Args:
        tensor: the primal, a floating-point (or complex) tensor of any shape.
        tangent: a tensor of the same shape; converted to the primal's dtype
            (torch keeps a tangent of another floating dtype as it is).
        level: the dual level (only 0, the one `dual_level` makes, exists).
    Returns:
        a view of `tensor` (it keeps `tensor`'s autograd history, as torch's
        ``ViewBackward0``) carrying `tangent` until the level exits.
    Raises:
        RuntimeError: no dual level exists; `tensor` is already dual at this
            level; the shapes differ (torch's messages).
        ValueError: a primal or tangent that is not floating point or complex.
    """
    lv = _check_level(level, "make_dual")
    for what, x in (("primal", tensor), ("tangent", tangent)):
        if not isinstance(x, Tensor):
            raise TypeError(f"make_dual: expected the {what} to be a Tensor, got "
                            f"{type(x).__name__}")
        if not _differentiable(x.dtype):
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"{x.dtype.name}")
    if _tangent_of(tensor, lv) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {lv.index} is not supported.")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    with _suspended():
        if tangent.dtype is not tensor.dtype:
            tangent = tangent.to(tensor.dtype)
        dual = _identity_view(tensor)
    _set_tangent(dual, tangent, lv, _TangentOwner(tangent, len(dual._view_ops)))
    if dual.grad_fn is not None:   # a backward reading the view sees its tangent
        _NODE_TANGENTS[dual.grad_fn] = (lv, (None,), (tangent,))
    return dual


def _identity_view(t):
    """A view of `t` with `t`'s autograd history (torch's ``view_as``)."""
    return EAGER.call("reshape", t, t.shape)


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of `tensor` (torch.autograd.forward_ad.unpack_dual).

    The primal is a view of `tensor` without the tangent (it keeps the autograd
    history); the tangent is the tensor given to `make_dual` or computed by the
    ops since, None when `tensor` has none at this level (or no level exists).
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    lv = _check_level(level, "unpack_dual")
    tangent = _tangent_of(tensor, lv) if lv is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = _identity_view(tensor)
    return UnpackedDualTensor(primal, tangent)


# ---- the eager path (the dispatcher's `propagate` hook, inside a dual level) --------------------------------
def propagate(op: OpDef, operands: list, attrs: dict, outs: list, in_types) -> None:
    """Give `outs` the tangents of `op` applied to `operands`, if any operand has one."""
    level = _state.local.fw_level
    tangents = [_tangent_of(t, level) for t in operands]
    if all(t is None for t in tangents) or not any(_differentiable(o.dtype) for o in outs):
        return
    if op.vjp is NONDIFF:
        return     # comparisons, argmax ...: no tangent, as torch
    from .engine import run_graph_on_tensors   # the engine imports this module (tangents)
    mask = tuple(t is not None for t in tangents)
    prog = op_jvp(op, attrs, tuple(in_types), tuple(o._type for o in outs), mask)
    with _suspended():
        results = run_graph_on_tensors(prog.graph, list(operands) + list(outs)
                                       + [t for t in tangents if t is not None])
    out_tangents = [None] * len(outs)
    # a view of a make_dual dual (or of its views): its tangent is a view of the dual's
    owner = _owner_of(operands[0], level) if op.flags & VIEW else None
    for k, r in zip(prog.out_index, results):
        _set_tangent(outs[k], r, level, owner if outs[k]._base is not None else None)
        out_tangents[k] = r
    node = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
    if node is not None:   # just recorded: its saved values keep their tangents for backward
        _NODE_TANGENTS[node] = (level, tuple(tangents), tuple(out_tangents))


# tape node -> (level, input tangents, output tangents): a backward through a tape recorded in a
# dual level runs on tensors whose saved values carry these (forward-over-reverse, as torch's
# SavedVariable keeps its forward grad)
_NODE_TANGENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def tape_has_tangents(nodes) -> bool:
    """Does a backward over `nodes` need the tensor path (some saved value has a tangent)?"""
    if not _NODE_TANGENTS:
        return False
    level = _state.local.fw_level
    for n in nodes:
        hit = _NODE_TANGENTS.get(n)
        if hit is not None and hit[0] is level:
            return True
    return False


def restore_saved_tangents(nodes, feeds, saved: list) -> None:
    """Give the saved-value tensors of a backward program their tangents from the forward."""
    level = _state.local.fw_level
    for (i, is_out, k, *_), t in zip(feeds, saved):
        hit = _NODE_TANGENTS.get(nodes[i])
        if hit is None or hit[0] is not level or _tangent_of(t, level) is not None:
            continue
        tangent = (hit[2] if is_out else hit[1])[k]
        if tangent is not None:
            _set_tangent(t, tangent, level)


def copy_tangent(dst, src) -> None:
    """In-place ops: `dst` takes `src`'s value, so it takes its tangent; a dual `dst` given a
    value without tangent (``fill_``) gets a zero tangent, as in torch."""
    level = _level_now()
    owner = _owner_of(dst, level)
    if owner is not None and dst._base is not None:   # a view refreshed from its base: its
        _set_tangent(dst, _owned_tangent(dst, owner), level, owner)   # tangent is the dual's
        return
    fw = getattr(src, "_fw", None)
    if fw is not None and fw[0] is level:
        _set_tangent(dst, fw[1], level)
    elif _tangent_of(dst, level) is not None:
        with _suspended():
            _set_tangent(dst, zeros_like(src), level)
    else:
        dst._fw = None


# ---- custom Functions ---------------------------------------------------------------------------
def function_duals(args) -> list | None:
    """For `Function.apply`: the tangents of `args` (None when no tensor among them is dual)."""
    level = _state.local.fw_level
    if level is None:
        return None
    tangents = [_tangent_of(a, level) if isinstance(a, Tensor) else None for a in args]
    return tangents if any(t is not None for t in tangents) else None


def function_apply(cls, args: tuple, apply):
    """``cls.apply(*args)`` inside a dual level: forward runs with forward AD off, then
    ``cls.jvp`` gives the outputs' tangents (torch's custom Function forward AD)."""
    tangents = function_duals(args)
    if tangents is None:
        return apply(cls, args)
    box: list = []
    with _suspended():
        output = apply(cls, args, box)
    function_jvp(cls, box[0], args, tangents, output)
    return output


def function_jvp(cls, ctx, args, tangents, output):
    """Call ``cls.jvp(ctx, *tangents)`` and attach its results to `output` (torch's rules:
    zeros for a tensor input without tangent, None for a non-tensor argument).

    Raises:
        NotImplementedError: the Function defines no ``jvp`` (torch's message).
        RuntimeError: ``jvp`` returned the wrong number of tangents or a wrong shape.
    """
    level = _state.local.fw_level
    with _suspended():
        full = [t if t is not None else (zeros_like(a) if isinstance(a, Tensor) else None)
                for a, t in zip(args, tangents)]
        ctx._in_jvp = True
        try:
            result = cls.jvp(ctx, *full)
        finally:
            ctx._in_jvp = False
    outs = output if isinstance(output, tuple) else (output,)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outs):
        raise RuntimeError(f"{cls.__name__}.jvp returned {len(results)} tangents; forward "
                           f"returned {len(outs)} outputs")
    per_tensor = []   # one per tensor output: the node's saved outputs, in order
    for k, (o, t) in enumerate(zip(outs, results)):
        if not isinstance(o, Tensor):
            continue
        if t is not None and _differentiable(o.dtype):
            if not isinstance(t, Tensor) or t.shape != o.shape:
                got = list(t.shape) if isinstance(t, Tensor) else type(t).__name__
                raise RuntimeError(f"{cls.__name__}.jvp: tangent {k} has shape {got}; output {k} "
                                   f"has shape {list(o.shape)}")
            if t.dtype is not o.dtype:
                with _suspended():
                    t = t.to(o.dtype)
            _set_tangent(o, t, level)
        else:
            t = None
        per_tensor.append(t)
    if getattr(ctx, "_recorded", False):   # backward through this node sees the tangents
        ins = tuple(t for a, t in zip(args, tangents) if isinstance(a, Tensor))
        _NODE_TANGENTS[ctx] = (level, ins, tuple(per_tensor))


def jvp_of(t):
    """The tangent of `t` at the existing level (None if it has none): for tracegrad's own use."""
    lv = _level_now()
    return None if lv is None else _tangent_of(t, lv)


# the dispatch core calls these through its hook slots (it sits below autograd)
register("propagate", propagate)
register("copy_tangent", copy_tangent)
register("write_view_tangent", write_view_tangent)
register("tangent_of", jvp_of)
