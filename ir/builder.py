"""Frontends that turn torch-style op calls into op applications.

`Frontend.call` is the one path every op call takes, for IR builders and for
eager/traced tensors alike: bind arguments by the op's declaration, expand a
composite op through its decomposition, promote operands (torch rules),
canonicalize attributes, infer output types, then `apply`.  Subclasses say
what applying means: `Builder` appends a node to a graph; the tensor
dispatcher (tracegrad/dispatch/frontend.py, outside the IR) hands it to the
thread's mode, which runs the kernel or traces, and records a tape node.

Binding, promotion, canonicalization and inference depend only on the op, the
attributes and the operand types, so their outcome (a `_Plan`) is cached per
(op, attributes, operand types): a repeated call goes straight to `apply`.
"""
from __future__ import annotations

import numpy as np

from . import types as T
from .errors import TracegradError, with_location
from .graph import Graph, Node, SourceLoc, Value
from .registry import (COMPLEX, DTYPE_ARG, REGISTRY, SCALAR_ARGS, OpDef, bind, check_complex, get,
                       plan_promotion)
from .scalars import check_scalar, wrap_number


class _Plan:
    """What `Frontend.call` decided for one (op, attributes, operand types).

    Equal calls (a training loop's) reuse it instead of binding, promoting and
    inferring again.  Everything here is shared by those calls and never mutated.

    Attributes:
        consts: ``(operand index, dtype)`` of each scalar operand, made a constant.
        converts: ``(operand index, dtype)`` of each tensor operand promoted by a convert.
        attrs: the canonical attributes.
        in_types / out_types: TensorTypes of the operands after promotion, of the outputs.
        multi: the op returns a tuple of results.
        differentiable: the op has a gradient and some output a floating/complex dtype
            (a result the tape records).
    """

    __slots__ = ("op", "consts", "converts", "attrs", "in_types", "out_types", "multi",
                 "differentiable")

    def __init__(self, op, consts, converts, attrs, in_types, out_types, multi):
        self.op = op
        self.consts = consts
        self.converts = converts
        self.attrs = attrs
        self.in_types = in_types
        self.out_types = out_types
        self.multi = multi
        self.differentiable = op.differentiable and any(t.dtype.is_differentiable
                                                        for t in out_types)

    def __repr__(self) -> str:   # stable across runs (dump file names hash it)
        return (f"_Plan({self.op.name}, {self.attrs}, {list(self.in_types)} -> "
                f"{list(self.out_types)})")


# (op, attributes key, operand keys...) -> _Plan; bounded: a program that keeps making new
# shapes cannot grow it without limit (it is cleared when full).
_PLANS: dict = {}
PLAN_CACHE_SIZE = 4096
_PY_SCALARS = (bool, int, float, complex)
# attribute values whose equality is exact for a cache key: not mutable containers, not
# floats as such (0.0 == -0.0, and NaN != NaN): a float is keyed by its `float.hex()`; a
# call with other attribute values is not cached
_KEYABLE = frozenset({int, bool, str, type(None), T.DType, type})


def py_number(x):
    """A scalar operand as a Python number: NumPy scalars act as Python scalars, as in torch
    (subclasses of int/float, such as IntEnum members, stay as they are)."""
    return x.item() if isinstance(x, np.generic) else x


def _attrs_key(attrs: dict) -> tuple | None:
    """A cache key of `attrs`, types included (``1``, ``True`` and ``1.0`` differ), or None."""
    key = []
    for v in attrs.values():
        t = type(v)
        # ints, or tuples of ints (conv / pool padding: ((lo, hi), ...)); a tuple subclass
        # too: a tensor's `.shape` (tracegrad's Size), as in `x.reshape(y.shape)` or a full
        # slice `pos[:t]`, whose plans were not cached, so every step's tape had a new key
        # and its backward program was rebuilt (the transformer benchmark's, every step)
        if issubclass(t, tuple):
            for e in v:
                if type(e) is not int and (type(e) is not tuple
                                           or any(type(i) is not int for i in e)):
                    return None
        elif t is float:
            # leaky_relu's negative_slope, elu's alpha...: without a cached plan each call
            # made a new `_Plan`, the tape node's `sig`, so every step's tape had a new key
            # and its backward program was rebuilt (a DCGAN's three, every step: issue 17)
            v = v.hex()   # exact: 0.0 and -0.0 differ, every NaN is one key
        elif t not in _KEYABLE:
            return None
        key.append(t)
        key.append(v)
    return tuple(key)


class Frontend:
    """Shared op-call logic; see the module docstring."""

    # set on the tensor frontend's class while a tg.autocast region is on (tracegrad/amp.py)
    autocast_active = False

    def composite_result(self, op: OpDef, operands, out, params=None):
        """What a composite op's call returns, given its decomposition's result `out` and
        its other parameters `params` (the eager frontend names the backward node after the
        composite and shows torch's edges, as torch)."""
        return out

    def call(self, name: str, *args, **kwargs):
        op = REGISTRY.get(name) or get(name)
        if self.autocast_active:   # the one check mixed precision costs when it is off
            out = self.autocast_call(op, args, kwargs)
            if out is not None:
                return out
        if not kwargs and len(args) == op.plain_arity:   # operands only, default attributes
            operands, attrs = args, op.default_attrs
            key = self.plan_key(op, (), args)
        else:
            if op.flags & DTYPE_ARG and "dtype" in kwargs:
                return self._call_in_dtype(op, args, kwargs)
            if op.decomp is not None:   # a CompositeDef: binds, checks and decomposes
                return op.expand(self, args, kwargs)
            try:
                operands, attrs = bind(op, args, kwargs)
            except TypeError as e:   # a missing or unknown argument: the user's line
                raise with_location(e, self.location()) from None
            akey = _attrs_key(attrs)
            key = None if akey is None else self.plan_key(op, akey, operands)
        plan = _PLANS.get(key)   # (nothing is stored under None)
        if plan is None:
            operands = list(operands)
            plan = self._plan(op, operands, attrs)
            if key is not None:
                if len(_PLANS) >= PLAN_CACHE_SIZE:
                    _PLANS.clear()
                _PLANS[key] = plan
        return self.run_plan(op, plan, operands)

    def _call_in_dtype(self, op: OpDef, args: tuple, kwargs: dict):
        """``op(x, ..., dtype=d)`` of a DTYPE_ARG op: ``op(x.to(d), ...)`` with a result of
        dtype `d` (torch: "the input tensor is casted to dtype before the operation")."""
        kwargs = dict(kwargs)
        dtype = kwargs.pop("dtype")
        if dtype is None:
            return self.call(op.name, *args, **kwargs)
        dtype = T.as_dtype(dtype)
        if args:
            x, args = args[0], args[1:]
        elif op.inputs[0] in kwargs:
            x = kwargs.pop(op.inputs[0])
        else:
            raise TypeError(f"{op.name}() missing required argument {op.inputs[0]!r}")
        if getattr(x, "dtype", dtype) is not dtype:
            x = self.call("convert", x, dtype)
        out = self.call(op.name, x, *args, **kwargs)
        return out if out.dtype is dtype else self.call("convert", out, dtype)

    def run_plan(self, op: OpDef, plan: _Plan, operands):
        """Promote `operands` as `plan` says, `apply`, and return the result(s).

        A frontend may override it to fuse the steps (the tensor dispatcher does).
        """
        if plan.consts or plan.converts:
            operands = list(operands)
            for i, dtype in plan.consts:
                x = operands[i]
                x = x if type(x) in _PY_SCALARS else py_number(x)
                if op.flags & SCALAR_ARGS:   # torch's Scalar arguments: an overflow check
                    try:
                        x = check_scalar(op.name, x, dtype)
                    except (RuntimeError, OverflowError) as e:
                        raise with_location(e, self.location()) from None
                operands[i] = self.constant(x, dtype)
            for i, dtype in plan.converts:
                operands[i] = self.call("convert", operands[i], dtype)
        results = self.apply(op, operands, plan.attrs, plan.out_types, plan.in_types, plan)
        return results if plan.multi else results[0]

    def _plan(self, op: OpDef, operands: list, attrs: dict) -> "_Plan":
        """Check operands, promote (torch rules), canonicalize attributes, infer output types.

        Depends only on the op, the attributes and the operands' types (a scalar's
        Python type), so `call` reuses the result for every call with the same key.
        NumPy scalars in `operands` are replaced by Python scalars.
        """
        for i, x in enumerate(operands):
            if isinstance(x, (bool, int, float, complex)):
                continue
            if isinstance(x, np.generic) and x.dtype.kind in "biufc":
                operands[i] = x.item()      # NumPy scalars act as Python scalars, as in torch
            elif not self.is_operand(x):
                raise TypeError(f"{op.name}(): argument {i} ({op.inputs[min(i, len(op.inputs) - 1)]})"
                                f" must be a tensor or a number, got {type(x).__name__}")
        try:
            dtype = plan_promotion(op, operands)
        except TypeError as e:   # float16 with a complex operand: complex32 is not supported
            raise with_location(TypeError(f"{op.name}: {e}"), self.location()) from None
        promoted = (() if dtype is None else
                    op.promote_inputs if op.promote_inputs is not None else range(len(operands)))
        consts, converts, types = [], [], []
        for i, x in enumerate(operands):
            if isinstance(x, (bool, int, float, complex)):
                dt = dtype if i in promoted else T.result_type([], [], [x])
                consts.append((i, dt))
                types.append(T.TensorType((), dt))
                continue
            t = self.type_of(x)
            if i in promoted and t.dtype is not dtype:
                converts.append((i, dtype))
                t = T.TensorType(t.shape, dtype)
            types.append(t)
        if not op.flags & COMPLEX:
            for t in types:
                if t.dtype.is_complex:   # the operand types after promotion (scalars included)
                    try:
                        check_complex(op, types)
                    except (TracegradError, NotImplementedError) as e:
                        raise with_location(e, self.location()) from None
        try:
            # a dict of the plan's own: every call with this plan shares it (never mutated)
            attrs = op.canon(types, **attrs) if op.canon is not None else dict(attrs)
            out = op.infer(types, **attrs)
        except TracegradError as e:
            raise e.add_location(self.location()) from None
        except (IndexError, ValueError, TypeError) as e:   # attribute errors from canon
            raise with_location(e, self.location()) from None
        multi = type(out) is tuple   # several outputs; a TensorType is itself a NamedTuple
        return _Plan(op, tuple(consts), tuple(converts), attrs, tuple(types),
                     out if multi else (out,), multi)

    def _reject_complex(self, op: OpDef, values) -> None:
        """`check_complex` on the tensors among `values` (lists of tensors included)."""
        flat = [v for x in values for v in (x if isinstance(x, (list, tuple)) else (x,))]
        try:
            check_complex(op, [self.type_of(v) for v in flat if self.is_operand(v)])
        except (TracegradError, NotImplementedError) as e:
            raise with_location(e, self.location()) from None

    def __getattr__(self, name: str):
        # reached only when the normal lookup fails: the op's method is then set on the
        # class, so the next ``ops.<name>`` (a decomposition's inner ops, per call) is a
        # plain method lookup, not a failed lookup plus a new function
        if name.startswith("_") or name not in REGISTRY:
            raise AttributeError(name)

        def method(self, *args, **kwargs):
            return self.call(name, *args, **kwargs)
        method.__name__ = method.__qualname__ = name
        setattr(type(self), name, method)
        return method.__get__(self)

    # -- hooks -------------------------------------------------------------
    def autocast_call(self, op: OpDef, args: tuple, kwargs: dict):
        """The op's result with autocast's casts applied, or None: not handled."""
        return None

    def plan_key(self, op: OpDef, attrs_key: tuple, operands) -> tuple | None:
        """A hashable key fixing the types of `operands` (None: do not cache this call).

        Tensor operands contribute their shape and dtype, scalars their Python type.
        """
        return None

    def constant(self, value, dtype: T.DType):
        """A Python number operand as a 0-d `dtype` value: a wrapped number, whose integer
        keeps its low bits (``uint8 + 300`` adds 44, as torch; `wrap_number`)."""
        try:
            value = wrap_number(value, dtype)
        except OverflowError as e:
            raise with_location(e, self.location()) from None
        return self.call("full", (), value, dtype)

    def is_operand(self, x) -> bool:
        raise NotImplementedError

    def known_value(self, x):
        """The concrete NumPy value of operand `x` when there is one (eager), else None.

        Decompositions use it for checks only a value can answer (index bounds).
        """
        return None

    def type_of(self, x) -> T.TensorType:
        raise NotImplementedError

    def apply(self, op: OpDef, operands: list, attrs: dict, out_types: tuple,
              in_types: list, plan: _Plan | None = None) -> list:
        """Apply `op`; ``plan`` is the `_Plan` the call came from (None when applied
        directly), an identity for everything but the operands."""
        raise NotImplementedError

    def location(self) -> SourceLoc | None:
        return None


class Builder(Frontend):
    """Appends nodes to `graph`; what VJP rules and decompositions write with.

    ``loc`` and ``fwd_id`` are stamped on every node emitted (the autodiff
    pass sets them to the forward node being differentiated).
    """

    def __init__(self, graph: Graph, loc: SourceLoc | None = None, fwd_id: int | None = None):
        self.graph = graph
        self.loc = loc
        self.fwd_id = fwd_id

    def is_operand(self, x) -> bool:
        return isinstance(x, Value)

    def plan_key(self, op, attrs_key, operands):
        return (op, attrs_key, *[x.type if type(x) is Value else type(x) for x in operands])

    def type_of(self, x: Value) -> T.TensorType:
        return x.type

    def location(self):
        return self.loc

    def apply(self, op, operands, attrs, out_types, in_types=None, plan=None):
        node = Node(op.name, operands, attrs, out_types, self.loc, self.fwd_id)
        self.graph.nodes.append(node)
        return node.outputs
