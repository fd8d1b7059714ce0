"""Other views of a graph: Graphviz DOT and JSON (the text format is printer.py)."""
from __future__ import annotations

import json

from .graph import Graph
from .printer import format_attr, value_names


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(g: Graph) -> str:
    """A Graphviz digraph: inputs as ellipses (saved ones shaded), ops as boxes labelled
    ``op -> type``, fusion regions as clusters, edges labelled with value names."""
    names = value_names(g)
    lines = [f'digraph "{_quote(g.name)}" {{', "  rankdir=TB;", '  node [fontname="monospace"];']
    producer = {}
    for i, v in enumerate(g.inputs):
        style = ', style=filled, fillcolor="#dddddd"' if id(v) in g.saved else ""
        lines.append(f'  in{i} [shape=ellipse, label="{names[id(v)]}: {v.type}"{style}];')
        producer[id(v)] = f"in{i}"
    regions: dict = {}
    for k, n in enumerate(g.nodes):
        label = f"{n.op} -> " + ", ".join(str(o.type) for o in n.outputs)
        tooltip = _quote(str(n.loc or ""))
        decl = f'n{k} [shape=box, label="{label}", tooltip="{tooltip}"];'
        regions.setdefault(n.region, []).append(decl)
        for o in n.outputs:
            producer[id(o)] = f"n{k}"
    for region, decls in regions.items():
        if region is None:
            lines.extend("  " + d for d in decls)
        else:
            lines.append(f'  subgraph cluster_{region} {{ label="fusion {region}"; style=dashed;')
            lines.extend("    " + d for d in decls)
            lines.append("  }")
    for k, n in enumerate(g.nodes):
        for v in n.inputs:
            lines.append(f'  {producer[id(v)]} -> n{k} [label="{names[id(v)]}"];')
    for i, v in enumerate(g.outputs):
        lines.append(f'  out{i} [shape=plaintext, label="return {i}"];')
        lines.append(f"  {producer[id(v)]} -> out{i};")
    lines.append("}")
    return "\n".join(lines)


def to_json(g: Graph) -> str:
    """The graph as JSON: inputs, nodes (op, inputs, outputs, attrs as IR literals,
    provenance), outputs; values named as in the text format."""
    names = value_names(g)
    doc = {
        "name": g.name,
        "inputs": [{"name": names[id(v)], "type": str(v.type), "saved": id(v) in g.saved}
                   for v in g.inputs],
        "nodes": [{"op": n.op, "inputs": [names[id(v)] for v in n.inputs],
                   "outputs": [{"name": names[id(o)], "type": str(o.type)} for o in n.outputs],
                   "attrs": {k: format_attr(a) for k, a in n.attrs.items()},
                   "id": n.id, "fwd_id": n.fwd_id, "fusion": n.region,
                   "loc": str(n.loc) if n.loc else None} for n in g.nodes],
        "outputs": [names[id(v)] for v in g.outputs],
    }
    return json.dumps(doc, indent=1)
