"""The experiments behind docs/performance.md: python -m benchmarks.experiments NAME [--reps N].

Each experiment times variants of one computation interleaved in one process and
prints, per variant, the median wall time and the median process CPU time (all
threads) with their ratios to the first variant.  On a shared machine the CPU
time is the steadier figure for single-process work; the wall time is what a
user waits.  ``--cpus 1`` pins the process to one core (per-core comparisons).

    floor        tg's transformer training-step program through the jax lowering
                 against the hand-written jax value_and_grad, both on device
                 arrays (no transfers, no donation): the programs alone
    flags        XLA CPU options (``jax.jit(compiler_options=...)``) on tg's
                 transformer step
    attention    the hand-written jax step with explicit attention against
                 ``jax.nn.dot_product_attention``
    donation     ``tg.compile`` steps with ``donate=True``/``False`` against the
                 hand-written jax step (MLP, batch 16 and 256)
    gemm         PyTorch (MKL) against XLA on the GEMM shapes of the transformer
    malloc       the transformer step with glibc's default allocator settings
                 against ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=...``
                 (each in a fresh process)
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from ._cpus import early_cpus, pin

_PINNED = early_cpus(sys.argv[1:]) if __name__ == "__main__" else None
if _PINNED:   # before NumPy starts OpenBLAS's threads
    pin(_PINNED)

import numpy as np  # noqa: E402


def _time(variants: dict, reps: int) -> None:
    import jax
    for f in variants.values():
        jax.block_until_ready(f())
        jax.block_until_ready(f())
    wall = {k: [] for k in variants}
    cpu = {k: [] for k in variants}
    for _ in range(reps):
        for k, f in variants.items():
            c, t = time.process_time(), time.perf_counter()
            jax.block_until_ready(f())
            wall[k].append(time.perf_counter() - t)
            cpu[k].append(time.process_time() - c)
    w = {k: 1e3 * float(np.median(v)) for k, v in wall.items()}
    c = {k: 1e3 * float(np.median(v)) for k, v in cpu.items()}
    ref = next(iter(variants))
    for k in variants:
        print(f"  {k:<46} wall {w[k]:8.2f} ms (min {1e3 * min(wall[k]):8.2f}) "
              f"x{w[k] / w[ref]:5.2f} | cpu {c[k]:8.2f} ms x{c[k] / c[ref]:5.2f}")


def _tg_program(name: str = "transformer", batch=None):
    """The traced training-step program of a benchmark model and its inputs (device arrays)."""
    import jax
    import jax.numpy as jnp
    import tracegrad as tg
    from . import jax_models, training
    spec = training.SPECS[name]
    tg.manual_seed(0)
    params = jax_models.params_of(spec["model"]())
    data = spec["batch"]() if batch is None else spec["batch"](batch=batch)
    step = tg.compile(training._tg_step(spec, params))
    step(*data)
    step(*data)
    entry = next(e for b in step._cache.values() for e in b if e.guard_failure() is None)
    arrays = ([t._data for t in data] + [r()._data for r, *_ in entry.lifted]
              + list(entry.trace.constants))
    with jax.enable_x64(True):
        inputs = [jnp.asarray(a) for a in arrays]
    return entry.graph, inputs, spec, params, data


def _jit_graph(g, inputs, **options):
    """``jax.jit`` of graph `g` through jax_backend's lowering; a thunk calling it."""
    import jax
    from tracegrad.backends import jax_backend
    fn = jax.jit(jax_backend._as_function(g), **options)

    def call():
        with jax.enable_x64(True):
            return fn(*inputs)
    return call


def _jax_value_and_grad(spec, params, data, loss=None):
    import jax
    import jax.numpy as jnp
    p = {k: jnp.asarray(v) for k, v in params.items()}
    b = [jnp.asarray(t.numpy()) for t in data]
    f = jax.jit(jax.value_and_grad(loss or spec["jax"]))
    return lambda: f(p, *b)


def floor(reps):
    g, inputs, spec, params, data = _tg_program()
    _time({"jax.jit value_and_grad (hand-written)": _jax_value_and_grad(spec, params, data),
           "tg step program (jax lowering)": _jit_graph(g, inputs)}, reps)


FLAGS = {
    "default": {},
    "xla_cpu_use_xnnpack=False": {"xla_cpu_use_xnnpack": False},
    "xla_cpu_use_onednn=True": {"xla_cpu_use_onednn": True},
    "xla_cpu_experimental_onednn_custom_call=True":
        {"xla_cpu_experimental_onednn_custom_call": True},
    "xnn graph fusion GREEDY":
        {"xla_cpu_experimental_xnn_graph_fusion_mode": "XNN_GRAPH_FUSION_MODE_GREEDY"},
    "xla_cpu_prefer_vector_width=512": {"xla_cpu_prefer_vector_width": 512},
    "xla_cpu_multi_thread_eigen=False": {"xla_cpu_multi_thread_eigen": False},
    "ynn fusion: DOT only":
        {"xla_cpu_experimental_ynn_fusion_type": "LIBRARY_FUSION_TYPE_DOT"},
    "xla_cpu_enable_fast_math=True": {"xla_cpu_enable_fast_math": True},
    "xla_cpu_use_fusion_emitters=False": {"xla_cpu_use_fusion_emitters": False},
    "concurrency-optimized scheduler":
        {"xla_cpu_enable_concurrency_optimized_scheduler": True},
}


def flags(reps):
    g, inputs, *_ = _tg_program()
    _time({k: _jit_graph(g, inputs, compiler_options=v) for k, v in FLAGS.items()}, reps)


def _loss_dpa(p, idx, targets, layers=2, heads=4):
    """jax_models.transformer_loss with jax.nn.dot_product_attention (causal)."""
    import jax
    import jax.numpy as jnp
    from .jax_models import _layer_norm
    b, t = idx.shape
    x = p["tok"][idx] + p["pos"][:t]
    d = x.shape[-1]
    for i in range(layers):
        q = f"blocks.{i}."
        h = _layer_norm(x, p[q + "ln1.weight"], p[q + "ln1.bias"])
        qkv = (h @ p[q + "qkv.weight"].T + p[q + "qkv.bias"]).reshape(b, t, 3, heads, d // heads)
        y = jax.nn.dot_product_attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2],
                                         is_causal=True).reshape(b, t, d)
        x = x + y @ p[q + "proj.weight"].T + p[q + "proj.bias"]
        h = _layer_norm(x, p[q + "ln2.weight"], p[q + "ln2.bias"])
        h = jax.nn.gelu(h @ p[q + "fc1.weight"].T + p[q + "fc1.bias"], approximate=True)
        x = x + h @ p[q + "fc2.weight"].T + p[q + "fc2.bias"]
    x = _layer_norm(x, p["ln.weight"], p["ln.bias"])
    logp = jax.nn.log_softmax((x @ p["head.weight"].T + p["head.bias"]).reshape(b * t, -1))
    return -jnp.mean(jnp.take_along_axis(logp, targets.reshape(-1)[:, None], axis=1))


def attention(reps):
    import tracegrad as tg
    from . import jax_models, training
    spec = training.SPECS["transformer"]
    tg.manual_seed(0)
    params = jax_models.params_of(spec["model"]())
    data = spec["batch"]()
    _time({"explicit masked softmax attention": _jax_value_and_grad(spec, params, data),
           "jax.nn.dot_product_attention": _jax_value_and_grad(spec, params, data, _loss_dpa)},
          reps)


def donation(reps):
    import tracegrad as tg
    from . import jax_models, training
    spec = training.SPECS["mlp"]
    for batch in (16, 256):
        print(f" MLP batch {batch}")
        tg.manual_seed(0)
        params = jax_models.params_of(spec["model"]())
        data = spec["batch"](batch=batch)
        variants = {"jax.jit step (donated)": training._jax_step(spec, params, data)[0]}
        for donate in (True, False):
            step = tg.compile(training._tg_step(spec, params), donate=donate)
            variants[f"tg.compile donate={donate}"] = (lambda s=step: s(*data)._data)
        _time(variants, reps)


def gemm(reps):
    import jax
    import jax.numpy as jnp
    import torch
    rng = np.random.default_rng(0)
    for m, k, n in ((1024, 256, 768), (1024, 256, 1024), (1024, 1024, 256), (1024, 256, 1000)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        ta, tb, ja, jb = torch.from_numpy(a), torch.from_numpy(b), jnp.asarray(a), jnp.asarray(b)
        mm = jax.jit(jnp.matmul)
        print(f" {m}x{k} @ {k}x{n} ({2 * m * k * n / 1e6:.0f} MFLOP)")
        _time({"torch.mm": lambda: torch.mm(ta, tb), "XLA dot": lambda: mm(ja, jb)}, reps)


def malloc(reps):
    env = dict(os.environ, MALLOC_MMAP_MAX_="0", MALLOC_TRIM_THRESHOLD_=str(1 << 40))
    for label, e in (("glibc defaults", os.environ), ("MALLOC_MMAP_MAX_=0, no trim", env)):
        print(f" {label} (fresh process):")
        subprocess.run([sys.executable, "-m", "benchmarks.experiments", "floor",
                        "--reps", str(reps)], env=e, check=True)


EXPERIMENTS = {f.__name__: f for f in (floor, flags, attention, donation, gemm, malloc)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.experiments",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("name", choices=sorted(EXPERIMENTS))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--cpus", type=int, help="pin the process to the first N CPUs")
    ns = ap.parse_args(argv)
    if ns.cpus and ns.cpus != _PINNED:
        pin(ns.cpus)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # as the runner (__main__.py)
    print(f"{ns.name} ({len(os.sched_getaffinity(0))} CPUs, {ns.reps} reps, interleaved):")
    EXPERIMENTS[ns.name](ns.reps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
