"""The IR text format (grammar in docs/ir.md).

    graph @step(%0: f32[32,784], %1: f32[784,10] {saved}) {
      %2: f32[32,10] = batched_matmul(%0, %1)          # model.py:14 (step)
      %3: f32[] = sum(%2) {dim=(0, 1), keepdim=false}  # bwd of #7, model.py:15 (step)
      return %3
    }

Names are assigned at print time, so the text is deterministic.
"""
from __future__ import annotations

import os
import re

from . import types as T
from .graph import Graph, SourceLoc

# the plain form of a node's source location (the parser reads it with this pattern)
LOC = re.compile(r"^(?P<file>.*):(?P<line>[0-9]{1,19}) \((?P<func>[^()]*)\)$")


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# comments are aligned to the longest code line up to this column; longer lines are not
# padded (a padded 122 KB program printed as 20 MB)
_ALIGN = 80


def _breaks(c: str) -> bool:
    """A character that would split or hide a line of text (str.splitlines' separators and
    other control characters): strings write it as an escape \\uXXXX."""
    return c < " " or c == "\x7f" or "\x80" <= c <= "\x9f" or c in "\u2028\u2029"


def _plain_loc(loc: SourceLoc) -> bool:
    """A location that prints as ``file:line (func)`` and parses back unchanged."""
    text = str(loc)
    m = LOC.match(text)
    return (text == text.strip() and not any(_breaks(c) for c in text)
            and not text.startswith(("#", "bwd of")) and m is not None
            and (m.group("file"), int(m.group("line")), m.group("func"))
            == (loc.file, loc.line, loc.func))


def loc_text(loc: SourceLoc) -> str:
    """A node's location in its comment: ``file:line (func)``, or ``loc("file", line,
    "func")`` with quoted strings where the plain form would not parse back."""
    if _plain_loc(loc):
        return str(loc)
    return f"loc({format_attr(loc.file)}, {loc.line}, {format_attr(loc.func)})"


def format_attr(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "none"
    if isinstance(v, T.DType):
        return v.short
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, complex):   # both parts bit-exact, as floats
        return f"complex({float(v.real)!r}, {float(v.imag)!r})"
    if isinstance(v, str):
        return '"' + "".join(_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if _breaks(c) else c)
                             for c in v) + '"'
    if isinstance(v, tuple):
        inner = ", ".join(format_attr(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return str(v)


def format_loc(loc: SourceLoc | None) -> str:
    if loc is None:
        return ""
    path = loc.file
    try:
        rel = os.path.relpath(path)
        if not rel.startswith(".."):
            path = rel
    except ValueError:
        pass
    return f"{path}:{loc.line} ({loc.func})"


def value_names(g: Graph) -> dict[int, str]:
    """The printed name (``%N``) of every value of `g`, by id: inputs first, then node outputs."""
    names: dict[int, str] = {}
    for v in g.inputs:
        names.setdefault(id(v), f"%{len(names)}")
    for n in g.nodes:
        for o in n.outputs:
            names.setdefault(id(o), f"%{len(names)}")
    return names


def print_graph(g: Graph) -> str:
    names = value_names(g)

    def name(v) -> str:
        return names[id(v)]

    params = []
    for v in g.inputs:
        saved = " {saved}" if id(v) in g.saved else ""
        params.append(f"{name(v)}: {v.type}{saved}")
    name_text = g.name if _IDENT.fullmatch(g.name) else format_attr(g.name)
    lines = [f"graph @{name_text}({', '.join(params)}) {{"]
    body = []
    for n in g.nodes:
        outs = ", ".join(f"{name(o)}: {o.type}" for o in n.outputs)
        args = ", ".join(names.get(id(v), "%?") for v in n.inputs)
        attrs = dict(n.attrs)
        if n.region is not None:
            attrs["fusion"] = n.region
        attr_text = (" {" + ", ".join(f"{k}={format_attr(a)}" for k, a in attrs.items()) + "}"
                     if attrs else "")
        comment = []
        if n.id is not None:
            comment.append(f"#{n.id}")
        if n.fwd_id is not None:
            comment.append(f"bwd of #{n.fwd_id}")
        if n.loc is not None:
            comment.append(loc_text(n.loc))   # verbatim: it parses back to an equal graph
        body.append((f"  {outs} = {n.op}({args}){attr_text}", ", ".join(comment)))
    width = max((len(s) for s, _ in body if len(s) <= _ALIGN), default=0)
    for s, c in body:
        lines.append(f"{s.ljust(width)}  # {c}" if c else s)
    lines.append("  return " + ", ".join(names.get(id(v), "%?") for v in g.outputs))
    lines.append("}")
    return "\n".join(lines)
