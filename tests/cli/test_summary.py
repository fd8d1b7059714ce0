"""The FLOP estimator and summary, `tg.ir.dump` in every format, and `tg.compile(fn).programs`."""
import json
import shutil

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn.functional as F
from tracegrad.ir import parse, print_graph
from tracegrad.ir.html_report import render_html
from tracegrad.ir.summary import (ProgramReport, format_report, node_flops, op_kind, saved_rows,
                                  summarize)

from helpers import HTMLElements as _Elements

# a backward-style program: one saved input, a fusion region, a matmul, a view
PROGRAM = """\
graph @f(%0: f32[3,8,4], %1: f32[4,16], %2: f32[8,4] {saved}) {
  %3: f32[3,8,16] = batched_matmul(%0, %1)                    # model.py:3 (f)
  %4: f32[3,8,4] = exp(%0) {fusion=0}                          # model.py:4 (f)
  %5: f32[8,4] = sum(%4) {dim=(0,), keepdim=false, fusion=0}   # model.py:4 (f)
  %6: f32[8,4] = mul(%5, %2)                                   # model.py:5 (f)
  %7: f32[4,8] = permute(%6) {dims=(1, 0)}                     # model.py:6 (f)
  return %7
}
"""


def test_flops_and_kinds_per_rule():
    g = parse(PROGRAM)
    mm, ex, sm, mul, perm = g.nodes
    assert node_flops(mm) == 2 * (3 * 8 * 4) * 16 and op_kind(mm) == "matmul"
    assert node_flops(ex) == 96 and op_kind(ex) == "elementwise"
    assert node_flops(sm) == 96 and op_kind(sm) == "reduction"        # input numel
    assert node_flops(mul) == 32
    assert node_flops(perm) == 0 and op_kind(perm) == "view"
    s = summarize(g)
    assert (s.nodes, s.inputs, s.outputs, s.regions) == (5, 3, 1, 1)
    assert s.flops == 3072 + 96 + 96 + 32
    assert list(s.by_op)[0] == "batched_matmul"                        # largest cost first
    assert s.by_op["exp"] == ("elementwise", 1, 96)
    rows = saved_rows(g)
    assert [(r.name, r.nbytes) for r in rows] == [("%2", 128)]
    assert str(rows[0].loc) == "model.py:5 (f)"                       # its first reader
    text = format_report([ProgramReport("f", g, saved=rows)])
    lines = text.splitlines()
    assert lines[1].split() == ["f", "5", "3", "1", "1", "128", "3,296"]
    assert lines[-1].split()[:4] == ["%2", "f32[8,4]", "128", "model.py:5"]


def test_conv_and_softmax_flops_from_a_compiled_program():
    f = tg.compile(lambda x, w: F.log_softmax(F.conv2d(x, w).relu().flatten(1), dim=1),
                   executor="interpreter")
    f(tg.ones(2, 3, 6, 6), tg.ones(4, 3, 3, 3))
    (prog,) = f.programs
    by_op = {n.op: node_flops(n) for n in prog.forward.nodes}
    assert by_op["conv"] == 2 * (2 * 4 * 4 * 4) * (3 * 3 * 3)        # 2 * numel(out) * I*kh*kw
    assert by_op["relu"] == 2 * 4 * 4 * 4
    assert by_op["log_softmax"] == 5 * 2 * 64


def _backward_graph():
    w = tg.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    x = tg.tensor(np.ones((4, 2), np.float32))
    from tracegrad.autograd import engine
    engine.clear_cache()
    (x @ w).tanh().sum().backward()
    (prog,) = engine._cache.values()
    return prog.graph


@pytest.mark.parametrize("suffix,fmt", [(".tgir", "text"), (".dot", "dot"), (".json", "json"),
                                        (".html", "html")])
def test_ir_dump_writes_each_format(tmp_path, suffix, fmt):
    g = _backward_graph()
    path = tmp_path / "sub" / f"bwd{suffix}"
    assert tg.ir.dump(g, path) == fmt                      # format from the suffix
    text = path.read_text()
    if fmt == "text":
        assert parse(text) == g
    elif fmt == "dot":
        assert text.count("shape=box") == len(g.nodes)
    elif fmt == "json":
        assert [n["op"] for n in json.loads(text)["nodes"]] == [n.op for n in g.nodes]
    else:
        els = _Elements(text)
        assert len(els.with_class("tg-node")) == len(g.nodes)
        assert len(els.with_class("tg-input")) == len(g.inputs)
        saved = [a for t, a in els.items if t == "td" and "data-value" in a]
        assert sorted(int(a["data-value"]) for a in saved) == sorted(
            v.type.nbytes for v in g.inputs if id(v) in g.saved)
    assert tg.ir.dump(g, tmp_path / "explicit.out", format=fmt) == fmt


def test_ir_dump_rejects_unknown_format(tmp_path):
    with pytest.raises(ValueError, match="unknown format 'svg'"):
        tg.ir.dump(_backward_graph(), tmp_path / "x.svg", format="svg")


@pytest.mark.parametrize("layout", ["builtin", "graphviz"])
def test_html_layouts_mark_every_node_and_input(layout):
    if layout == "graphviz" and shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` not found: apt-get install graphviz (see .ci/run)")
    g = _backward_graph()
    page = render_html([ProgramReport("bwd", g, passes=[("a", g), ("b", g)])], title="t",
                       layout=layout)
    els = _Elements(page)
    nodes = els.with_class("tg-node")
    assert len(nodes) == 2 * len(g.nodes)
    names = print_graph(g).splitlines()[1:-2]
    assert sorted(a["data-node"] for a in nodes if a["data-view"] == "v1") == sorted(
        line.split(":")[0].strip() for line in names)
    assert {a["data-layout"] for t, a in els.items if t == "section"} == {layout}
    assert all(a["data-line"] for a in nodes)     # each carries its source line
    # self-contained: nothing is loaded from anywhere (the source listing may mention URLs)
    assert not [a for _, a in els.items if "src" in a or a.get("href", "#")[:1] != "#"]
    assert not [t for t, _ in els.items if t == "link"]


def test_compiled_programs_lists_guards_graphs_and_runs():
    w = tg.tensor([0.5, -1.0, 2.0], requires_grad=True)

    def scaled(x, scale):
        return (x * w).tanh() * scale

    f = tg.compile(scaled, executor="interpreter")
    f(tg.ones(3), 2.0).sum().backward()     # traced while w.grad is None
    f(tg.ones(3), 2.0)                      # w.grad is a tensor now: a second program
    f(tg.ones(3), 2.0)
    first, p = sorted(f.programs, key=lambda q: q.runs)
    assert (first.runs, p.runs) == (1, 2) and p.name == "scaled"
    assert ".grad of program input %1 is None" in first.guards
    assert ".grad of program input %1 is the same tensor object as at trace time" in p.guards
    assert p.guards[:3] == (
        "argument x is a tensor f32[3] with requires_grad=False (program input %0)",
        "argument scale == 2.0 (float, static)",
        "grad mode is enabled")
    assert ("program input %1 is the same f32[3] tensor object as at trace time, "
            "requires_grad=True, with no hooks") in p.guards
    assert p.forward.inputs[1].type == w._type and p.backward is not None
    saved_inputs = [v for v in p.backward.inputs if id(v) in p.backward.saved]
    assert [r.type for r in p.saved] == [v.type for v in saved_inputs] and p.saved
    assert all(r.reason and r.loc is not None for r in p.saved)
    assert p.saved_bytes == sum(r.nbytes for r in p.saved
                                if not r.reason.startswith("program input"))
    assert "ran 2 times" in str(p) and "reused when:" in str(p)
    f(tg.ones(3), 3.0)                                  # a new static value: a third program
    assert sorted(q.runs for q in f.programs) == [1, 1, 2]
    assert any("argument scale == 3.0 (float, static)" in q.guards for q in f.programs)
