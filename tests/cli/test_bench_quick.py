"""`python -m benchmarks --quick` runs end to end (a smoke run, no timing assertions)."""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_quick_benchmark_run_writes_records(tmp_path):
    out = tmp_path / "bench.json"
    res = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--json", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    records = json.loads(out.read_text())
    impls = {(r["workload"], r["impl"]) for r in records}
    assert {("mlp", "tg.compile"), ("mlp", "jax.jit"), ("mlp", "tracegrad eager")} <= impls
    jax_row = next(r for r in records if r["workload"] == "mlp" and r["impl"] == "jax.jit")
    assert jax_row["ratio_to_jax"] == 1.0 and jax_row["median_ms"] > 0
    per_op = next(r for r in records if r["workload"] == "per_op")
    assert per_op["us_per_op_forward"] > 0
    mem = {r["workload"]: r for r in records if r["workload"].startswith("memory:")}
    assert mem["memory:mlp"]["saved_bytes"] <= mem["memory:mlp"]["save_all_bytes"]
    assert "workload" in res.stdout and "x jax" in res.stdout
