"""The tape: `Node` objects (torch.autograd.graph.Node) linked by `next_functions`.

Each recorded op leaves one `Node` holding its op, attributes, the forward
values it may need in backward (inputs and outputs: NumPy arrays eagerly, IR
values while tracing) with the version each had, and edges to the nodes that
produced its inputs.  Leaves that require grad are reached through their
`AccumulateGrad` node.  The engine turns the reachable part of the tape into
an IR program; nothing here runs backward math itself.
"""
from __future__ import annotations

import itertools

_seq = itertools.count()


def next_mark() -> int:
    """A sequence number below every node recorded from now on."""
    return next(_seq)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


class Node:
    """One recorded op application (what ``tensor.grad_fn`` returns).

    Attributes:
        op: the OpDef applied.
        attrs: its canonical attributes.
        edges: per input, ``(producer Node, output index)`` or ``None`` when
            that input does not require grad.
        in_types / out_types: TensorTypes of inputs and outputs.
        saved_inputs / saved_outputs: forward values; ``None`` once freed.
        versions: per saved input then output, ``(version box, version seen)``.
        seq: recording order (torch's sequence number).
        loc: user source location.
    """

    __slots__ = ("op", "attrs", "edges", "in_types", "saved_inputs", "saved_outputs", "versions",
                 "out_types", "seq", "loc", "retained", "__weakref__")

    def __init__(self, op, attrs, edges, in_types, saved_inputs, saved_outputs, versions,
                 out_types, loc):
        self.op = op
        self.attrs = attrs
        self.edges = edges
        self.in_types = in_types
        self.retained = None  # {output index: weakref to a tensor that called retain_grad()}
        self.saved_inputs = saved_inputs
        self.saved_outputs = saved_outputs
        self.versions = versions
        self.out_types = out_types
        self.seq = next(_seq)
        self.loc = loc

    def name(self) -> str:
        """torch-style name, e.g. ``MulBackward0``."""
        return f"{_camel(self.op.name)}Backward0"

    @property
    def next_functions(self) -> tuple:
        return tuple(e if e is not None else (None, 0) for e in self.edges)

    @property
    def metadata(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


class AccumulateGrad:
    """The node that accumulates a leaf's gradient into ``leaf.grad``."""

    __slots__ = ("variable", "__weakref__")

    def __init__(self, variable):
        self.variable = variable

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"
