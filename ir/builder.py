"""Frontends that turn torch-style op calls into op applications.

`Frontend.call` is the one path every op call takes, for IR builders and for
eager/traced tensors alike: bind arguments by the op's declaration, expand a
composite op through its decomposition, promote operands (torch rules),
canonicalize attributes, infer output types, then `apply`.  Subclasses say
what applying means: `Builder` appends a node to a graph; the tensor
dispatcher runs the kernel and records a tape node.
"""
from __future__ import annotations

import numpy as np

from . import types as T
from .errors import TracegradError
from .graph import Graph, Node, SourceLoc, Value
from .registry import REGISTRY, OpDef, bind, get, plan_promotion


def with_location(e: Exception, loc) -> Exception:
    """`e` with the user's source line appended to its message (once)."""
    if isinstance(e, TracegradError):
        return e.add_location(loc)
    if loc is not None and e.args and isinstance(e.args[0], str) and "\n  at " not in e.args[0]:
        e.args = (f"{e.args[0]}\n  at {loc}",) + e.args[1:]
    return e


class Frontend:
    """Shared op-call logic; see the module docstring."""

    def call(self, name: str, *args, **kwargs):
        op = REGISTRY.get(name) or get(name)
        operands, attrs = bind(op, args, kwargs)
        if op.decomp is not None:
            return op.decomp(self, *operands, **attrs)
        for i, x in enumerate(operands):
            if isinstance(x, (bool, int, float)):
                continue
            if isinstance(x, np.generic) and x.dtype.kind in "biuf":
                operands[i] = x.item()      # NumPy scalars act as Python scalars, as in torch
            elif not self.is_operand(x):
                raise TypeError(f"{op.name}(): argument {i} ({op.inputs[min(i, len(op.inputs) - 1)]})"
                                f" must be a tensor or a number, got {type(x).__name__}")
        dtype = plan_promotion(op, operands)
        if dtype is not None:
            which = op.promote_inputs if op.promote_inputs is not None else range(len(operands))
            for i in which:
                x = operands[i]
                if isinstance(x, (bool, int, float)):
                    operands[i] = self.constant(x, dtype)
                elif x.dtype is not dtype:
                    operands[i] = self.call("convert", x, dtype)
        for i, x in enumerate(operands):
            if isinstance(x, (bool, int, float)):
                operands[i] = self.constant(x, T.result_type([], [], [x]))
        types = [self.type_of(x) for x in operands]
        try:
            if op.canon is not None:
                attrs = op.canon(types, **attrs)
            out = op.infer(types, **attrs)
        except TracegradError as e:
            raise e.add_location(self.location()) from None
        except (IndexError, ValueError, TypeError) as e:   # attribute errors from canon
            raise with_location(e, self.location()) from None
        multi = type(out) is tuple   # several outputs; a TensorType is itself a NamedTuple
        out_types = out if multi else (out,)
        results = self.apply(op, operands, attrs, out_types, types)
        return results if multi else results[0]

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in REGISTRY:
            raise AttributeError(name)
        return lambda *args, **kwargs: self.call(name, *args, **kwargs)

    # -- hooks -------------------------------------------------------------
    def constant(self, value, dtype: T.DType):
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
              in_types: list) -> list:
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

    def type_of(self, x: Value) -> T.TensorType:
        return x.type

    def location(self):
        return self.loc

    def apply(self, op, operands, attrs, out_types, in_types=None):
        node = Node(op.name, operands, attrs, out_types, self.loc, self.fwd_id)
        self.graph.nodes.append(node)
        return node.outputs
