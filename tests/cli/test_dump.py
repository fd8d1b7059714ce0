"""`tracegrad dump` prints the traced step's IR with types and source lines."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _dump(*extra):
    cmd = [sys.executable, "-m", "tracegrad.cli", "dump", "examples/train_digits.py::train_step",
           *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_dump_train_step_prints_typed_ir_with_source_lines():
    res = _dump()
    assert res.returncode == 0, res.stderr
    text = res.stdout
    assert text.startswith("graph @train_step(%0: f32[64,64], %1: i64[64]")
    # forward matmul, the inlined backward, and the SGD update are one program
    assert re.search(r"= batched_matmul\(%0, %\d+\)\s+# #\d+, examples/train_digits.py:\d+ "
                     r"\(train_step\)", text)
    assert "take_backward" in text and "bwd of #" in text
    assert text.rstrip().endswith("}")
    assert "return " in text


def test_dump_with_args_spec_uses_those_shapes():
    res = _dump("--args", "f32[8,64], i64[8]")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("graph @train_step(%0: f32[8,64], %1: i64[8]")


def test_dump_bad_target_is_a_clear_error():
    res = subprocess.run([sys.executable, "-m", "tracegrad.cli", "dump", "nope.py::f"],
                         cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "no such script" in res.stderr


def test_dump_formats_dot_and_json(tmp_path):
    import json
    res = _dump("--format", "json", "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "train_step.json").read_text())
    assert doc["name"] == "train_step" and doc["inputs"][0]["type"] == "f32[64,64]"
    assert any(n["op"] == "batched_matmul" for n in doc["nodes"])
    res = _dump("--format", "dot", "-o", str(tmp_path))
    dot = (tmp_path / "train_step.dot").read_text()
    assert dot.startswith('digraph "train_step" {') and dot.rstrip().endswith("}")
    assert dot.count("shape=box") == len(doc["nodes"])


def test_dump_after_each_pass_writes_pass_files(tmp_path):
    res = _dump("--after-each-pass", "-o", str(tmp_path))
    assert res.returncode == 0, res.stderr
    names = [p.name for p in tmp_path.iterdir()]
    assert "train_step.tgir" in names
    assert any(n.endswith("_simplify.tgir") for n in names)
