"""The op registry: one `OpDef` per op, the single source of truth for op behaviour.

An op declares its inputs and attributes (torch names), type inference, one
kernel written against an array namespace `xp` (NumPy for the interpreter,
jax.numpy for the lowering), a VJP rule that emits IR ops through a builder
(so backward programs are differentiable), and flags the passes read.
A composite op gives `decomp` instead: a function that emits other ops
(`CompositeDef` and `defcomposite`, ir/composite_def.py, re-exported here).
The facts other layers need about an op are fields of its declaration too:
its autocast class per device type (tracegrad/amp.py), torch's profiler
event name (autograd/profiler.py), its cost for the program summary
(ir/summary.py), its role in fusion (passes/fuse.py and the interpreter's
blocked regions) and, for a view, how a write through it reaches its parent
(tracegrad/_views.py): no layer keeps a table keyed by op name.
They are read when a program is planned or reported, never per op call
(autocast reads its field only inside an enabled region).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

from . import types as T
from .attr_kinds import AttrKind
from .errors import DTypeError, IRError

# Flags the passes and frontends read (never op names).
ELEMENTWISE = 1 << 0   # output element i depends on input element i (after broadcasting)
VIEW = 1 << 1          # torch returns a view (shares storage with the input)
CHEAP = 1 << 2         # cheap enough to recompute in backward instead of saving
REDUCTION = 1 << 3
PROMOTE = 1 << 4       # tensor and scalar operands are promoted to one dtype (torch rules)
TO_FLOAT = 1 << 5      # integer/bool operands promote to the default float (exp, div ...)
RANDOM = 1 << 6
CREATION = 1 << 7      # no tensor inputs (full, arange)
INTERNAL = 1 << 8      # an IR-level op, not exported as tg.<name> / Tensor.<name>
COMPLEX = 1 << 9       # accepts complex64/complex128 operands (its VJP follows torch's conjugate
                       # Wirtinger convention); every other op rejects them (`check_complex`)
DTYPE_ARG = 1 << 10    # a `dtype=` keyword casts the input to it first and the result is that
                       # dtype (torch.sum, mean, softmax, log_softmax: Frontend.call)
ALIAS = 1 << 11        # the output is operand 0's value unchanged (index_check: a check that
                       # returns its input): saving it costs what saving the operand does
SCALAR_ARGS = 1 << 12  # its Python-number operands are torch Scalar arguments (where, clamp):
                       # converted with torch's overflow check, not wrapped (ir/scalars.py)
MULTI_VIEW = 1 << 13   # several views of the input from one torch node (unbind, split, chunk):
                       # torch refuses in-place ops on them (tracegrad/dispatch/view_meta.py)

REQUIRED = object()    # attribute default meaning "must be given"


class _NonDiff:
    def __repr__(self) -> str:
        return "NONDIFF"


NONDIFF = _NonDiff()   # vjp value of an op with no gradient (comparisons, argmax)


class NotImplementedGrad:
    """What a VJP rule returns for an input whose derivative torch does not implement
    (``igamma``'s first argument): nothing is emitted for it, and a backward that needs
    that gradient (the input depends on a tensor whose gradient is asked for) raises
    torch's NotImplementedError, ``the derivative for 'igamma: input' is not implemented.``
    (passes/autodiff.py; the forward-mode tangent raises the same, autograd/jvp_rules.py)."""

    __slots__ = ("what",)

    def __init__(self, what: str):
        self.what = what

    def error(self) -> NotImplementedError:
        return NotImplementedError(f"the derivative for '{self.what}' is not implemented.")

    def __repr__(self) -> str:
        return f"NotImplementedGrad({self.what!r})"


class _Linear:
    def __repr__(self) -> str:
        return "LINEAR"


# jvp value of an op linear in its floating-point operands (views, sum, cat, where, indexing):
# the output tangent is the op applied to the input tangents (zeros for a missing one), with
# the other operands (indices, masks) and attributes unchanged.
LINEAR = _Linear()


# Autocast classes (torch.autocast's op lists), per device type in `OpDef.autocast`.
AUTOCAST_LOWER = "lower"      # runs in the region's low-precision dtype (matmul-like ops)
AUTOCAST_FP32 = "fp32"        # runs in float32 (losses, reductions that lose precision ...)
AUTOCAST_PROMOTE = "promote"  # floating operands of mixed dtypes run in the widest of them
AUTOCAST_CLASSES = (AUTOCAST_LOWER, AUTOCAST_FP32, AUTOCAST_PROMOTE)
AUTOCAST_DEVICES = ("cpu", "cuda")   # "gpu" shares cuda's class (tracegrad/amp.py)


class Cost(NamedTuple):
    """What an op costs in the program summary (ir/summary.py), where its flags do not say.

    ``kind``: the summary's op kind ("matmul", "conv", "pool", "scan", "softmax",
    "linalg", "reduction"); ``flops``: ``flops(node) -> int``, the estimated
    floating-point operations from the node's static types and attributes.
    """

    kind: str
    flops: Callable


class Fusion(enum.Enum):
    """An op's role in fusion regions (passes/fuse.py; the interpreter runs regions in row
    blocks, backends/interpreter.py).  None (`OpDef.fusion`): the op never joins a region."""

    ELEMENTWISE = "elementwise"  # joins a region iterating over its output's shape
    BROADCAST = "broadcast"      # joins one too: broadcasts its input to its ``size`` attribute
    REDUCE_SUM = "sum"           # closes a region over its input's shape; takes ``dim`` and
                                 # ``keepdim``; partial results of row blocks add up
    REDUCE_MAX = "max"           # the same, partial results combine by maximum


_DERIVED = object()   # `fusion` not given: ELEMENTWISE for a non-random elementwise op


@dataclass(eq=False)
class OpDef:
    """Declaration of one op.

    Attributes:
        name: op name, also the torch function name where one exists.
        inputs: tensor input names; a single ``"*name"`` means a variadic list.
        attrs: ``(name, default)`` pairs in print order; ``REQUIRED`` default = must be given
            (declared to `defop` as ``(name, default, kind)`` triples).
        attr_kinds: ``{name: AttrKind}`` (ir/attr_kinds.py): what each attribute may hold
            in a graph; the verifier checks every node's attributes against it.
        infer: ``infer(in_types, **attrs) -> TensorType | tuple[TensorType, ...]``;
            raises ShapeError/DTypeError naming the op.
        kernel: ``kernel(xp, *arrays, **attrs)``; must return the inferred dtype and shape.
        vjp: ``vjp(b, ct, *inputs, out, **attrs) -> list`` of cotangents (None = no
            gradient for that input), written with builder ops; or NONDIFF.
        jvp: ``jvp(b, t, *inputs, out, **attrs)``: the output tangent (a list, one per
            output, for a multi-output op; None = no tangent), written with builder ops.
            ``t`` is the input's tangent for a one-input op, else a tuple with one entry
            per input (None = no tangent).  ``LINEAR``: the op applied to the tangents.
            None: derived from `vjp` (tracegrad/autograd/forward_ad.py).
        canon: ``canon(in_types, **attrs) -> attrs`` normalizing attributes
            (negative dims, None -> all dims), raising IndexError/ValueError.
        kernels: per-backend kernel overrides, e.g. ``{"jax": fn}``.
        decomp: for a composite op, ``decomp(ops, *inputs, **attrs)`` emitting other ops.
        ref: the torch/jax function whose behaviour this op follows.
        node_name: torch's name of the op's backward node where it is not
            ``<Op>Backward0`` (``real`` -> ``SelectBackward0``).
        autocast: ``{device type: class}`` inside `tg.autocast` ("cpu", "cuda"; classes
            AUTOCAST_LOWER / AUTOCAST_FP32 / AUTOCAST_PROMOTE); an op missing for a
            device type runs in its operands' dtypes there.
        aten_name: the profiler's event name of the op (torch's aten op it matches);
            default ``"aten::" + name``.
        cost: `Cost` for the program summary where the flags do not give it (None:
            elementwise ops cost numel(out), reductions numel(input), others 0).
        fusion: `Fusion` role, or None: the op never joins a fusion region; not given,
            a non-random ELEMENTWISE op is `Fusion.ELEMENTWISE`.
        view_inverse: for a VIEW op, ``view_inverse(ops, parent, child, **attrs)``: the new
            value of `parent` after its view ``op(parent)`` took the value `child` (an
            in-place write through the view, tracegrad/_views.py), written with frontend
            ops; None: writing through such a view is not supported.
        view_pieces: for a VIEW op with several outputs (unbind, split), ``view_pieces(
            shape, i, **attrs)`` (`shape`: the input's): the chain of single-output view
            ops, ``((op, attrs), ...)``, that makes output `i` from the input: what a view
            records for replaying itself and writing through to its base
            (tracegrad/_views.py), so that one node stands for all outputs, as torch's
            SplitBackward0.
        simplify: ``simplify(b, node, ins) -> Value | None``: an exact algebraic rewrite
            of the op (``x * 1 -> x``, ``permute(permute(x))`` -> one permute) that
            passes/simplify.py applies; builders of the common kinds in ir/ops/_rewrites.py.
    """

    name: str
    inputs: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...] = ()
    infer: Callable | None = None
    kernel: Callable | None = None
    vjp: Any = None
    canon: Callable | None = None
    flags: int = 0
    kernels: dict = field(default_factory=dict)
    decomp: Callable | None = None
    ref: str = ""
    promote_inputs: tuple[int, ...] | None = None  # which operands promote (None = all)
    jvp: Any = None
    node_name: str = ""
    autocast: dict = field(default_factory=dict)
    aten_name: str = ""
    cost: Cost | None = None
    fusion: Any = _DERIVED
    view_inverse: Callable | None = None
    attr_kinds: dict = field(default_factory=dict)
    simplify: Callable | None = None
    view_pieces: Callable | None = None

    def __post_init__(self):
        self.aten_name = self.aten_name or f"aten::{self.name}"
        if self.fusion is _DERIVED:
            self.fusion = (Fusion.ELEMENTWISE if self.flags & ELEMENTWISE
                           and not self.flags & RANDOM else None)
        # precomputed for the per-op hot path (`bind`, `Frontend.call`)
        self.variadic = len(self.inputs) == 1 and self.inputs[0].startswith("*")
        self.n_inputs = len(self.inputs)
        self.default_attrs = (None if any(d is REQUIRED for _, d in self.attrs)
                              else {a: d for a, d in self.attrs})
        # a call with exactly this many positional arguments and no keywords is all
        # operands with default attributes (-1: no such shortcut: variadic, composite or
        # an attribute without default)
        self.plain_arity = (self.n_inputs if self.default_attrs is not None
                            and not self.variadic and self.decomp is None else -1)

    @property
    def differentiable(self) -> bool:
        return self.vjp is not NONDIFF

    def kernel_for(self, backend: str) -> Callable:
        return self.kernels.get(backend, self.kernel)

    def has(self, flag: int) -> bool:
        return bool(self.flags & flag)


REGISTRY: dict[str, OpDef] = {}


def defop(name: str, inputs: str | tuple[str, ...], *, attrs=(), infer=None, kernel=None,
          vjp=None, canon=None, flags=0, kernels=None, decomp=None, ref="",
          promote_inputs=None, jvp=None, node_name="", autocast=None, aten_name="",
          cost=None, fusion=_DERIVED, view_inverse=None, simplify=None,
          view_pieces=None) -> OpDef:
    """Declare and register an op; an incomplete declaration is rejected here."""
    if isinstance(inputs, str):
        inputs = tuple(s.strip() for s in inputs.split(",") if s.strip())
    if name in REGISTRY:
        raise IRError(f"op {name!r} is declared twice")
    if decomp is not None:
        raise IRError(f"op {name!r}: a composite op is declared with defcomposite")
    if decomp is None:
        missing = [k for k, v in (("infer", infer), ("kernel", kernel), ("vjp", vjp)) if v is None]
        if missing:
            raise IRError(f"op {name!r} declaration lacks {', '.join(missing)} "
                          "(use vjp=NONDIFF for an op without gradient)")
    if jvp is not None and jvp is not LINEAR and not callable(jvp) or \
            jvp is not None and vjp is NONDIFF:
        raise IRError(f"op {name!r}: jvp must be a rule, LINEAR or None (derived from the vjp), "
                      f"and an op without gradient has none; got {jvp!r}")
    autocast = _checked_facts(name, autocast, cost)
    attrs, kinds = _split_attrs(name, attrs)
    if fusion is not _DERIVED and fusion is not None and not isinstance(fusion, Fusion):
        raise IRError(f"op {name!r}: fusion must be a Fusion or None, got {fusion!r}")
    if view_inverse is not None and not (callable(view_inverse) and flags & VIEW):
        raise IRError(f"op {name!r}: view_inverse must be a rule, and only a VIEW op has one")
    if view_pieces is not None and not (callable(view_pieces) and flags & VIEW):
        raise IRError(f"op {name!r}: view_pieces must be a rule, and only a VIEW op has one")
    if simplify is not None and not callable(simplify):
        raise IRError(f"op {name!r}: simplify must be a rule (ir/ops/_rewrites.py), got {simplify!r}")
    op = OpDef(name, inputs, attrs, infer, kernel, vjp, canon, flags,
               dict(kernels or {}), decomp, ref, promote_inputs, jvp=jvp, node_name=node_name,
               autocast=autocast, aten_name=aten_name, cost=cost, fusion=fusion,
               view_inverse=view_inverse, attr_kinds=kinds, simplify=simplify,
               view_pieces=view_pieces)
    REGISTRY[name] = op
    return op


def _split_attrs(name: str, attrs) -> tuple[tuple, dict]:
    """A primitive's ``(name, default, kind)`` attribute triples as (pairs, kinds); every
    attribute must declare its kind (ir/attr_kinds.py), which the verifier checks."""
    pairs, kinds = [], {}
    for entry in attrs:
        if not (isinstance(entry, tuple) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[2], AttrKind)):
            raise IRError(f"op {name!r}: attribute {entry!r} must be declared as (name, "
                          "default, kind), kind one of ir/attr_kinds.py's (K.INT, K.DIMS, "
                          "K.SHAPE, K.DTYPE, K.enum(...) ...)")
        pairs.append(entry[:2])
        kinds[entry[0]] = entry[2]
    return tuple(pairs), kinds


def register_kernel(name: str, backend: str, kernel: Callable) -> None:
    """Give op `name` its own kernel on `backend` (``kernel_for(backend)`` returns it).

    For kernels that need the runtime (a jax kernel that reports to the host): the
    backend registers them when it is imported, so the IR imports nothing of tracegrad.

    Raises:
        IRError: unknown op, or `backend` has a kernel for it already.
    """
    op = get(name)
    if backend in op.kernels:
        raise IRError(f"op {name!r} has a {backend} kernel already")
    op.kernels[backend] = kernel


def _checked_facts(name: str, autocast, cost) -> dict:
    """The autocast classes and cost an op (primitive or composite) declares, checked;
    returns the autocast map as a new dict."""
    autocast = dict(autocast or {})
    bad = {d: c for d, c in autocast.items()
           if d not in AUTOCAST_DEVICES or c not in AUTOCAST_CLASSES}
    if bad:
        raise IRError(f"op {name!r}: autocast maps a device type {AUTOCAST_DEVICES} to a class "
                      f"{AUTOCAST_CLASSES}; got {bad}")
    if cost is not None and not (isinstance(cost, Cost) and callable(cost.flops)):
        raise IRError(f"op {name!r}: cost must be a Cost(kind, flops), got {cost!r}")
    return autocast


def get(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise IRError(f"unknown op {name!r}") from None


def bind(op: OpDef, args: tuple, kwargs: dict, trailing=None) -> tuple[list, dict]:
    """Split a torch-style call into (tensor operands, attrs) by the op's declaration.

    ``trailing`` (default ``op.attrs``): the ``(name, default)`` pairs matched after the
    inputs (a composite's `CompositeDef.trailing`, its tensor parameters included)."""
    declared = op.attrs if trailing is None else trailing
    if not kwargs and len(args) == op.n_inputs and op.default_attrs is not None \
            and not op.variadic:   # the common case: operands only, default attributes
        return list(args), dict(op.default_attrs)
    if op.variadic:
        if not args:
            raise TypeError(f"{op.name}() missing its tensor list argument")
        first = args[0]
        if not isinstance(first, (list, tuple)):
            raise TypeError(f"{op.name}(): expected a list or tuple of tensors, got {type(first).__name__}")
        operands, rest = list(first), args[1:]
    else:
        n = len(op.inputs)
        operands, rest = list(args[:n]), args[n:]
        for name in op.inputs[len(operands):]:
            if name not in kwargs:
                raise TypeError(f"{op.name}() missing required argument {name!r}")
            operands.append(kwargs.pop(name))
    if len(rest) > len(declared):
        raise TypeError(f"{op.name}() takes at most {len(op.inputs) + len(declared)} "
                        f"arguments ({len(args)} given)")
    attrs = {}
    for i, (aname, default) in enumerate(declared):
        if i < len(rest):
            if aname in kwargs:
                raise TypeError(f"{op.name}() got multiple values for argument {aname!r}")
            attrs[aname] = rest[i]
        elif aname in kwargs:
            attrs[aname] = kwargs.pop(aname)
        elif default is REQUIRED:
            raise TypeError(f"{op.name}() missing required argument {aname!r}")
        else:
            attrs[aname] = default
    if kwargs:
        raise TypeError(f"{op.name}() got unexpected keyword argument(s) {sorted(kwargs)}")
    return operands, attrs


def plan_promotion(op: OpDef, operands: list) -> T.DType | None:
    """Common dtype of an op's operands under torch's promotion rules, or None.

    ``operands`` holds objects with ``.dtype``/``.shape`` (tensors, IR values)
    and Python scalars. Only ops flagged PROMOTE or TO_FLOAT promote.
    """
    if not operands or not op.flags & (PROMOTE | TO_FLOAT):  # cat([]): the op's canon reports it
        return None
    if op.promote_inputs is not None:
        operands = [operands[i] for i in op.promote_inputs]
    first = operands[0] if operands else None
    if not isinstance(first, (bool, int, float, complex)) and first is not None:
        dt = first.dtype   # fast path: every operand a tensor of one dtype
        if all(not isinstance(x, (bool, int, float, complex)) and x.dtype is dt
               for x in operands):
            if op.flags & TO_FLOAT and dt.category < T.FLOAT:
                return T.DEFAULT_FLOAT
            return dt
    dims, zero_dims, scalars = [], [], []
    for x in operands:
        if isinstance(x, (bool, int, float, complex)):
            scalars.append(x)
        elif x.shape:
            dims.append(x.dtype)
        else:
            zero_dims.append(x.dtype)
    if op.flags & PROMOTE:
        dt = T.result_type(dims, zero_dims, scalars)
    else:
        dt = (dims or zero_dims)[0]
    if op.flags & TO_FLOAT and dt.category < T.FLOAT:
        dt = T.DEFAULT_FLOAT
    return dt


def check_complex(op: OpDef, types) -> None:
    """The one rule for complex operands: an op without the COMPLEX flag rejects them, as
    torch rejects complex there (relu, maximum, floor, softmax ...).

    ``types`` holds TensorTypes (or anything with ``.dtype`` and ``str()``).  Called by
    `Frontend.call` on every op call and by the IR verifier.

    Raises:
        DTypeError: the op is not defined for complex tensors (a TypeError, as in torch).
    """
    for t in types:
        if t.dtype.is_complex:
            shown = ", ".join(str(x) for x in types)
            raise DTypeError(f"{op.name}: not supported for complex tensors, got ({shown}); "
                             "docs/ops.md lists the ops that take complex64/complex128")


# composite ops live in ir/composite_def.py (imported last: it builds on OpDef and `bind`);
# re-exported so that ``from ir.registry import CompositeDef, defcomposite`` keeps working
from .composite_def import PARAM_WORDS, CompositeDef, Param, defcomposite  # noqa: E402,F401
