"""Workloads 3 (per-op overhead), 4 (compiler scaling) and 6 (dispatch of a cached call)."""
from __future__ import annotations

import gc
import math
import time

import numpy as np

import tracegrad as tg

from .harness import DEVICE_COMPILE as DEVICE, JAX, record, time_interleaved

CHAIN = 200   # elementwise ops per chain (workload 3)



def _chain(y):
    for i in range(CHAIN):
        y = y * 1.0001 if i % 2 else y + 0.5
    return y.sum()


def per_op(steps: int, use_torch: bool) -> list[dict]:
    """A chain of 200 elementwise ops on a 16-element tensor, then ``.sum().backward()``:
    µs per op forward, and backward (fwd+bwd time minus fwd time), per implementation.
    Eager jax differentiates with ``jax.grad`` (not jitted): its forward runs under the
    JVP trace, so its "backward" share is grad's time minus a plain forward."""
    import jax
    import jax.numpy as jnp
    x0 = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    x = tg.tensor(x0, requires_grad=True)
    xj = jnp.asarray(x0)
    grad = jax.grad(_chain)
    fns = {"tracegrad eager": (lambda: _chain(x), lambda: _chain(x).backward()),
           "jax.grad eager": (lambda: _chain(xj).block_until_ready(),
                              lambda: grad(xj).block_until_ready())}
    if use_torch:
        import torch
        xt = torch.tensor(x0, requires_grad=True)
        fns["torch eager"] = (lambda: _chain(xt), lambda: _chain(xt).backward())
    flat = {}
    for k, (fwd, both) in fns.items():
        flat[(k, "fwd")], flat[(k, "both")] = fwd, both
    for f in flat.values():   # warm-up: caches, the backward program's jax lowering
        for _ in range(4):
            f()
    samples = time_interleaved(flat, steps)
    out = []
    for k in fns:
        fwd_us = 1e6 * float(np.median(samples[(k, "fwd")])) / CHAIN
        both_us = 1e6 * float(np.median(samples[(k, "both")])) / CHAIN
        out.append(record("per_op", k, samples[(k, "both")], us_per_op=both_us,
                          us_per_op_forward=fwd_us, us_per_op_backward=both_us - fwd_us))
    return out


def _deep_mlp_loss(layers: int):
    """The tape of a deep MLP of small layers (8 wide, tanh), summed."""
    tg.manual_seed(0)
    net = tg.nn.Sequential(*[m for _ in range(layers) for m in (tg.nn.Linear(8, 8),
                                                               tg.nn.Tanh())])
    return net(tg.randn(4, 8)).sum()


def scaling(sizes: tuple[int, ...], repeats: int = 3) -> list[dict]:
    """Time to build (tape -> forward IR -> autodiff and the pass pipeline -> backward
    program, uncached) and lower (jax trace to StableHLO; XLA's own compile is not
    counted) the backward program of tapes of about `sizes` nodes.  The garbage the build
    leaves (its collection is deferred, see passes.manager.gc_paused) is collected inside
    the timed region.  The work is single-threaded Python, so its CPU time (process time)
    is what the exponent and the 5 s target use: on a shared machine the wall time (the
    median_ms column) also counts waiting for a core.  The growth exponent is the
    least-squares slope of log CPU time over log nodes; the fastest of `repeats` runs
    counts (the work is deterministic)."""
    import jax
    from tracegrad.autograd import engine
    from tracegrad.backends import jax_backend

    def tape(layers):
        loss = _deep_mlp_loss(layers)
        nodes = engine._collect([loss])
        return loss, nodes

    per_layer = len(tape(2)[1]) - len(tape(1)[1])
    fixed = len(tape(1)[1]) - per_layer
    out, points = [], []
    for n in sizes:
        loss, nodes = tape(max(1, round((n - fixed) / per_layer)))
        wiring = engine._Wiring(nodes, [loss], engine._leaves_and_retained(nodes, [loss]))
        best = None
        for _ in range(repeats):
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            prog = engine._build_program(nodes, wiring)
            t1 = time.perf_counter()
            specs = [jax.ShapeDtypeStruct(v.shape, v.dtype.numpy) for v in prog.graph.inputs]
            jax_backend.lower(prog.graph).stablehlo(specs)
            gc.collect(0)   # the young objects, all made by this build
            t2, c2 = time.perf_counter(), time.process_time()
            if best is None or c2 - c0 < best[0]:
                best = (c2 - c0, t2 - t0, t1 - t0, t2 - t1, len(prog.graph.nodes))
        cpu, wall, build, low, bwd_nodes = best
        points.append((len(nodes), cpu))
        out.append(record("scaling", f"{len(nodes)} nodes", [wall], tape_nodes=len(nodes),
                          backward_nodes=bwd_nodes, cpu_s=cpu, build_ms=1e3 * build,
                          lower_ms=1e3 * low))
    lx = np.log([p[0] for p in points])
    ly = np.log([p[1] for p in points])
    slope = float(np.polyfit(lx, ly, 1)[0]) if len(points) > 1 else math.nan
    last = float((ly[-1] - ly[-2]) / (lx[-1] - lx[-2])) if len(points) > 1 else math.nan
    out.append(record("scaling", "fit", growth_exponent=slope, exponent_last_decade=last,
                      largest_nodes=points[-1][0], largest_cpu_s=points[-1][1]))
    return out


def _repeat(f, k: int):
    def run():
        for _ in range(k):
            f()
    return run


def dispatch(steps: int, calls: int = 20) -> list[dict]:
    """A cached call on tiny inputs: ``tg.compile`` against ``jax.jit`` (µs per call).
    ``dispatch:fn`` is ``(a * b).sum()`` on 4-element tensors; ``dispatch:step`` a
    Linear(4, 2) SGD step on an 8x4 batch (guards on the lifted parameters, write-back of
    parameters and ``.grad``).  Each runs on host tensors and on "xla" tensors (their
    storage jax arrays: no conversion in or out, the step's state donated).  Each sample
    is `calls` calls; results are waited for."""
    import jax
    import jax.numpy as jnp
    from . import jax_models
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(4).astype(np.float32) for _ in range(2))
    tf = tg.compile(lambda u, v: (u * v).sum())
    jf = jax.jit(lambda u, v: (u * v).sum())
    ta, tb, ja, jb = tg.tensor(a), tg.tensor(b), jnp.asarray(a), jnp.asarray(b)

    # the same function on device-resident tensors ("xla": jax's default device, whose
    # arrays the program takes and returns as they are; backends/device_arrays.py)
    tf_dev = tg.compile(lambda u, v: (u * v).sum())
    da, db = ta.to("xla"), tb.to("xla")

    x = rng.standard_normal((8, 4)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    tx, ty = tg.tensor(x), tg.tensor(y)
    dx, dy = tx.to("xla"), ty.to("xla")

    def linear_step(device):
        tg.manual_seed(0)
        model = tg.nn.Linear(4, 2)
        if device is not None:
            model.to(device)
        opt = tg.optim.SGD(model.parameters(), lr=0.01)

        @tg.compile
        def tstep(u, v):
            opt.zero_grad()
            loss = ((model(u) - v) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, tstep
    model, tstep = linear_step(None)
    _, tstep_dev = linear_step("xla")

    def jloss(p, u, v):
        return jnp.mean((u @ p["weight"].T + p["bias"] - v) ** 2)
    jstep = jax_models.sgd_step(jloss, 0.01)
    state = {"p": {k: jnp.asarray(v) for k, v in jax_models.params_of(model).items()}}
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def jax_step():
        loss, state["p"] = jstep(state["p"], jx, jy)
        return loss.block_until_ready()

    fns = {("dispatch:fn", "tg.compile"): lambda: tf(ta, tb),
           ("dispatch:fn", DEVICE): lambda: tf_dev(da, db)._data.block_until_ready(),
           ("dispatch:fn", JAX): lambda: jf(ja, jb).block_until_ready(),
           ("dispatch:step", "tg.compile"): lambda: tstep(tx, ty),
           ("dispatch:step", DEVICE): lambda: tstep_dev(dx, dy)._data.block_until_ready(),
           ("dispatch:step", JAX): jax_step}
    first = {}
    for k, f in fns.items():
        t = time.perf_counter()
        f()
        first[k] = time.perf_counter() - t
    samples = time_interleaved({k: _repeat(f, calls) for k, f in fns.items()}, steps)
    return [record(w, impl, [s / calls for s in samples[(w, impl)]], first_call_s=first[(w, impl)],
                   us_per_call=1e6 * float(np.median(samples[(w, impl)])) / calls)
            for (w, impl) in fns]
