"""`tracegrad dump` prints the traced step's IR with types and source lines."""
import pathlib
import re
import subprocess
import sys

import pytest

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
    # the summary goes to stderr, so stdout is the program alone
    assert "est. FLOPs" in res.stderr and "saved for backward" in res.stderr


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


SCRIPT = """
import math

CONST = 3


def f(x):
    return x * 2


def g(x):
    if x.sum() > 0:
        return x
    return -x
"""


def _main_exit(capsys, *args):
    """Run the command in this process: (exit status, stderr lines)."""
    from tracegrad.cli import main
    with pytest.raises(SystemExit) as info:
        main(["dump", *args])
    return info.value.code, capsys.readouterr().err.strip().splitlines()


def test_dump_errors_are_one_line_with_status_2(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    (tmp_path / "taken").write_text("a file, not a folder")
    (tmp_path / "bad.py").write_text("x = 1 / 0\n")
    cases = [
        ([f"{script}::nope"], f"{script} defines no 'nope'; functions there: f"),
        ([f"{script}::CONST"], "'CONST' is a int, not a function"),
        ([f"{script}::f", "--args", "f33[2]"], "unknown dtype 'f33'"),
        ([f"{script}::f", "--args", "f32[2]", "-o", str(tmp_path / "taken")],
         "cannot create the output folder"),
        ([f"{script}::f"], "define example_args()"),
        ([f"{script}::f", "--args", "f32[2]", "--after-each-pass"], "give -o DIR"),
        ([f"{script}::f", "--args", "f32[2]", "--stage", "backward"],
         "returns nothing that needs a backward program"),
        # a graph break: the TraceError, on one line, with the user's line
        ([f"{script}::g", "--args", "f32[2]"], f"cannot be compiled at {script}:12 (g)"),
    ]
    for args, message in cases:
        code, lines = _main_exit(capsys, *args)
        assert code == 2 and len(lines) == 1, (args, lines)
        assert lines[0].startswith("tracegrad: error: ") and message in lines[0], lines[0]
    # an exception in the user's script: its own frames, then one error line; no tracegrad ones
    code, lines = _main_exit(capsys, f"{tmp_path / 'bad.py'}::f")
    assert code == 2 and lines[-1].endswith("raised ZeroDivisionError: division by zero")
    assert 'bad.py", line 1' in lines[0] and not any("cli.py" in ln for ln in lines)
