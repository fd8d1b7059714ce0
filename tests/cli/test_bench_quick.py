"""`python -m benchmarks --quick` runs end to end (a smoke run, no timing assertions).

The runner is started with ``--no-torch``: tests never import torch, even where the
``bench`` extra is installed.
"""
import json
import math
import pathlib
import subprocess
import sys

import pytest

from benchmarks import harness

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_quick_benchmark_run_writes_records_table_and_markdown(tmp_path):
    out, md = tmp_path / "bench.json", tmp_path / "perf.md"
    md.write_text(f"# Perf\n\nbefore\n\n{harness.BEGIN}\nstale\n{harness.END}\n\nafter\n")
    res = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--no-torch",
                          "--json", str(out), "--markdown", str(md)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    records = json.loads(out.read_text())
    rows = [r for r in records if r["workload"] != "targets"]
    for r in rows:
        assert set(harness.BASE) <= set(r), r
    impls = {(r["workload"], r["impl"]) for r in rows}
    assert {("mlp", "tg.compile"), ("mlp", "jax.jit"), ("mlp", "tracegrad eager"),
            ("mlp", "interpreter")} <= impls
    assert not any("torch" in impl for _, impl in impls)
    mlp = {r["impl"]: r for r in rows if r["workload"] == "mlp"}
    assert mlp["jax.jit"]["ratio_to_jax"] == 1.0 and mlp["jax.jit"]["median_ms"] > 0
    assert math.isclose(mlp["tg.compile"]["ratio_to_jax"],
                        mlp["tg.compile"]["median_ms"] / mlp["jax.jit"]["median_ms"])
    # the runner refuses to time implementations whose first losses disagree
    losses = [r["first_loss"] for r in mlp.values()]
    assert max(losses) - min(losses) <= 1e-4 * abs(losses[0])
    per_op = {r["impl"]: r for r in rows if r["workload"] == "per_op"}
    assert per_op["jax.grad eager"]["ratio_to_jax"] == 1.0
    op = per_op["tracegrad eager"]
    assert op["us_per_op"] > 0 and math.isclose(
        op["us_per_op"], op["us_per_op_forward"] + op["us_per_op_backward"])
    scaling = [r for r in rows if r["workload"] == "scaling" and r["impl"] != "fit"]
    assert [r["tape_nodes"] for r in scaling] == sorted(r["tape_nodes"] for r in scaling)
    assert all(r["backward_nodes"] > r["tape_nodes"] for r in scaling)
    fit = next(r for r in rows if r["workload"] == "scaling" and r["impl"] == "fit")
    assert 0 < fit["growth_exponent"] < 3
    mem = {r["impl"]: r for r in rows if r["workload"] == "memory:mlp"}
    assert 0 < mem["tracegrad min_bytes"]["saved_bytes"] <= mem["tracegrad save_all"]["saved_bytes"]
    assert mem["tg.compile"]["xla_temp_bytes"] > 0 and mem["jax.jit"]["xla_temp_bytes"] > 0
    assert {("dispatch:fn", "tg.compile"), ("dispatch:step", "jax.jit")} <= impls
    checks = [r for r in records if r["workload"] == "targets"]
    assert {c["target"] for c in checks} >= {"mlp: tg.compile / jax.jit step (floor)",
                                            "scaling: growth exponent of CPU time"}
    assert all(c["met"] == (c["value"] <= c["limit"]) for c in checks)
    assert "x jax" in res.stdout and "targets" in res.stdout
    assert any(mark in res.stdout for mark in "✓✗")
    text = md.read_text()
    assert text.startswith("# Perf\n\nbefore\n\n") and text.endswith("\n\nafter\n")
    assert "stale" not in text and "| mlp | tg.compile |" in text and text.count(harness.BEGIN) == 1


def test_targets_compare_ratios_with_their_limits():
    recs = [harness.record("mlp", "tg.compile", [0.012], first_call_s=3.0),
            harness.record("mlp", "jax.jit", [0.010], first_call_s=1.0),
            harness.record("mlp", "torch eager", [0.020]),
            harness.record("per_op", "tracegrad eager", [1e-3], us_per_op=6.0),
            harness.record("per_op", "jax.grad eager", [2e-3], us_per_op=9.0),
            harness.record("per_op", "torch eager", [1e-3], us_per_op=5.0)]
    harness.add_ratios(recs)
    assert recs[0]["ratio_to_jax"] == 1.2 and recs[3]["ratio_to_jax"] == 0.5
    got = {c["target"]: (round(c["value"], 6), c["met"]) for c in harness.targets(recs)}
    assert got == {"mlp: tg.compile / jax.jit step (floor)": (1.2, False),
                   "mlp: tg.compile / fastest torch step (goal)": (0.6, True),
                   "mlp: tg.compile / jax.jit first call": (3.0, False),
                   "per_op: tracegrad eager / torch eager (fwd+bwd per op)": (1.2, False)}


def test_write_markdown_appends_a_block_when_markers_are_missing(tmp_path):
    md = tmp_path / "p.md"
    md.write_text("# Title\n")
    harness.write_markdown(str(md), "table 1")
    harness.write_markdown(str(md), "table 2")
    assert md.read_text() == f"# Title\n\n{harness.BEGIN}\ntable 2\n{harness.END}\n"
    harness.write_markdown(str(md), "one core", name="1 cpu")   # a second, named block
    harness.write_markdown(str(md), "one core again", name="1 cpu")
    begin, end = harness.markers("1 cpu")
    assert md.read_text() == (f"# Title\n\n{harness.BEGIN}\ntable 2\n{harness.END}\n\n"
                              f"{begin}\none core again\n{end}\n")


def test_cnn_targets_compare_with_torch_eager():
    recs = [harness.record("cnn", "tg.compile", [0.050]),
            harness.record("cnn", "tracegrad eager", [0.080]),
            harness.record("cnn", "jax.jit", [0.100]),
            harness.record("cnn", "torch eager", [0.040]),
            harness.record("cnn", "torch.compile", [0.025])]
    harness.add_ratios(recs)
    got = {c["target"]: (round(c["value"], 6), c["met"]) for c in harness.targets(recs)}
    assert got == {"cnn: tg.compile / jax.jit step (floor)": (0.5, True),
                   "cnn: tg.compile / fastest torch step (goal)": (2.0, False),
                   "cnn: tg.compile / torch eager step": (1.25, False),
                   "cnn: tracegrad eager / torch eager step": (2.0, False)}


def test_program_targets_compare_eager_with_torch_eager():
    recs = [harness.record("mnist", "tracegrad eager", [0.060]),
            harness.record("mnist", "torch eager", [0.040]),
            harness.record("dcgan", "tracegrad eager", [0.020]),
            harness.record("dcgan", "torch eager", [0.040]),
            harness.record("nanogpt", "tracegrad eager", [0.080]),   # programs_more: the same
            harness.record("nanogpt", "tg.compile", [0.030]),
            harness.record("nanogpt", "torch eager", [0.040])]
    harness.add_ratios(recs)   # these workloads' ratio column is to torch eager
    assert [round(r["ratio_to_jax"], 6) for r in recs] == [1.5, 1.0, 0.5, 1.0, 2.0, 0.75, 1.0]
    got = {c["target"]: (round(c["value"], 6), c["met"]) for c in harness.targets(recs)}
    assert got == {"mnist: tracegrad eager / torch eager step": (1.5, True),
                   "dcgan: tracegrad eager / torch eager step": (0.5, True),
                   "nanogpt: tracegrad eager / torch eager step": (2.0, False)}


def test_saved_bytes_targets():
    # issue 17: the MLP against torch eager's count, the transformer against torch.compile's
    recs = [harness.record("memory:mlp", "tracegrad min_bytes", saved_bytes=2_107_392),
            harness.record("memory:mlp", "torch eager", saved_bytes=2_107_396),
            harness.record("memory:transformer", "tracegrad min_bytes", saved_bytes=90),
            harness.record("memory:transformer", "torch eager", saved_bytes=200),
            harness.record("memory:transformer", "torch.compile", saved_bytes=100)]
    got = {c["target"]: (round(c["value"], 6), c["met"]) for c in harness.targets(recs)}
    assert got == {"memory:mlp: saved bytes / torch eager's": (0.999998, True),
                   "memory:transformer: saved bytes / torch.compile's": (0.9, False)}


def test_every_program_is_a_runner_workload():
    from benchmarks import __main__ as runner
    from benchmarks import programs
    assert {"mnist", "dcgan", "resnet", "mingpt", "vae", "makemore", "word_lm",
            "nanogpt"} == set(programs.NAMES)
    assert set(programs.NAMES) <= set(runner.WORKLOADS)


# ~60 s on 2 cores: `make test-all`
@pytest.mark.slow
def test_more_programs_run_eagerly_and_compiled(monkeypatch):
    # the benchmark's configuration: no cross-check (nanogpt's compiled AdamW step differs
    # between the interpreter and jax by ~1e-5 in a parameter: the update divides by
    # sqrt(v) + 1e-8, with v ~ 0 after one step)
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    from benchmarks import programs, programs_more
    for name, spec in programs_more.MORE.items():
        recs = programs.run(name, 1, use_torch=False, batch=spec["quick_batch"])
        assert [r["impl"] for r in recs] == ["tracegrad eager", "tg.compile",
                                             "tracegrad eager, xla tensors"], recs
        assert all(r["median_ms"] and math.isfinite(r["first_loss"]) for r in recs), \
            [r.get("error") for r in recs]
        # the same initial state: deterministic steps give the same first loss compiled
        if spec["same_loss"]:
            assert math.isclose(recs[0]["first_loss"], recs[1]["first_loss"], rel_tol=1e-4)
            assert math.isclose(recs[0]["first_loss"], recs[2]["first_loss"], rel_tol=1e-4)


# ~40 s on 2 cores (two conv-net programs, eager): `make test-all`
@pytest.mark.slow
def test_mnist_and_dcgan_programs_run_eagerly_and_learn():
    from benchmarks import programs
    for name in ("mnist", "dcgan"):
        (rec,) = programs.run(name, 2, use_torch=False, batch=4, compile=False, device=False)
        assert rec["impl"] == "tracegrad eager" and rec["median_ms"] > 0
    import numpy as np
    import tracegrad as tg
    spec = programs.PROGRAMS["mnist"]
    tg.manual_seed(0)
    model, step = spec["build"](tg, 8)
    data = [tg.tensor(a) for a in spec["data"](np.random.default_rng(1), 8)]
    losses = [float(step(*data).item()) for _ in range(6)]   # Adadelta (lr 1.0), one batch
    assert math.isfinite(losses[0]) and losses[-1] < losses[0]
