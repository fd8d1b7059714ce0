"""Forward-mode AD (torch.autograd.forward_ad): dual tensors, and JVP programs from the registry.

    import tracegrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        x = fwAD.make_dual(primal, tangent)
        y = f(x)
        y_primal, y_tangent = fwAD.unpack_dual(y)   # y_tangent = J_f(primal) @ tangent

Inside a dual level every op whose operands carry tangents computes the
tangents of its outputs right after its kernel runs (one check in
``_dispatch.py``).  How an op's tangent is computed is one small IR program
per (op, attributes, operand types, which operands carry tangents), built
once and cached (`op_jvp`), from the first of:

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

import weakref
from collections import OrderedDict, namedtuple
from dataclasses import dataclass

from tracegrad.ir import types as T
from tracegrad.ir.builder import Builder
from tracegrad.ir.graph import Graph, Node as IRNode, Value, attr_key
from tracegrad.ir.registry import ELEMENTWISE, LINEAR, NONDIFF, OpDef, get

from .. import _state

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("What `unpack_dual` returns: ``(primal, tangent)``; tangent is None "
                              "for a tensor without one (torch's UnpackedDualTensor).")


def _differentiable(dtype: T.DType) -> bool:
    return dtype.category >= T.FLOAT   # floating point and complex


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
        import functools

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


def _set_tangent(t, tangent, level: _Level) -> None:
    t._fw = (level, tangent)
    duals = level.duals
    duals.append(weakref.ref(t))
    if len(duals) > level.limit:   # a long loop inside one level: keep the list bounded
        level.duals = duals = [r for r in duals if r() is not None]
        level.limit = max(1024, 2 * len(duals))


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
    from ..tensor import Tensor
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
    _set_tangent(dual, tangent, lv)
    if dual.grad_fn is not None:   # a backward reading the view sees its tangent
        _NODE_TANGENTS[dual.grad_fn] = (lv, (None,), (tangent,))
    return dual


def _identity_view(t):
    """A view of `t` with `t`'s autograd history (torch's ``view_as``)."""
    from .._dispatch import EAGER
    return EAGER.call("reshape", t, t.shape)


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of `tensor` (torch.autograd.forward_ad.unpack_dual).

    The primal is a view of `tensor` without the tangent (it keeps the autograd
    history); the tangent is the tensor given to `make_dual` or computed by the
    ops since, None when `tensor` has none at this level (or no level exists).
    """
    from ..tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"unpack_dual: expected a Tensor, got {type(tensor).__name__}")
    lv = _check_level(level, "unpack_dual")
    tangent = _tangent_of(tensor, lv) if lv is not None else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _suspended():
        primal = _identity_view(tensor)
    return UnpackedDualTensor(primal, tangent)


# ---- per-op JVP programs ------------------------------------------------------------------------
@dataclass(frozen=True)
class OpJvp:
    """An op's tangent program for one (attributes, operand types, tangent mask).

    Attributes:
        graph: inputs = the op's operands, its outputs, then the tangents of the
            operands in `mask`; outputs = one tangent per entry of `out_index`.
        out_index: which of the op's outputs get a tangent (the differentiable ones).
        source: how it was made: "rule", "linear", "elementwise" or "transpose".
    """

    graph: Graph
    out_index: tuple[int, ...]
    source: str


_CACHE: OrderedDict = OrderedDict()
CACHE_SIZE = 4096


class _NotDiagonal(Exception):
    """An elementwise op's VJP reduced its cotangent: derive by transposition instead."""


def op_jvp(op: OpDef, attrs: dict, in_types: tuple, out_types: tuple, mask: tuple) -> OpJvp:
    """The cached tangent program of `op` (see the module docstring for the rule order).

    Raises:
        NotImplementedError: the op has no gradient, or is a host call (hooks,
            custom Functions), which no IR program can differentiate.
    """
    key = (op.name, tuple((k, attr_key(v)) for k, v in attrs.items()), in_types, out_types, mask)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    prog = _build(op, attrs, in_types, out_types, mask)
    _CACHE[key] = prog
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return prog


def clear_cache() -> None:
    _CACHE.clear()


def _build(op, attrs, in_types, out_types, mask) -> OpJvp:
    if op.vjp is NONDIFF or not callable(op.vjp) and op.jvp is None:
        raise NotImplementedError(f"forward-mode AD: {op.name} has no derivative")
    complex_ = any(t.dtype.is_complex for t in in_types + out_types)
    if op.jvp is LINEAR:
        return _assemble(op, attrs, in_types, out_types, mask, _linear, "linear")
    if callable(op.jvp) and not complex_:   # hand rules follow the real formulas
        return _assemble(op, attrs, in_types, out_types, mask, _hand, "rule")
    if (op.flags & ELEMENTWISE and len(out_types) == 1 and not complex_
            and all(t.dtype is out_types[0].dtype for t, m in zip(in_types, mask) if m)):
        try:
            return _assemble(op, attrs, in_types, out_types, mask, _elementwise, "elementwise")
        except _NotDiagonal:
            pass
    return _assemble(op, attrs, in_types, out_types, mask, _transpose, "transpose")


def _assemble(op, attrs, in_types, out_types, mask, rule, source: str) -> OpJvp:
    g = Graph(name=f"jvp_{op.name}")
    xs = [g.add_input(t) for t in in_types]
    outs = [g.add_input(t) for t in out_types]
    ts = [g.add_input(t) if m else None for t, m in zip(in_types, mask)]
    b = Builder(g)
    tangents = rule(op, b, ts, xs, outs, attrs)
    out_index, results = [], []
    for k, o in enumerate(out_types):
        if not _differentiable(o.dtype):
            continue
        t = tangents[k] if k < len(tangents) else None
        if t is None:
            t = b.full(o.shape, 0, o.dtype)
        if t.dtype is not o.dtype:
            t = b.convert(t, o.dtype)
        if t.shape != o.shape:
            t = b.expand(t, o.shape)
        out_index.append(k)
        results.append(t)
    g.outputs = results
    from tracegrad.passes import PassManager, cse, prune, simplify
    g, _ = PassManager([("prune", prune), ("simplify", simplify), ("cse", cse),
                        ("prune", prune)]).run(g)
    for n in g.nodes:   # per-op programs carry no provenance; `jvp_graph` stamps the caller's
        n.loc = n.fwd_id = n.id = None
    return OpJvp(g, tuple(out_index), source)


def _as_list(r, n_out: int) -> list:
    if isinstance(r, (list, tuple)):
        return list(r)
    return [r] + [None] * (n_out - 1)


def _hand(op, b, ts, xs, outs, attrs) -> list:
    t = ts[0] if op.n_inputs == 1 and not op.variadic else tuple(ts)
    return _as_list(op.jvp(b, t, *xs, *outs, **attrs), len(outs))


def _linear(op, b, ts, xs, outs, attrs) -> list:
    operands = []
    for x, t in zip(xs, ts):
        if t is not None:
            operands.append(t)
        elif _differentiable(x.dtype):
            operands.append(b.full(x.shape, 0, x.dtype))
        else:
            operands.append(x)      # indices, masks: the same as the primal's
    return list(b.apply(op, operands, dict(attrs), tuple(o.type for o in outs),
                        [v.type for v in operands]))


def _elementwise(op, b, ts, xs, outs, attrs) -> list:
    out = outs[0]
    acc = None
    for i, t in enumerate(ts):
        if t is None:
            continue
        ct = t if t.shape == out.shape else b.expand(t, out.shape)
        g = op.vjp(b, ct, *xs, *outs, **attrs)[i]
        if g is None:
            continue
        if g.shape != out.shape:
            raise _NotDiagonal(op.name)
        acc = g if acc is None else b.add(acc, g)
    return [acc]


def _transpose(op, b, ts, xs, outs, attrs) -> list:
    """J t as the transpose of the linear map ct -> vjp(ct), by the autodiff pass."""
    from tracegrad.passes import autodiff
    vg = Graph(name=f"vjp_{op.name}")
    xs2 = [vg.add_input(x.type) for x in xs]
    outs2 = [vg.add_input(o.type) for o in outs]
    vb = Builder(vg)
    # cotangents are inputs, not zero constants: rules skip terms for a structurally zero one
    cts = [vg.add_input(o.type) for o in outs]
    grads = op.vjp(vb, cts[0] if len(cts) == 1 else tuple(cts), *xs2, *outs2, **attrs)
    used = []
    for i, (x, t) in enumerate(zip(xs2, ts)):
        g = grads[i] if i < len(grads) else None
        if t is None or g is None:
            continue
        if g.shape != x.shape:
            g = vb.sum_to_size(g, x.shape)
        if g.dtype is not x.dtype:
            g = vb.convert(g, x.dtype)
        vg.outputs.append(g)
        used.append(i)
    wrt = [c for c, o in zip(cts, outs) if _differentiable(o.dtype)]
    if not used or not wrt:
        return [None] * len(outs)
    _check_transposable(op, vg, cts)
    joint = autodiff(vg, wrt).graph
    n = len(xs2) + len(outs2)
    env = {id(v): w for v, w in zip(joint.inputs[:n], xs + outs)}
    # the map is linear in ct, so its transpose does not read ct; a leftover read gets zeros
    env.update((id(c), b.full(o.shape, 0, o.dtype)) for c, o in zip(cts, outs))
    env.update((id(c), ts[i]) for c, i in zip(joint.inputs[n + len(cts):], used))
    _inline(b.graph, joint.nodes, env, None, None)
    results = iter(env.get(id(v), v) for v in joint.outputs)
    return [next(results) if _differentiable(o.dtype) else None for o in outs]


def _check_transposable(op, vg: Graph, cts: list) -> None:
    """Every op the cotangent flows through must itself be differentiable (a host call, which
    runs Python hooks or a custom Function's backward, is not): else transposing would drop it."""
    reach = {id(c) for c in cts}
    for n in vg.nodes:
        if any(id(v) in reach for v in n.inputs):
            if get(n.op).vjp is NONDIFF:
                raise NotImplementedError(
                    f"forward-mode AD: no JVP for {op.name}: its VJP passes the cotangent "
                    f"through {n.op}, which has no derivative (give {op.name} a jvp rule)")
            reach.update(id(o) for o in n.outputs)


def _inline(g: Graph, nodes: list, env: dict, loc, fwd_id) -> None:
    """Append copies of `nodes` to `g`, reading inputs through `env` (id -> Value), extending it."""
    for n in nodes:
        c = IRNode(n.op, [env.get(id(v), v) for v in n.inputs], dict(n.attrs),
                   [o.type for o in n.outputs], loc, fwd_id)
        for o, co in zip(n.outputs, c.outputs):
            env[id(o)] = co
        g.nodes.append(c)


# ---- the eager path (called by _dispatch.py inside a dual level) --------------------------------
def propagate(op: OpDef, operands: list, attrs: dict, outs: list, in_types) -> None:
    """Give `outs` the tangents of `op` applied to `operands`, if any operand has one."""
    level = _state.local.fw_level
    tangents = [_tangent_of(t, level) for t in operands]
    if all(t is None for t in tangents) or not any(_differentiable(o.dtype) for o in outs):
        return
    if op.vjp is NONDIFF:
        return     # comparisons, argmax ...: no tangent, as torch
    from .engine import run_graph_on_tensors
    mask = tuple(t is not None for t in tangents)
    prog = op_jvp(op, attrs, tuple(in_types), tuple(o._type for o in outs), mask)
    with _suspended():
        results = run_graph_on_tensors(prog.graph, list(operands) + list(outs)
                                       + [t for t in tangents if t is not None])
    out_tangents = [None] * len(outs)
    for k, r in zip(prog.out_index, results):
        _set_tangent(outs[k], r, level)
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
    fw = getattr(src, "_fw", None)
    if fw is not None and fw[0] is level:
        _set_tangent(dst, fw[1], level)
    elif _tangent_of(dst, level) is not None:
        from .._creation import zeros_like
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
    from ..tensor import Tensor
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
    from ..tensor import Tensor
    level = _state.local.fw_level
    with _suspended():
        from .._creation import zeros_like
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


# ---- whole graphs -------------------------------------------------------------------------------
def jvp_graph(g: Graph, wrt: list[Value], *, name: str | None = None) -> Graph:
    """The forward-mode program of `g`: tangents of its outputs given tangents of `wrt`.

    Returns a graph whose inputs are ``g.inputs`` then one tangent per `wrt`
    value, and whose outputs are one tangent per output of `g` (zeros where an
    output does not depend on `wrt`).  Each node's tangent program (`op_jvp`)
    is inlined, stamped with the node's source location and id.

    Raises:
        NotImplementedError: a node on a path from `wrt` is a host call (a hook or
            custom Function) or an op without derivative.
    """
    out = Graph(name=name or f"{g.name}_jvp", inputs=list(g.inputs))
    tan: dict[int, Value] = {}
    for v in wrt:
        tan[id(v)] = out.add_input(v.type)
    b = Builder(out)
    for index, n in enumerate(g.nodes):
        out.nodes.append(n)
        ts = [tan.get(id(v)) for v in n.inputs]
        if all(t is None for t in ts):
            continue
        op = get(n.op)
        if op.vjp is NONDIFF or not any(_differentiable(o.dtype) for o in n.outputs):
            continue
        prog = op_jvp(op, n.attrs, tuple(v.type for v in n.inputs),
                      tuple(o.type for o in n.outputs), tuple(t is not None for t in ts))
        pg = prog.graph
        k = len(n.inputs) + len(n.outputs)
        env = {id(p): v for p, v in zip(pg.inputs[:k], list(n.inputs) + list(n.outputs))}
        env.update((id(p), t) for p, t in zip(pg.inputs[k:], [t for t in ts if t is not None]))
        _inline(out, pg.nodes, env, n.loc, n.id if n.id is not None else index)
        for j, v in zip(prog.out_index, pg.outputs):
            tan[id(n.outputs[j])] = env.get(id(v), v)
    out.outputs = [tan.get(id(o)) or b.full(o.shape, 0, o.dtype) for o in g.outputs]
    return out
