"""Composite ops: `CompositeDef`, its parameters (`Param`) and `defcomposite`.

A composite has no kernel, type rule or VJP of its own: its decomposition emits other ops
(through the calling frontend, so it works eagerly, traced and inside a Builder), and its
gradient is theirs.  Its parameters are declared as a Python parameter list whose
annotations say which parameters take tensors; the rest are attributes (plain Python data).

Part of the op registry: ir/registry.py re-exports every name here (``from
ir.registry import CompositeDef, defcomposite`` is the usual spelling) and composites
register in the same `REGISTRY`.
"""
from __future__ import annotations

import ast
import inspect
import numbers
from dataclasses import dataclass
from typing import Any, Callable

from .errors import IRError, TracegradError, named, with_location
from .registry import COMPLEX, REGISTRY, REQUIRED, OpDef, _checked_facts, bind

PARAM_WORDS = frozenset({"Tensor", "Number", "int", "None"})   # words a parameter annotation may use


@dataclass(frozen=True)
class Param:
    """One parameter of a composite op, in call order.

    Attributes:
        name: the torch argument name (also the keyword the decomposition receives).
        default: the default value, or ``REQUIRED``.
        accepts: the annotation's words (``{"Tensor", "None"}`` for ``Tensor | None``);
            empty for an attribute (plain Python data: ints, tuples, strings, dtypes).
        variadic: ``*name``: the op takes a list of tensors first (stack, einsum).
    """

    name: str
    default: Any = REQUIRED
    accepts: frozenset = frozenset()
    variadic: bool = False

    @property
    def is_tensor(self) -> bool:
        return "Tensor" in self.accepts

    def __str__(self) -> str:
        text = ("*" if self.variadic else "") + self.name
        if self.accepts:
            text += ": " + " | ".join(w for w in ("Tensor", "Number", "int", "None") if w in self.accepts)
        if self.default is REQUIRED:
            return text
        return f"{text} = {self.default!r}" if self.accepts else f"{text}={self.default!r}"


@dataclass(eq=False)
class CompositeDef(OpDef):
    """Declaration of a composite op (made by `defcomposite`).

    Besides OpDef's fields (``decomp``, ``ref``, ``flags``, ``node_name``):

    Attributes:
        params: every parameter in call order (`Param`); tensors and attributes apart.
        inputs: the leading required tensor parameters, passed positionally to the
            decomposition (a variadic op: its ``*name``), as a primitive's inputs.
        attrs: ``(name, default)`` of the attribute parameters only (plain data).
        tensor_params: names of every parameter that takes a tensor (inputs included).
        trailing: ``(name, default)`` of the parameters after `inputs`, tensors or not:
            what `bind` matches positionally after the inputs and passes by keyword.
        node_inputs: the tensor parameters torch's one backward node has edges to, in
            order (``("input", "tensor1", "tensor2")`` for addcmul; integer and mask
            operands are none), when torch records the op as one node: the eager node
            then shows these edges as its ``next_functions`` (`node_operands`).  Or
            ``node_inputs(args) -> tuple | None`` of the call's bound arguments where that
            depends on the call (mse_loss with a ``weight`` is several nodes in torch).
            None: torch records several nodes itself (linear, l1_loss), or no node.
    """

    params: tuple = ()
    node_inputs: tuple | None = None

    def __post_init__(self):
        super().__post_init__()
        self.trailing = tuple((p.name, p.default) for p in self.params[self.n_inputs:])
        self.tensor_params = tuple(p.name for p in self.params if p.is_tensor)
        # `node_operands`' table: (variadic, accepts a Number) per parameter
        self._param_kinds = {p.name: (p.variadic, "Number" in p.accepts) for p in self.params}
        # `bind`'s shortcut for a call with the inputs only: every other parameter's default
        self.default_attrs = (None if any(d is REQUIRED for _, d in self.trailing)
                              else dict(self.trailing))

    def node_operands(self, operands, params: dict, is_operand) -> list:
        """What torch's one node of this call has edges to (`node_inputs`), in order: a
        tensor, or None for an absent optional tensor (torch's ``(None, 0)``).  A Python
        number is no edge, nor is an absent ``Tensor | Number`` argument when no argument of
        that kind is a tensor: torch's Scalar overload (``clamp(x, -1)`` has x alone, while
        ``clamp(x, lo)`` with a tensor `lo` has x, lo and ``(None, 0)`` for max).
        `is_operand` tells the calling frontend's tensors.  None: this call is several
        nodes in torch."""
        values = dict(params)
        if self.variadic:
            values[self.inputs[0][1:]] = operands
        else:
            values.update(zip(self.inputs, operands))
        names = self.node_inputs
        if callable(names):
            names = names(values)
            if names is None:
                return None
        kinds = self._param_kinds
        scalar_overload = not any(kinds[n][1] and is_operand(values[n]) for n in names)
        out = []
        for n in names:
            v = values[n]
            variadic, number = kinds[n]
            if variadic:
                out.extend(v)
            elif not (isinstance(v, numbers.Number) or v is None and number and scalar_overload):
                out.append(v)
        return out

    @property
    def signature(self) -> str:
        """The parameter list as declared, e.g. ``input: Tensor, dim = -1``."""
        return ", ".join(str(p) for p in self.params)

    def expand(self, ops, args: tuple, kwargs: dict):
        """Run the decomposition for a torch-style call through frontend `ops`.

        Binds the call (torch's TypeErrors for missing/extra arguments), rejects complex
        tensors unless the op is flagged COMPLEX, calls
        ``decomp(ops, *inputs, **other_params)`` and hands the result to
        ``ops.composite_result`` (which names the eager backward node).  An error an op
        of the decomposition raises names this op first (`TracegradError.within`).
        """
        try:
            operands, params = bind(self, args, kwargs, self.trailing)
        except TypeError as e:   # a missing or unknown argument: the user's line
            raise with_location(e, ops.location()) from None
        if not self.flags & COMPLEX:
            ops._reject_complex(self, list(operands) + list(params.values()))
        try:
            out = self.decomp(ops, *operands, **params)
        except TracegradError as e:
            raise e.within(self.name).add_location(ops.location()) from None
        except (IndexError, ValueError, TypeError, ZeroDivisionError) as e:
            # raised by the decomposition's own checks (a dim out of range): the user's line
            raise with_location(named(e, self.name), ops.location()) from None
        return ops.composite_result(self, operands, out, params)


def _parse_params(name: str, spec: str) -> tuple[Param, ...]:
    """`Param`s of a Python parameter list such as ``"input: Tensor, dim=-1"``."""
    def fail(why):
        return IRError(f"composite {name!r}: parameters {spec!r}: {why}")
    try:
        fn = ast.parse(f"def _({spec}): pass").body[0]
    except SyntaxError as e:
        raise fail(f"not a Python parameter list ({e.msg})") from None
    a = fn.args
    if a.posonlyargs or a.kwarg:
        raise fail("'/' and '**' are not supported")
    if a.vararg and a.args:
        raise fail("a variadic op takes its tensor list first (*tensors: Tensor, attributes...)")
    named = [(p, None) for p in a.args[:len(a.args) - len(a.defaults)]]
    named += list(zip(a.args[len(a.args) - len(a.defaults):], a.defaults))
    named += list(zip(a.kwonlyargs, a.kw_defaults))

    def param(p, default_node, variadic=False):
        words = set()
        if p.annotation is not None:
            words = set(ast.unparse(p.annotation).replace(" ", "").split("|"))
            if not words <= PARAM_WORDS or "Tensor" not in words:
                raise fail(f"{p.arg}: an annotation declares a tensor parameter "
                           f"('Tensor', optionally '| Number', '| int', '| None'), got "
                           f"{ast.unparse(p.annotation)!r}")
        default = REQUIRED
        if default_node is not None:
            try:
                default = ast.literal_eval(default_node)
            except ValueError:
                raise fail(f"{p.arg}: the default must be a literal, got "
                           f"{ast.unparse(default_node)!r}") from None
            if words and not (default is None and "None" in words
                              or isinstance(default, (bool, int, float, complex))
                              and "Number" in words):
                raise fail(f"{p.arg}: a tensor parameter's default must be None (declared "
                           "'| None') or a number (declared '| Number')")
        return Param(p.arg, default, frozenset(words), variadic)

    params = [param(a.vararg, None, True)] if a.vararg else []
    params += [param(p, d) for p, d in named]
    if a.vararg and not params[0].is_tensor:
        raise fail(f"*{a.vararg.arg} must be annotated Tensor")
    return tuple(params)


def _check_decomp(name: str, decomp: Callable, params: tuple, n_inputs: int) -> None:
    """The decomposition accepts ``(ops, *inputs, **other_params)`` with the declared names,
    and its own defaults agree with the declared ones."""
    if not callable(decomp):
        raise IRError(f"composite {name!r}: decomp must be a function, got {decomp!r}")
    sig = inspect.signature(decomp)
    # the frontend, then the inputs (a variadic op's list: two tensors, say)
    positional = [None] * (1 + (2 if params[0].variadic else n_inputs))
    try:
        sig.bind(*positional, **{p.name: None for p in params[n_inputs:]})
    except TypeError as e:
        raise IRError(f"composite {name!r}: decomp{sig} cannot take the declared parameters "
                      f"(ops, {', '.join(str(p) for p in params)}): {e}") from None
    for p in params[n_inputs:]:
        own = sig.parameters.get(p.name)
        if own is not None and own.default is not inspect.Parameter.empty \
                and p.default is not REQUIRED and own.default != p.default:
            raise IRError(f"composite {name!r}: {p.name} defaults to {p.default!r} in the "
                          f"declaration but to {own.default!r} in decomp{sig}")


def defcomposite(name: str, params: str, decomp: Callable, *, flags=0, ref="",
                 node_name="", autocast=None, aten_name="", cost=None,
                 node_inputs=None) -> CompositeDef:
    """Declare and register a composite op; a declaration that does not fit its
    decomposition is rejected here.

    Args:
        name: the op name (torch's function name where there is one).
        params: a Python parameter list in torch's order and names.  A parameter annotated
            ``Tensor`` takes a tensor (``Tensor | None``: optional, ``Tensor | Number``: a
            tensor or a Python number); an unannotated one is an attribute (plain data).
            Defaults are literals; a parameter without default must be given.  The leading
            required tensors are the op's inputs; ``*name: Tensor`` first makes it variadic.
        decomp: ``decomp(ops, *inputs, **other_params)`` emitting other ops through the
            frontend ``ops`` and returning a value or a tuple of values.
        flags, ref, node_name, autocast, aten_name, cost: as for `defop` (the facts
            autocast, the profiler and the program summary read of the composite itself).
        node_inputs: where torch records the op as one backward node, the names of the
            tensor parameters that node has edges to, in order, or a rule giving them per
            call (`CompositeDef.node_inputs`).

    Raises:
        IRError: a duplicate name, a malformed parameter list, a decomposition whose
            signature does not take the declared parameters or whose defaults differ,
            an autocast map or cost that `defop` would refuse.
    """
    if name in REGISTRY:
        raise IRError(f"op {name!r} is declared twice")
    autocast = _checked_facts(name, autocast, cost)
    ps = _parse_params(name, params)
    if ps and ps[0].variadic:
        n_inputs = 1
    else:
        n_inputs = next((i for i, p in enumerate(ps)
                         if not (p.is_tensor and p.default is REQUIRED)), len(ps))
    if n_inputs == 0:
        raise IRError(f"composite {name!r}: it takes no tensor input first ({params!r})")
    _check_decomp(name, decomp, ps, n_inputs)
    if node_inputs is not None and not callable(node_inputs):
        tensors = {p.name for p in ps if p.is_tensor}
        node_inputs = tuple(node_inputs)
        if not node_inputs or not set(node_inputs) <= tensors:
            raise IRError(f"composite {name!r}: node_inputs must name tensor parameters "
                          f"({', '.join(sorted(tensors))}), got {node_inputs!r}")
    inputs = tuple(("*" if p.variadic else "") + p.name for p in ps[:n_inputs])
    attrs = tuple((p.name, p.default) for p in ps if not p.is_tensor)
    op = CompositeDef(name, inputs, attrs, flags=flags, decomp=decomp, ref=ref,
                      node_name=node_name, params=ps, autocast=autocast,
                      aten_name=aten_name, cost=cost, node_inputs=node_inputs)
    REGISTRY[name] = op
    return op
