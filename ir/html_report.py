"""The HTML report of `tracegrad dump --format html` and `tracegrad.ir.dump(..., "html")`.

One self-contained file: inline CSS, inline JavaScript, inline SVG; nothing
is fetched.  It holds

- the summary (`summary.format_report`'s tables: programs, ops by kind with
  estimated FLOPs, nodes after each pass, saved tensors sortable by bytes);
- one tab per program view (a backward program after each of its passes),
  each with the program drawn as a graph and its IR text;
- the user's source files the nodes came from, with those lines marked;
  clicking a node (or a saved tensor's source) highlights its line.

The graph is drawn by Graphviz (``dot -Tsvg`` on `export.to_dot`) when the
``dot`` program is on PATH, else by `layered_svg`, a plain layered layout of
our own.  Every node drawn is an SVG ``<g class="tg-node">`` carrying
``data-view`` (its tab), ``data-node`` (its first output's name, ``%5``),
``data-op``, and ``data-file``/``data-line`` when it has a source location.

The page also obeys its URL fragment, for links and headless tests:
``#view=v2`` opens tab v2, ``#node=v2_n5`` selects node 5 of view v2 as a
click would (opening its tab), ``#sort=bytes`` sorts the saved-tensor tables
by bytes; they combine with ``&``.
"""
from __future__ import annotations

import html
import os
import re
import shutil
import subprocess

from .graph import Graph, SourceLoc
from .printer import format_loc, print_graph, value_names
from .summary import ProgramReport, format_report, summarize

_PALETTE = ("#fde2c8", "#d6ecd2", "#d5e3f5", "#f5d5e8", "#efe7c4", "#dcd6f2", "#cdeeee",
            "#f2d9d0")


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


# ---- drawing -------------------------------------------------------------------------------
def graphviz_svg(dot_text: str, timeout: float = 60.0) -> str | None:
    """SVG from Graphviz ``dot -Tsvg`` (None when ``dot`` is not on PATH or fails)."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        res = subprocess.run([exe, "-Tsvg"], input=dot_text, capture_output=True, text=True,
                             timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    if res.returncode != 0 or "<svg" not in res.stdout:
        return None
    return res.stdout[res.stdout.index("<svg"):]


def _node_attrs(key: str, g: Graph, files: dict) -> dict:
    """SVG id -> (class, data attributes, tooltip) for every input, node and output."""
    names = value_names(g)
    out = {}
    for i, v in enumerate(g.inputs):
        saved = " {saved}" if id(v) in g.saved else ""
        out[f"{key}_in{i}"] = ("tg-input", {"data-node": names[id(v)]},
                               f"input {names[id(v)]}: {v.type}{saved}")
    for k, n in enumerate(g.nodes):
        outs = ", ".join(f"{names[id(o)]}: {o.type}" for o in n.outputs)
        args = ", ".join(names.get(id(v), "%?") for v in n.inputs)
        tip = f"{outs} = {n.op}({args})"
        if n.region is not None:
            tip += f"  fusion region {n.region}"
        data = {"data-node": names[id(n.outputs[0])] if n.outputs else f"#{k}", "data-op": n.op}
        if n.loc is not None:
            tip += f"  at {format_loc(n.loc)}"
            if n.loc.file in files:
                data["data-file"] = str(files[n.loc.file])
                data["data-line"] = str(n.loc.line)
        out[f"{key}_n{k}"] = ("tg-node", data, tip)
    for i, v in enumerate(g.outputs):
        out[f"{key}_out{i}"] = ("tg-output", {"data-node": names.get(id(v), "%?")},
                                f"output {i}: {names.get(id(v), '%?')}")
    return out


def _data(key: str, data: dict) -> str:
    return " ".join(f'{k}="{_esc(v)}"' for k, v in {"data-view": key, **data}.items())


_GV_NODE = re.compile(r'<g id="([A-Za-z0-9_]+)" class="node">\s*<title>[^<]*</title>')


def _graphviz_view(key: str, g: Graph, files: dict) -> str | None:
    from .export import to_dot  # lazy: an import cycle (it imports this module, directly or not)
    smaller = '  rankdir=TB; node [fontsize=10]; edge [fontsize=9, fontcolor="#666"];'
    dot = to_dot(g, ids=key).replace("  rankdir=TB;", smaller, 1)
    svg = graphviz_svg(dot)
    if svg is None:
        return None
    attrs = _node_attrs(key, g, files)

    def mark(m: re.Match) -> str:
        found = attrs.get(m.group(1))
        if found is None:
            return m.group(0)
        cls, data, tip = found
        return (f'<g id="{m.group(1)}" class="node {cls}" {_data(key, data)}>'
                f"<title>{_esc(tip)}</title>")
    svg = _GV_NODE.sub(mark, svg)
    return re.sub(r"<!--.*?-->\n?", "", svg, flags=re.S)


def layered_svg(key: str, g: Graph, files: dict) -> str:
    """A plain layered drawing: inputs on top, each node one layer below its lowest input,
    outputs at the bottom; within a layer, nodes ordered by the mean position of their
    inputs (one downward sweep), edges drawn as curves."""
    names = value_names(g)
    attrs = _node_attrs(key, g, files)
    items = []                       # (svg id, lines of label, layer, shape, fill)
    where: dict[int, int] = {}       # id(value) -> item index
    preds: list[list[int]] = []
    for i, v in enumerate(g.inputs):
        fill = "#dddddd" if id(v) in g.saved else "#ffffff"
        items.append((f"{key}_in{i}", [f"{names[id(v)]}: {v.type}"], 0, "ellipse", fill))
        preds.append([])
        where[id(v)] = len(items) - 1
    for k, n in enumerate(g.nodes):
        ps = [where[id(v)] for v in n.inputs if id(v) in where]
        layer = 1 + max((items[p][2] for p in ps), default=-1)
        outs = ", ".join(names[id(o)] for o in n.outputs)
        types = ", ".join(str(o.type) for o in n.outputs)
        fill = _PALETTE[n.region % len(_PALETTE)] if n.region is not None else "#ffffff"
        items.append((f"{key}_n{k}", [f"{outs} = {n.op}", types], layer, "box", fill))
        preds.append(ps)
        for o in n.outputs:
            where[id(o)] = len(items) - 1
    bottom = 1 + max((it[2] for it in items), default=-1)
    for i, v in enumerate(g.outputs):
        items.append((f"{key}_out{i}", [f"return {i}"], bottom, "plain", "none"))
        preds.append([where[id(v)]] if id(v) in where else [])

    char_w, line_h, pad, gap_x, gap_y = 7.2, 15, 10, 18, 46
    layers: dict[int, list[int]] = {}
    for idx, it in enumerate(items):
        layers.setdefault(it[2], []).append(idx)
    slot: dict[int, float] = {}
    for layer in sorted(layers):
        members = layers[layer]
        start = {i: float(pos) for pos, i in enumerate(members)}
        members.sort(key=lambda i: (sum(slot[p] for p in preds[i]) / len(preds[i])
                                    if preds[i] else start[i], i))
        for pos, i in enumerate(members):
            slot[i] = float(pos)
    width = {i: max(len(s) for s in it[1]) * char_w + 2 * pad for i, it in enumerate(items)}
    height = {i: len(it[1]) * line_h + pad for i, it in enumerate(items)}
    layer_h = {layer: max(height[i] for i in m) for layer, m in layers.items()}
    row_w = {layer: sum(width[i] for i in m) + gap_x * (len(m) - 1) for layer, m in layers.items()}
    total_w = max(row_w.values(), default=100) + 2 * gap_x
    x, y, top = {}, {}, gap_y / 2
    for layer in sorted(layers):
        cursor = (total_w - row_w[layer]) / 2
        for i in layers[layer]:
            x[i], y[i] = cursor + width[i] / 2, top + layer_h[layer] / 2
            cursor += width[i] + gap_x
        top += layer_h[layer] + gap_y
    total_h = top - gap_y / 2

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" '
             f'height="{total_h:.0f}" viewBox="0 0 {total_w:.0f} {total_h:.0f}" '
             'font-family="monospace" font-size="12">',
             f'<defs><marker id="{key}_arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
             '<g class="tg-edges" fill="none" stroke="#888">']
    for i, ps in enumerate(preds):
        for p in ps:
            x1, y1 = x[p], y[p] + height[p] / 2
            x2, y2 = x[i], y[i] - height[i] / 2
            mid = (y1 + y2) / 2
            parts.append(f'<path d="M{x1:.1f},{y1:.1f} C{x1:.1f},{mid:.1f} {x2:.1f},{mid:.1f} '
                         f'{x2:.1f},{y2:.1f}" marker-end="url(#{key}_arrow)"/>')
    parts.append("</g>")
    for i, (sid, lines, _, shape, fill) in enumerate(items):
        cls, data, tip = attrs[sid]
        w, h = width[i], height[i]
        parts.append(f'<g id="{sid}" class="{cls}" {_data(key, data)}><title>{_esc(tip)}</title>')
        if shape == "box":
            parts.append(f'<rect x="{x[i] - w / 2:.1f}" y="{y[i] - h / 2:.1f}" width="{w:.1f}" '
                         f'height="{h:.1f}" rx="3" fill="{fill}" stroke="#333"/>')
        elif shape == "ellipse":
            parts.append(f'<ellipse cx="{x[i]:.1f}" cy="{y[i]:.1f}" rx="{w / 2:.1f}" '
                         f'ry="{h / 2:.1f}" fill="{fill}" stroke="#333"/>')
        first = y[i] - (len(lines) - 1) * line_h / 2 + 4
        for j, s in enumerate(lines):
            parts.append(f'<text x="{x[i]:.1f}" y="{first + j * line_h:.1f}" '
                         f'text-anchor="middle">{_esc(s)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


# ---- the page --------------------------------------------------------------------------------
_CSS = """
body { font-family: sans-serif; margin: 0; color: #222; }
header { padding: 8px 16px; background: #24364b; color: #fff; }
header h1 { font-size: 18px; margin: 4px 0; }
header p { margin: 2px 0; font-size: 13px; color: #cfd8e3; }
#tg-main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 12px;
           padding: 0 12px; }
#tg-side { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto; }
h2 { font-size: 16px; border-bottom: 1px solid #ccc; margin-top: 18px; }
table { border-collapse: collapse; font-size: 12px; margin: 6px 0 12px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
th.tg-sortable { cursor: pointer; background: #eef3fa; }
th.tg-sortable::after { content: " \\2195"; color: #888; }
.tg-tabs { display: flex; flex-wrap: wrap; gap: 4px; margin: 8px 0; align-items: center; }
.tg-tabgroup { font-size: 12px; font-weight: bold; margin-left: 8px; }
.tg-tab { border: 1px solid #aab; background: #f4f6f9; padding: 3px 8px; cursor: pointer;
          font-size: 12px; border-radius: 3px; }
.tg-tab.tg-active { background: #24364b; color: #fff; }
.tg-graph { overflow: auto; max-height: 80vh; border: 1px solid #ddd; background: #fff; }
.tg-node, .tg-input { cursor: pointer; }
.tg-node.tg-selected polygon, .tg-node.tg-selected rect { stroke: #d33; stroke-width: 3; }
pre { font-size: 12px; background: #f8f8f8; padding: 6px; overflow: auto; }
.tg-src pre { padding: 0; }
.tg-line { display: block; white-space: pre; }
.tg-line.tg-used { background: #fff6d5; }
.tg-line.tg-hit { background: #ffb3b3; outline: 1px solid #d33; }
.tg-ln { color: #999; user-select: none; }
#tg-info { font-family: monospace; font-size: 12px; white-space: pre-wrap; min-height: 2em;
           background: #eef3fa; padding: 4px; }
"""

_JS = """
(function () {
  function $all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function showView(key) {
    $all('.tg-view').forEach(function (s) { s.hidden = s.dataset.view !== key; });
    $all('.tg-tab').forEach(function (b) {
      b.classList.toggle('tg-active', b.dataset.view === key); });
  }
  function showSource(file, line) {
    $all('.tg-hit').forEach(function (e) { e.classList.remove('tg-hit'); });
    var el = document.getElementById('src-' + file + '-L' + line);
    if (!el) { return false; }
    el.classList.add('tg-hit');
    var side = document.getElementById('tg-side');   // scroll the source panel, not the page
    var top = el.getBoundingClientRect().top - side.getBoundingClientRect().top;
    side.scrollTop += top - side.clientHeight / 2;
    return true;
  }
  function selectNode(el) {
    $all('.tg-selected').forEach(function (e) { e.classList.remove('tg-selected'); });
    el.classList.add('tg-selected');
    var t = el.querySelector('title');
    var info = (t ? t.textContent : el.dataset.node) || '';
    if (el.dataset.line !== undefined) {
      if (!showSource(el.dataset.file, el.dataset.line)) { info += '\\n(source not available)'; }
    } else {
      info += '\\n(no source location)';
    }
    document.getElementById('tg-info').textContent = info;
  }
  function sortTable(table, col, desc) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var d = Number(a.cells[col].dataset.value) - Number(b.cells[col].dataset.value);
      return (desc ? -d : d) || (Number(a.dataset.order) - Number(b.dataset.order));
    });
    rows.forEach(function (r) { body.appendChild(r); });
    table.dataset.sorted = desc ? 'desc' : 'asc';
  }
  document.addEventListener('click', function (ev) {
    var t = ev.target;
    var node = t.closest('.tg-node, .tg-input');
    if (node) { selectNode(node); return; }
    var th = t.closest('th.tg-sortable');
    if (th) {
      var table = th.closest('table');
      sortTable(table, th.cellIndex, table.dataset.sorted !== 'desc');
      return;
    }
    var tab = t.closest('.tg-tab');
    if (tab) { showView(tab.dataset.view); return; }
    var link = t.closest('.tg-srclink');
    if (link) { ev.preventDefault(); showSource(link.dataset.file, link.dataset.line); }
  });
  var params = {};
  location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
    var i = kv.indexOf('=');
    if (i > 0) { params[kv.slice(0, i)] = decodeURIComponent(kv.slice(i + 1)); }
  });
  var first = document.querySelector('.tg-tab');
  showView(params.view || (first ? first.dataset.view : ''));
  if (params.sort === 'bytes') {
    $all('table.tg-saved').forEach(function (tb) { sortTable(tb, 3, true); });
  }
  if (params.node) {
    var n = document.getElementById(params.node);
    if (n) {
      showView(n.dataset.view);
      selectNode(n);
      var box = n.closest('.tg-graph');   // bring the node into its scrolled drawing
      var r = n.getBoundingClientRect(), b = box.getBoundingClientRect();
      box.scrollTop += r.top - b.top - box.clientHeight / 2;
      box.scrollLeft += r.left - b.left - box.clientWidth / 2;
    }
  }
  document.body.dataset.ready = 'true';
})();
"""


def _source_files(programs: list[ProgramReport]) -> tuple[dict, dict]:
    """(file -> index, index -> (display path, lines or None)) for every source location."""
    used: dict[str, dict] = {}
    locs: list[SourceLoc] = []
    for p in programs:
        for _, g in p.passes or [("", p.graph)]:
            locs += [n.loc for n in g.nodes if n.loc is not None]
        locs += [r.loc for r in p.saved or () if r.loc is not None]
    for loc in locs:
        used.setdefault(loc.file, {}).setdefault(loc.line, 0)
        used[loc.file][loc.line] += 1
    files, listing = {}, {}
    for path in used:
        files[path] = len(files)
        lines = None
        if not path.startswith("<") and os.path.isfile(path):
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                lines = None
        listing[files[path]] = (path, lines, used[path])
    return files, listing


def _summary_html(programs: list[ProgramReport], files: dict) -> str:
    out = ["<h2>Summary</h2>", "<table class='tg-summary'><thead><tr><th>program</th>"
           "<th class=num>nodes</th><th class=num>inputs</th><th class=num>outputs</th>"
           "<th class=num>fusion regions</th><th class=num>saved values</th>"
           "<th class=num>saved bytes</th><th class=num>est. FLOPs</th></tr></thead><tbody>"]
    sums = [summarize(p.graph) for p in programs]
    for p, s in zip(programs, sums):
        saved = (f"<td class=num>{len(p.saved)}</td><td class=num>{p.total_saved_bytes:,}</td>"
                 if p.saved is not None else "<td class=num>-</td><td class=num>-</td>")
        out.append(f"<tr><td>{_esc(p.label)}</td><td class=num>{s.nodes}</td>"
                   f"<td class=num>{s.inputs}</td><td class=num>{s.outputs}</td>"
                   f"<td class=num>{s.regions}</td>{saved}<td class=num>{s.flops:,}</td></tr>")
    out.append("</tbody></table>")
    for p in programs:
        if p.saved is not None:
            out.append(f"<h3>Saved tensors: {_esc(p.label)}</h3>")
            out.append(_saved_html(p, files))
    return "\n".join(out)


def _ops_html(programs: list[ProgramReport]) -> str:
    """Per program: ops by kind with estimated FLOPs, and the node count after each pass."""
    out = ["<h2>Ops by kind</h2>"]
    for p in programs:
        s = summarize(p.graph)
        out.append(f"<details class='tg-opsbox' open><summary>{_esc(p.label)}: {s.nodes} nodes, "
                   f"{len(s.by_op)} ops, est. {s.flops:,} FLOPs</summary>"
                   "<table class='tg-ops'><thead><tr><th>op</th><th>kind</th>"
                   "<th class=num>count</th><th class=num>est. FLOPs</th></tr></thead><tbody>")
        for op, (kind, count, flops) in s.by_op.items():
            out.append(f"<tr><td>{_esc(op)}</td><td>{_esc(kind)}</td><td class=num>{count}</td>"
                       f"<td class=num>{flops:,}</td></tr>")
        out.append("</tbody></table>")
        if p.passes:
            out.append("<table class='tg-passes'><thead><tr><th>#</th><th>after pass</th>"
                       "<th class=num>nodes</th></tr></thead><tbody>")
            out += [f"<tr><td>{k}</td><td>{_esc(name)}</td><td class=num>{len(g.nodes)}</td>"
                    "</tr>" for k, (name, g) in enumerate(p.passes)]
            out.append("</tbody></table>")
        out.append("</details>")
    out.append("<p>FLOPs are estimated from the types (docs/ir.md): 2·M·N·K per matmul, "
               "numel per elementwise op, input numel per reduction, 0 for data movement.</p>")
    return "\n".join(out)


def _saved_html(p: ProgramReport, files: dict) -> str:
    which = "program inputs not counted" if p.saved_bytes is not None else "all values"
    out = [f"<p>Saved for backward: {len(p.saved)} values, {p.total_saved_bytes:,} bytes "
           f"({which}). Click <b>bytes</b> to sort.</p>",
           "<table class='tg-saved'><thead><tr><th>name</th><th>shape</th><th>dtype</th>"
           "<th class='num tg-sortable' title='sort by bytes'>bytes</th><th>source line</th>"
           "<th>reason</th></tr></thead><tbody>"]
    for k, r in enumerate(p.saved):
        where = _esc(format_loc(r.loc) or "-")
        if r.loc is not None and r.loc.file in files:
            where = (f"<a href='#' class='tg-srclink' data-file='{files[r.loc.file]}' "
                     f"data-line='{r.loc.line}'>{where}</a>")
        shape = "[" + ", ".join(map(str, r.type.shape)) + "]"
        out.append(f"<tr data-order='{k}'><td>{_esc(r.name)}</td><td>{shape}</td>"
                   f"<td>{r.type.dtype.short}</td><td class=num data-value='{r.nbytes}'>"
                   f"{r.nbytes:,}</td><td>{where}</td><td>{_esc(r.reason)}</td></tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _sources_html(listing: dict) -> str:
    out = ["<h2>Source</h2>"]
    if not listing:
        out.append("<p>No node carries a source location.</p>")
    for idx, (path, lines, used) in listing.items():
        out.append(f"<div class='tg-src' data-file='{idx}'><h3>{_esc(path)}</h3>")
        if lines is None:
            out.append("<p>(file not readable from here)</p></div>")
            continue
        rows = []
        for no, text in enumerate(lines, 1):
            count = used.get(no)
            cls = "tg-line tg-used" if count else "tg-line"
            tip = f" title='{count} node{'s' if count != 1 else ''}'" if count else ""
            rows.append(f"<span id='src-{idx}-L{no}' class='{cls}' data-line='{no}'{tip}>"
                        f"<span class='tg-ln'>{no:>5} </span>{_esc(text)}</span>")
        out.append("<pre>" + "".join(rows) + "</pre></div>")
    return "\n".join(out)


_DRAWN_BY = {"graphviz": "Graphviz dot", "builtin": "the built-in layered layout",
             "mixed": "Graphviz dot, or the built-in layout where dot failed"}


def render_html(programs: list[ProgramReport], *, title: str, subtitle: str = "",
                layout: str = "auto") -> str:
    """The report page for `programs` (see the module docstring).

    `layout`: "auto" (Graphviz when ``dot`` is on PATH, else the built-in
    layout), "graphviz" (raises RuntimeError when it is unavailable) or "builtin".
    """
    if layout not in ("auto", "graphviz", "builtin"):
        raise ValueError(f"render_html: unknown layout {layout!r}; expected 'auto', 'graphviz' "
                         "or 'builtin'")
    files, listing = _source_files(programs)
    tabs, views, used_layouts = [], [], set()
    for pi, p in enumerate(programs):
        stages = p.passes or [("", p.graph)]
        tabs.append(f"<span class='tg-tabgroup'>{_esc(p.label)}{':' if p.passes else ''}</span>")
        for k, (name, g) in enumerate(stages):
            key = f"v{len(views)}"
            label = f"{p.label}: {k}. {name}" if name else p.label
            svg = None if layout == "builtin" else _graphviz_view(key, g, files)
            if svg is None and layout == "graphviz":
                raise RuntimeError("render_html: layout='graphviz' but Graphviz `dot` is not on "
                                   "PATH or failed")
            drawn = "graphviz" if svg is not None else "builtin"
            used_layouts.add(drawn)
            if svg is None:
                svg = layered_svg(key, g, files)
            short = f"{k}. {name}" if name else "program"
            tabs.append(f"<button class='tg-tab' data-view='{key}' title='{_esc(label)}'>"
                        f"{_esc(short)}</button>")
            views.append(
                f"<section class='tg-view' data-view='{key}' data-program='{pi}' "
                f"data-nodes='{len(g.nodes)}' data-layout='{drawn}'>"
                f"<h3>{_esc(label)} ({len(g.nodes)} nodes)</h3>"
                f"<div class='tg-graph'>{svg}</div>"
                f"<details><summary>IR text</summary><pre>{_esc(print_graph(g))}</pre></details>"
                "</section>")
    page_layout = "graphviz" if used_layouts == {"graphviz"} else (
        "builtin" if used_layouts == {"builtin"} else "mixed")
    text_summary = _esc(format_report(programs))
    return "\n".join([
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{_esc(title)}</title>", f"<meta name='tg-layout' content='{page_layout}'>",
        f"<style>{_CSS}</style></head>", f"<body data-layout='{page_layout}'>",
        f"<header><h1>{_esc(title)}</h1><p>{_esc(subtitle)}</p>"
        f"<p>graphs drawn by {_DRAWN_BY[page_layout]}; click a node to see its source line"
        "</p></header>",
        "<div id='tg-main'><div>",
        _summary_html(programs, files),
        "<h2>Programs</h2>", "<p>A backward program is shown after each pass that built it."
        "</p><div class='tg-tabs'>" + "".join(tabs) + "</div>",
        "\n".join(views),
        _ops_html(programs),
        f"<details><summary>summary as text</summary><pre>{text_summary}</pre></details>",
        "</div><div id='tg-side'><h2>Selected node</h2><div id='tg-info'>click a node</div>",
        _sources_html(listing), "</div></div>",
        f"<script>{_JS}</script>", "</body></html>"])
