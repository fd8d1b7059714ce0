"""The IR data structures: `Value`, `Node`, `Graph` and source locations.

A `Graph` is an SSA program: typed inputs, an ordered list of nodes, outputs.
Values are identified by object identity; names are given only when printing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from .types import TensorType


@dataclass(frozen=True)
class SourceLoc:
    """Where user code recorded a node: ``file:line (function)``."""

    file: str
    line: int
    func: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.func})"


class Value:
    """An SSA value: produced by one node (or a graph input), with a static type."""

    __slots__ = ("type", "node", "index", "__weakref__")

    def __init__(self, type: TensorType, node: "Node | None" = None, index: int = 0):
        self.type = type
        self.node = node
        self.index = index

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.shape

    @property
    def dtype(self):
        return self.type.dtype

    def __repr__(self) -> str:
        producer = self.node.op if self.node is not None else "input"
        return f"<Value {self.type} from {producer}>"


class Node:
    """One op application.

    Attributes:
        op: registered op name.
        inputs: input values.
        attrs: plain Python data (ints, floats, bools, strings, tuples, dtypes).
        outputs: values this node defines.
        loc: user source location captured when recorded (or None).
        fwd_id: for a backward node, the id of the forward node it differentiates.
        region: fusion region id, set by the fusion pass (None otherwise).
    """

    __slots__ = ("op", "inputs", "attrs", "outputs", "loc", "fwd_id", "region", "id")

    def __init__(self, op: str, inputs: Iterable[Value], attrs: dict[str, Any],
                 out_types: Iterable[TensorType], loc: SourceLoc | None = None,
                 fwd_id: int | None = None, id: int | None = None):
        self.op = op
        self.inputs = list(inputs)
        self.attrs = attrs
        self.outputs = [Value(t, self, i) for i, t in enumerate(out_types)]
        self.loc = loc
        self.fwd_id = fwd_id
        self.region = None
        self.id = id

    @property
    def output(self) -> Value:
        return self.outputs[0]

    def __repr__(self) -> str:
        return f"<Node {self.op} {self.attrs} -> {[str(o.type) for o in self.outputs]}>"


@dataclass(eq=False)
class Graph:
    """An SSA program: ``inputs`` -> ``nodes`` (in execution order) -> ``outputs``.

    ``saved`` marks inputs that are forward values read by a backward program.
    """

    name: str = "main"
    inputs: list[Value] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    saved: set = field(default_factory=set)  # ids of input Values that are saved forward values

    def add_input(self, type: TensorType) -> Value:
        v = Value(type)
        self.inputs.append(v)
        return v

    def users(self) -> dict[int, list[Node]]:
        """Map id(value) -> nodes that read it."""
        out: dict[int, list[Node]] = {}
        for n in self.nodes:
            for v in n.inputs:
                out.setdefault(id(v), []).append(n)
        return out

    def __str__(self) -> str:
        from .printer import print_graph  # lazy: an import cycle (it imports this module, directly or not)
        return print_graph(self)

    def __eq__(self, other) -> bool:
        """Structural equality: same name, types, ops, attributes, wiring and provenance."""
        return isinstance(other, Graph) and _signature(self) == _signature(other)

    __hash__ = None


def attr_key(v):
    """An attribute value as an exact, hashable key: floats by bit pattern, so NaN equals
    NaN and -0.0 differs from 0.0 (Python's == says the opposite for both)."""
    if isinstance(v, float):
        return ("float", v.hex())
    if isinstance(v, complex):
        return ("complex", float(v.real).hex(), float(v.imag).hex())
    if isinstance(v, tuple):
        return tuple(attr_key(x) for x in v)
    return (type(v).__name__, v)


def _signature(g: "Graph") -> tuple:
    index: dict[int, int] = {}
    for v in g.inputs:
        index[id(v)] = len(index)
    nodes = []
    for n in g.nodes:
        nodes.append((n.op, tuple(index.get(id(v), -1) for v in n.inputs),
                      tuple(sorted((k, attr_key(a)) for k, a in n.attrs.items())),
                      tuple(o.type for o in n.outputs), n.loc, n.fwd_id, n.id, n.region))
        for o in n.outputs:
            index[id(o)] = len(index)
    return (g.name, tuple(v.type for v in g.inputs),
            tuple(i for i, v in enumerate(g.inputs) if id(v) in g.saved), tuple(nodes),
            tuple(index.get(id(v), -1) for v in g.outputs))
