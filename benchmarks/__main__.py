"""The benchmark runner: python -m benchmarks [--quick] [--only NAME] [--json FILE].

Each workload runs under every available implementation in one process,
interleaved (A B A B ...), after a warm-up; the table shows medians with
min-max, and every figure's ratio to the hand-written JAX row of the same
workload. The first step's loss must agree across implementations before
anything is timed.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

import numpy as np

import tracegrad as tg

from . import jax_models, models

LR = 0.01


def _time_interleaved(fns: dict, steps: int) -> dict:
    samples = {k: [] for k in fns}
    for _ in range(steps):
        for k, f in fns.items():
            t = time.perf_counter()
            f()
            samples[k].append(time.perf_counter() - t)
    return {k: (1e3 * float(np.median(v)), 1e3 * min(v), 1e3 * max(v)) for k, v in samples.items()}


def _training(name, make_model, batch, loss_tg, loss_jax, steps):
    """tg.compile step, tg eager step, hand-written jax step; returns result records."""
    import jax
    tg.manual_seed(0)
    model = make_model()
    params = jax_models.params_of(model)
    opt = tg.optim.SGD(model.parameters(), lr=LR)
    data = batch()

    def eager_step(*b):
        opt.zero_grad()
        loss = loss_tg(model, *b)
        loss.backward()
        opt.step()
        return loss

    compiled = tg.compile(eager_step)
    jstep = jax_models.sgd_step(loss_jax, LR)
    jbatch = [jax.numpy.asarray(t.numpy()) for t in data]
    state = {"p": {k: jax.numpy.asarray(v) for k, v in params.items()}}

    def run_jax():
        loss, state["p"] = jstep(state["p"], *jbatch)
        return loss

    # first call latency, and agreement of the first step's loss
    t = time.perf_counter()
    first_jax = float(run_jax())
    jax_first = time.perf_counter() - t
    tg_model_state = [p.detach().numpy().copy() for p in model.parameters()]
    t = time.perf_counter()
    first_tg = compiled(*data).item()
    tg_first = time.perf_counter() - t
    for p, v in zip(model.parameters(), tg_model_state):   # same start for eager
        p.data = tg.tensor(v)
    first_eager = eager_step(*data).item()
    if not (math.isclose(first_tg, first_jax, rel_tol=1e-4)
            and math.isclose(first_eager, first_jax, rel_tol=1e-4)):
        raise RuntimeError(f"{name}: first-step losses disagree: tg.compile {first_tg}, "
                           f"eager {first_eager}, jax {first_jax}")
    fns = {"tg.compile": lambda: compiled(*data), "tracegrad eager": lambda: eager_step(*data),
           "jax.jit": lambda: jax.block_until_ready(run_jax())}
    for f in fns.values():
        f()
    times = _time_interleaved(fns, steps)
    first = {"tg.compile": tg_first, "jax.jit": jax_first, "tracegrad eager": None}
    return [dict(workload=name, impl=k, median_ms=m, min_ms=lo, max_ms=hi,
                 first_call_s=first[k]) for k, (m, lo, hi) in times.items()]


def per_op(steps):
    x = tg.tensor(np.random.default_rng(0).standard_normal(16).astype(np.float32),
                  requires_grad=True)

    def chain():
        y = x
        for i in range(200):
            y = y * 1.0001 if i % 2 else y + 0.5
        return y.sum()

    for _ in range(5):
        chain().backward()
    fwd = _time_interleaved({"f": chain}, steps)["f"][0]
    both = _time_interleaved({"fb": lambda: chain().backward()}, steps)["fb"][0]
    return [dict(workload="per_op", impl="tracegrad eager", median_ms=both, min_ms=None,
                 max_ms=None, first_call_s=None, us_per_op_forward=1e3 * fwd / 200,
                 us_per_op_backward=1e3 * (both - fwd) / 200)]


def saved_bytes():
    out = []
    tg.manual_seed(0)
    mlp = models.mlp()
    x, y = models.mlp_batch()
    tf = models.Transformer()
    idx, tgt = models.transformer_batch()
    for name, fn, args in (("mlp", lambda a, b: tg.nn.functional.cross_entropy(mlp(a), b),
                            (x, y)),
                           ("transformer", lambda a, b: models.transformer_loss(tf, a, b),
                            (idx, tgt))):
        r = tg.explain(fn, *args)
        out.append(dict(workload=f"memory:{name}", impl="tracegrad min_bytes",
                        saved_bytes=r.saved_bytes, save_all_bytes=r.save_all_bytes,
                        median_ms=None, min_ms=None, max_ms=None, first_call_s=None))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few steps: a smoke run (seconds)")
    ap.add_argument("--only", help="run one workload: mlp, transformer, per_op, memory")
    ap.add_argument("--json", help="write the records here")
    ns = ap.parse_args(argv)
    steps = 3 if ns.quick else 30
    records = []
    want = (lambda w: ns.only in (None, w))
    if want("mlp"):
        records += _training("mlp", models.mlp, models.mlp_batch,
                             lambda m, a, b: tg.nn.functional.cross_entropy(m(a), b),
                             jax_models.mlp_loss, steps)
    if want("transformer") and not ns.quick:
        records += _training("transformer", models.Transformer, models.transformer_batch,
                             models.transformer_loss, jax_models.transformer_loss, steps)
    if want("per_op"):
        records += per_op(steps)
    if want("memory"):
        records += saved_bytes()
    ref = {r["workload"]: r["median_ms"] for r in records if r["impl"] == "jax.jit"}
    for r in records:
        base = ref.get(r["workload"])
        r["ratio_to_jax"] = (r["median_ms"] / base) if base and r["median_ms"] else None
    print(f"{'workload':<20} {'impl':<22} {'median ms':>10} {'min-max ms':>17} "
          f"{'first s':>8} {'x jax':>6}  extra")
    for r in records:
        mm = (f"{r['min_ms']:.2f}-{r['max_ms']:.2f}" if r.get("min_ms") is not None else "")
        extra = {k: v for k, v in r.items() if k not in ("workload", "impl", "median_ms",
                                                        "min_ms", "max_ms", "first_call_s",
                                                        "ratio_to_jax")}
        med = f"{r['median_ms']:.2f}" if r["median_ms"] is not None else "-"
        first = f"{r['first_call_s']:.2f}" if r.get("first_call_s") else "-"
        ratio = f"{r['ratio_to_jax']:.2f}" if r.get("ratio_to_jax") else "-"
        print(f"{r['workload']:<20} {r['impl']:<22} {med:>10} {mm:>17} {first:>8} {ratio:>6}  "
              + ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in extra.items()))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(records, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
