"""TRACEGRAD_DUMP writes every program (and each pass) that parses back; TRACEGRAD_LOG logs."""
import pathlib
import subprocess
import sys

from tracegrad.ir import parse

SCRIPT = """
import tracegrad as tg
w = tg.tensor([1.0, 2.0], requires_grad=True)
(w * w).sum().backward()
f = tg.compile(lambda x: (x * w).sum())
f(tg.ones(2))
f(tg.ones(2, 2))
"""


def test_dump_env_writes_programs_passes_and_reasons(tmp_path):
    env = {"TRACEGRAD_DUMP": str(tmp_path / "dump"), "TRACEGRAD_LOG": "recompiles",
           "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    files = sorted(p.name for p in (tmp_path / "dump").iterdir())
    backward = [f for f in files if f.startswith("backward_")]
    assert any(f.endswith("_autodiff.tgir") for f in backward)
    assert any(f.endswith("_partition.tgir") for f in backward)
    assert any(f.endswith("_fuse.tgir") for f in backward)
    steps = [f for f in files if f.startswith("_lambda_") and f.endswith(".tgir")]
    assert len(steps) == 2                       # the shape change recompiled
    whys = [(tmp_path / "dump" / f).read_text() for f in files if f.endswith(".why.txt")]
    assert any("first call" in w for w in whys)
    assert any("argument x: shape (2,) -> (2, 2)" in w for w in whys)
    for f in files:
        if f.endswith(".tgir"):
            parse((tmp_path / "dump" / f).read_text())   # every dump parses back
    assert "tracegrad.compile: compiling <lambda>" in res.stderr
