"""The HTML report, opened in headless Chromium; the summary and FLOP estimates; `tg.ir.dump`.

The Chromium tests need Debian's `chromium` (and `graphviz` for the Graphviz
drawing); `.ci/run` installs both.  Each loads the report with
``--dump-dom`` (the DOM after the page's JavaScript ran) and checks that every
node of every program view is drawn, and that the page's click-through and
sorting work.
"""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from tracegrad.ir import parse

from helpers import HTMLElements as _Elements

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = "examples/train_digits.py::train_step"
CHROMIUM_MISSING = "headless Chromium not found: apt-get install chromium (see .ci/run)"


def _dump(out, *extra, env=None):
    res = subprocess.run([sys.executable, "-m", "tracegrad.cli", "dump", TARGET, "-o", str(out),
                          *extra], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    return res


def _chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip(CHROMIUM_MISSING)
    return exe


def _chromium_dom(page: pathlib.Path, fragment: str, profile: pathlib.Path) -> str:
    """The DOM of `page` after its scripts ran (loaded with URL fragment `fragment`)."""
    exe = _chromium()
    res = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--dump-dom", page.as_uri() + fragment],
        capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "<html" in res.stdout, res.stderr[-2000:]
    return res.stdout


def _expected_views(out: pathlib.Path) -> list:
    """Node output names per view, from the text dump: the step program, then the inlined
    backward program after each pass (the files --after-each-pass wrote)."""
    graphs = [parse((out / "train_step.tgir").read_text())]
    passes = sorted(out.glob("backward_*.*_*.tgir"),
                    key=lambda p: int(p.name.split(".")[1].split("_")[0]))
    assert passes, "--after-each-pass wrote no pass files"
    graphs += [parse(p.read_text()) for p in passes]
    out_names = []
    for g in graphs:
        text = str(g)
        names = [line.split(":")[0].strip() for line in text.splitlines()[1:-2]]
        assert len(names) == len(g.nodes)
        out_names.append(names)
    return out_names


def _check_every_node_drawn(dom: str, out: pathlib.Path, layout: str) -> _Elements:
    els = _Elements(dom)
    body = next(a for t, a in els.items if t == "body")
    assert body.get("data-ready") == "true"            # the page's script ran to the end
    assert body.get("data-layout") == layout
    views = [a for t, a in els.items if t == "section" and "tg-view" in a.get("class", "")]
    expected = _expected_views(out)
    assert len(views) == len(expected)
    nodes = els.with_class("tg-node")
    for k, (view, names) in enumerate(zip(views, expected)):
        assert view["data-view"] == f"v{k}" and view["data-layout"] == layout
        drawn = [a["data-node"] for a in nodes if a["data-view"] == view["data-view"]]
        assert len(drawn) == len(names) == int(view["data-nodes"])
        assert sorted(drawn) == sorted(names)         # every node, each once
    assert len(nodes) == sum(len(n) for n in expected)
    # self-contained: no script, stylesheet, image or link leaves the file
    assert not [a for t, a in els.items if t in ("script", "img", "iframe") and "src" in a]
    assert not [t for t, _ in els.items if t == "link"]
    assert all(a["href"].startswith("#") for _, a in els.items if "href" in a)
    return els


@pytest.fixture(scope="module")
def text_dump(tmp_path_factory):
    """The text dump with --after-each-pass: train_step.tgir, the pass files, summary.txt."""
    out = tmp_path_factory.mktemp("text")
    res = _dump(out, "--after-each-pass")
    assert f"wrote {out / 'train_step.tgir'}" in res.stdout
    names = [p.name for p in out.iterdir()]
    assert any(n.endswith("_simplify.tgir") for n in names)
    return out


def _html_dump(text_out: pathlib.Path, out: pathlib.Path, env=None) -> pathlib.Path:
    """The HTML report next to copies of the text dump's files (the expected programs)."""
    for p in text_out.glob("*.tgir"):
        shutil.copy(p, out / p.name)
    res = _dump(out, "--format", "html", env=env)
    assert f"wrote {out / 'train_step.html'}" in res.stdout
    assert f"wrote {out / 'summary.txt'}" in res.stdout
    return out / "train_step.html"


def test_html_report_draws_every_node_with_graphviz(text_dump, tmp_path):
    _chromium()
    if shutil.which("dot") is None:
        pytest.skip("Graphviz `dot` not found: apt-get install graphviz (see .ci/run)")
    page = _html_dump(text_dump, tmp_path)
    static = page.read_text()
    assert static.count("<svg") == len(_expected_views(tmp_path))
    # open tab v1, select node 5 of the step program, sort the saved tensors by bytes
    dom = _chromium_dom(page, "#view=v1&node=v0_n5&sort=bytes", tmp_path / "profile")
    els = _check_every_node_drawn(dom, tmp_path, "graphviz")

    # click-through: the node's source line is highlighted in the page's listing
    node = next(a for a in els.with_class("tg-node") if a.get("id") == "v0_n5")
    assert "tg-selected" in node["class"].split()
    assert node["data-line"] == "33"                  # loss = F.cross_entropy(model(x), y)
    hits = els.with_class("tg-hit")
    assert [h["id"] for h in hits] == [f"src-{node['data-file']}-L33"]
    sections = {a["data-view"]: a for t, a in els.items if t == "section"}
    assert "hidden" not in sections["v0"] and "hidden" in sections["v1"]   # the node's tab

    # sorting: the saved-tensor table came in program order; the script sorted it by bytes
    def byte_column(text):
        cells = [a for a in _Elements(text).items if a[0] == "td" and "data-value" in a[1]]
        return [int(a["data-value"]) for _, a in cells]
    before, after = byte_column(static), byte_column(dom)
    assert after == sorted(before, reverse=True) and before != after


def test_html_report_builtin_layout_without_graphviz(text_dump, tmp_path):
    """With `dot` hidden from PATH the report draws with its own layered layout."""
    _chromium()
    bin_dir = os.path.dirname(sys.executable)
    if os.path.exists(os.path.join(bin_dir, "dot")):
        pytest.skip("Graphviz is installed next to the Python interpreter")
    page = _html_dump(text_dump, tmp_path, env=dict(os.environ, PATH=bin_dir))
    dom = _chromium_dom(page, "#node=v2_n3", tmp_path / "profile")
    els = _check_every_node_drawn(dom, tmp_path, "builtin")
    node = next(a for a in els.with_class("tg-node") if a.get("id") == "v2_n3")
    assert "tg-selected" in node["class"].split()
    assert [h["id"] for h in els.with_class("tg-hit")] == [f"src-{node['data-file']}-L33"]


def test_summary_txt(text_dump):
    text = (text_dump / "summary.txt").read_text()
    lines = text.splitlines()
    assert lines[0].split() == ["program", "nodes", "inputs", "outputs", "regions", "saved",
                                "bytes", "est.", "FLOPs"]
    step = lines[1].split()
    assert step[0] == "train_step"
    assert int(step[1]) == len(parse((text_dump / "train_step.tgir").read_text()).nodes)
    # 2*M*N*K per matmul: forward x@W1.T and h@W2.T, backward dW2, dh and dW1 (no dx):
    # 2 * 2*64*128*64 + 3 * 2*64*10*128 = 2,588,672 in the step, 1,376,256 in its backward
    assert "  batched_matmul           matmul              5      2,588,672" in text
    assert "  batched_matmul           matmul              3      1,376,256" in text
    assert "== train_step backward (inlined, " in text and "nodes after each pass" in text
    assert "0. autodiff" in text and "6. fuse" in text
    assert "saved for backward (8 values, 35,328 bytes, program inputs not counted)" in text
    assert "examples/train_digits.py:33 (train_step): policy save_all" in text
