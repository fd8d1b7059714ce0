"""Compiled programs go through simplify and CSE (passes.optimize_program): the dump of a
compiled training step has no duplicate converts of one value and no identity reshapes,
shows its pass report, and the step computes what the eager step computes."""
import pathlib
import subprocess
import sys

import numpy as np

import tracegrad as tg
from tracegrad.ir import parse

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _redundant(g) -> list[str]:
    """Nodes simplify or CSE should have removed: a convert of a value already converted to
    the same dtype, a reshape/convert to the type it already has."""
    seen, found = set(), []
    for n in g.nodes:
        if n.op in ("reshape", "convert") and n.inputs[0].type == n.outputs[0].type:
            found.append(f"identity {n.op} to {n.outputs[0].type}")
        if n.op == "convert":
            key = (id(n.inputs[0]), n.attrs["dtype"])
            if key in seen:
                found.append(f"second convert of one value to {n.attrs['dtype']}")
            seen.add(key)
    return found


def test_dump_of_a_compiled_step_has_no_duplicate_converts_or_identity_reshapes():
    res = subprocess.run([sys.executable, "-m", "tracegrad.cli", "dump",
                          "examples/train_digits.py::train_step"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    g = parse(res.stdout)
    assert _redundant(g) == []
    assert sum(n.op == "convert" for n in g.nodes) >= 1   # the converts that differ remain
    # the summary carries the compiled pipeline's pass report: each pass, nodes before/after
    report = res.stderr.split("== train_step: passes\n", 1)[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in report[1:]] == ["prune", "simplify", "cse", "prune"]
    cse_line = next(line for line in report if line.split()[0] == "cse")
    before, after = (int(x) for x in cse_line.split()[2:5:2])
    assert f"removed={before - after}" in cse_line and before > after


def _mlp():
    tg.manual_seed(3)
    return tg.nn.Sequential(tg.nn.Linear(8, 16), tg.nn.Tanh(), tg.nn.Linear(16, 16),
                            tg.nn.ReLU(), tg.nn.Linear(16, 4))


def test_compiled_step_after_simplify_and_cse_matches_eager():
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((32, 8)).astype(np.float32), rng.integers(0, 4, 32))
               for _ in range(4)]
    runs = {}
    for mode in ("eager", "compiled"):
        model = _mlp()
        opt = tg.optim.Adam(model.parameters(), lr=0.01)

        def step(x, y):
            opt.zero_grad()
            loss = tg.nn.functional.cross_entropy(model(x).float(), y)
            loss.backward()
            opt.step()
            return loss

        run = tg.compile(step) if mode == "compiled" else step
        losses = [float(run(tg.tensor(x), tg.tensor(y)).item()) for x, y in batches]
        runs[mode] = losses, [p.detach().numpy() for p in model.parameters()]
        if mode == "compiled":
            program = run.programs[-1]
            assert _redundant(program.forward) == []
            assert [r.name for r in program.passes] == ["prune", "simplify", "cse", "prune"]
            assert program.passes[0].nodes_before >= program.passes[-1].nodes_after
    np.testing.assert_allclose(runs["compiled"][0], runs["eager"][0], rtol=1e-5)
    for a, e in zip(runs["compiled"][1], runs["eager"][1]):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)
