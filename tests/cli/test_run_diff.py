"""`tracegrad run` and `tracegrad diff` on dumped programs."""
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import engine
from tracegrad.backends import interpreter
from tracegrad.ir import print_graph

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "tracegrad.cli", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def _backward_program(tmp_path):
    engine.clear_cache()
    w = tg.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3) / 7, requires_grad=True)
    x = tg.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2))
    (x @ w).tanh().sum().backward()
    (prog,) = engine._cache.values()
    path = tmp_path / "bwd.tgir"
    path.write_text(print_graph(prog.graph) + "\n")
    return prog, path


@pytest.mark.parametrize("executor", ["interpreter", "jax"])
def test_run_matches_in_process_outputs(tmp_path, executor):
    """`tracegrad run` of a dumped backward program on an executor gives what the engine
    gives running the cached program in this process on that executor."""
    prog, path = _backward_program(tmp_path)
    g = prog.graph
    rng = np.random.default_rng(0)
    ins = [rng.standard_normal(v.shape).astype(v.dtype.numpy) for v in g.inputs]
    np.savez(tmp_path / "in.npz", *ins)
    res = _cli("run", str(path), "--inputs", str(tmp_path / "in.npz"), "--executor", executor,
               "--save", str(tmp_path / "out.npz"))
    assert res.returncode == 0, res.stderr
    assert "output 0: f32[2,3]" in res.stdout
    with np.load(tmp_path / "out.npz") as out:
        got = [out[f"arr_{i}"] for i in range(len(g.outputs))]
    tg.set_executor(executor)
    expected = prog.run_arrays(ins)
    assert len(expected) == len(got) == len(g.outputs)
    for a, b in zip(expected, got):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-5, atol=1e-6)
    for a, b in zip(interpreter.run(g, ins), got):   # and the reference interpreter
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_run_check_nan_names_the_node_and_line(tmp_path):
    path = tmp_path / "nan.tgir"
    path.write_text("graph @f(%0: f32[3]) {\n"
                    "  %1: f32[3] = log(%0)  # #0, model.py:7 (step)\n"
                    "  return %1\n}\n")
    np.savez(tmp_path / "in.npz", np.array([1.0, -1.0, 2.0], np.float32))
    res = _cli("run", str(path), "--inputs", str(tmp_path / "in.npz"), "--check-nan")
    assert res.returncode == 1
    assert "log" in res.stdout and "model.py:7 (step)" in res.stdout


def test_bad_paths_and_malformed_ir_exit_2_with_one_line(tmp_path):
    res = _cli("run", str(tmp_path / "missing.tgir"))
    assert res.returncode == 2 and res.stderr.startswith("tracegrad: error: cannot read")
    bad = tmp_path / "bad.tgir"
    bad.write_text("graph @f(%0: f32[2]) {\n  %1: f32[2] = nope(%0)\n}\n")
    res = _cli("run", str(bad))
    assert res.returncode == 2 and "unknown op 'nope'" in res.stderr
    assert "Traceback" not in res.stderr


def test_diff_reports_structure(tmp_path):
    a = tmp_path / "a.tgir"
    b = tmp_path / "b.tgir"
    a.write_text("graph @f(%0: f32[3]) {\n  %1: f32[3] = exp(%0)\n  return %1\n}\n")
    b.write_text("graph @f(%0: f32[3]) {\n  %1: f32[3] = exp(%0)\n  %2: f32[3] = neg(%1)\n"
                 "  return %2\n}\n")
    res = _cli("diff", str(a), str(b))
    assert res.returncode == 1
    assert "nodes: 1 -> 2" in res.stdout and "neg: 0 -> 1" in res.stdout
    assert "+  %2: f32[3] = neg(%1)" in res.stdout
    same = _cli("diff", str(a), str(a))
    assert same.returncode == 0 and "structurally equal" in same.stdout


def test_help_has_examples(capsys):
    from tracegrad.cli import main
    for args in (["--help"], ["run", "--help"], ["diff", "--help"], ["dump", "--help"]):
        with pytest.raises(SystemExit) as info:
            main(args)
        out = capsys.readouterr().out
        command = args[0] if args[0] != "--help" else "dump"
        assert info.value.code == 0 and re.search(rf"examples?:\s+tracegrad {command} ", out), out
        if args[0] == "dump":
            assert "--format html" in out and "{text,dot,json,html}" in out
