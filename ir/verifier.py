"""The IR verifier: SSA, known ops and attributes, and types that re-infer.

Runs after every pass in tests and in debug mode (`TRACEGRAD_VERIFY=1`).
"""
from __future__ import annotations

from .attr_kinds import SIZE, describe
from .errors import IRError
from .graph import Graph, attr_key
from .printer import print_graph
from .registry import COMPLEX, REGISTRY, check_complex


def _fail(g: Graph, index: int, msg: str):
    lines = print_graph(g).splitlines()
    at = index + 1  # the header line comes first
    lo, hi = max(0, at - 3), min(len(lines), at + 4)
    context = "\n".join(("> " if i == at else "  ") + lines[i] for i in range(lo, hi))
    raise IRError(f"verify @{g.name}: node {index}: {msg}\n{context}")


def verify(g: Graph) -> None:
    """Raise IRError naming the first malformed node, with the nodes around it."""
    defined = {id(v) for v in g.inputs}
    if len(defined) != len(g.inputs):
        raise IRError(f"verify @{g.name}: an input value is listed twice")
    for i, n in enumerate(g.nodes):
        op = REGISTRY.get(n.op)
        if op is None:
            _fail(g, i, f"unknown op {n.op!r}")
        if op.decomp is not None:
            _fail(g, i, f"{n.op} is a composite op and must be decomposed before it enters a graph")
        if not op.variadic and len(n.inputs) != op.n_inputs:
            _fail(g, i, f"{n.op} takes {op.n_inputs} operand(s) ({', '.join(op.inputs)}), "
                        f"got {len(n.inputs)}")
        for k, v in enumerate(n.inputs):
            if id(v) not in defined:
                _fail(g, i, f"input {k} of {n.op} is used before it is defined")
        declared = [a for a, _ in op.attrs]
        if sorted(n.attrs) != sorted(declared):
            _fail(g, i, f"{n.op} attributes {sorted(n.attrs)} differ from the declared {declared}")
        if n.region is not None and not SIZE.check(n.region):
            _fail(g, i, f"fusion={describe(n.region)}: a fusion region is a non-negative integer")
        for a in declared:
            kind = op.attr_kinds[a]
            if not kind.check(n.attrs[a]):
                _fail(g, i, f"{n.op} attribute {a}={describe(n.attrs[a])}: expected "
                            f"{kind.text} ({kind.name})")
        types = [v.type for v in n.inputs]
        try:
            if not op.flags & COMPLEX:
                check_complex(op, types)
            if op.canon is not None:   # its range checks (dims, sizes, modes); canonical
                canonical = op.canon(types, **n.attrs)   # values are left as they are
                changed = [a for a in declared if attr_key(canonical.get(a, n.attrs[a]))
                           != attr_key(n.attrs[a])]
                if changed:
                    a = changed[0]
                    raise IRError(f"attribute {a}={describe(n.attrs[a])} is not canonical "
                                  f"(the op makes it {describe(canonical[a])})")
            inferred = op.infer(types, **n.attrs)
        except Exception as e:  # the op's own error, reported at this node
            _fail(g, i, f"{n.op} rejects its inputs: {e}")
        inferred = inferred if type(inferred) is tuple else (inferred,)
        if tuple(o.type for o in n.outputs) != inferred:
            _fail(g, i, f"{n.op} output types {[str(o.type) for o in n.outputs]} differ from "
                        f"inferred {[str(t) for t in inferred]}")
        for o in n.outputs:
            if id(o) in defined:
                _fail(g, i, "a value is defined twice (SSA violation)")
            defined.add(id(o))
    for k, v in enumerate(g.outputs):
        if id(v) not in defined:
            raise IRError(f"verify @{g.name}: output {k} is not defined in the graph")
