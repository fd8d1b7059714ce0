"""Other views of a graph: Graphviz DOT and JSON (the text format is printer.py), and
`dump`, which writes a graph in any of the formats, the HTML report included."""
from __future__ import annotations

import json
import os

from .graph import Graph
from .html_report import render_html
from .printer import format_attr, print_graph, value_names
from .summary import ProgramReport, saved_rows


def _quote(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(g: Graph, *, ids: str | None = None) -> str:
    """A Graphviz digraph: inputs as ellipses (saved ones shaded), ops as boxes labelled
    ``op -> type``, fusion regions as clusters, edges labelled with value names.

    With `ids` (a prefix of letters, digits and ``_``), every input, node and
    output also gets an SVG id: ``<ids>_in<i>``, ``<ids>_n<k>`` (k: the node's
    position) and ``<ids>_out<i>``, which the HTML report finds its nodes by,
    and node labels start with the names of their outputs (``%5 = relu -> ...``).
    """
    names = value_names(g)

    def svg_id(what: str) -> str:
        return f', id="{ids}_{what}"' if ids else ""

    lines = [f'digraph "{_quote(g.name)}" {{', "  rankdir=TB;", '  node [fontname="monospace"];']
    producer = {}
    for i, v in enumerate(g.inputs):
        style = ', style=filled, fillcolor="#dddddd"' if id(v) in g.saved else ""
        lines.append(f'  in{i} [shape=ellipse, label="{names[id(v)]}: {v.type}"{style}'
                     f'{svg_id(f"in{i}")}];')
        producer[id(v)] = f"in{i}"
    regions: dict = {}
    for k, n in enumerate(g.nodes):
        label = f"{n.op} -> " + ", ".join(str(o.type) for o in n.outputs)
        if ids:   # the HTML report: name the node's outputs as the IR text does
            label = ", ".join(names[id(o)] for o in n.outputs) + " = " + label
        tooltip = _quote(str(n.loc or ""))
        decl = f'n{k} [shape=box, label="{label}", tooltip="{tooltip}"{svg_id(f"n{k}")}];'
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
        lines.append(f'  out{i} [shape=plaintext, label="return {i}"{svg_id(f"out{i}")}];')
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


FORMATS = {"text": ".tgir", "dot": ".dot", "json": ".json", "html": ".html"}


def dump(graph: Graph, path, format: str | None = None, *, title: str | None = None) -> str:
    """Write `graph` to `path` as IR text, Graphviz DOT, JSON or a self-contained HTML report.

    Args:
        graph: any IR graph (a backward program, a `tg.compile` program's
            ``forward`` or ``backward``, a parsed ``.tgir`` file).
        path: the file to write (its folder is created).
        format: "text", "dot", "json" or "html"; by default from the suffix
            of `path` (``.tgir``/``.txt``, ``.dot``, ``.json``, ``.html``),
            else "text".
        title: the HTML report's heading (default: the graph's name).
    Returns:
        The format written.
    Raises:
        ValueError: an unknown format.
        OSError: the file cannot be written.
    The HTML report is described in docs/ir.md (graph drawn by Graphviz's
    ``dot`` when it is on PATH, else by a built-in layered layout).
    """
    if format is None:
        suffix = os.path.splitext(str(path))[1].lower()
        format = {v: k for k, v in FORMATS.items()}.get(suffix, "text")
    if format not in FORMATS:
        raise ValueError(f"tracegrad.ir.dump: unknown format {format!r}; expected one of "
                         f"{sorted(FORMATS)}")
    if format == "html":
        saved = saved_rows(graph) if graph.saved else None
        text = render_html([ProgramReport(graph.name, graph, saved=saved)],
                           title=title or graph.name)
    else:
        text = {"text": print_graph, "dot": to_dot, "json": to_json}[format](graph)
    folder = os.path.dirname(os.path.abspath(str(path)))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text if text.endswith("\n") else text + "\n")
    return format
