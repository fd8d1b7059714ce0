"""Workloads 1, 2, the CNN and the LSTM language model: a full SGD training step (forward, backward, update) per implementation.

Implementations: ``tg.compile`` (the whole step, one XLA program),
``tracegrad eager`` (tape + cached backward program), ``jax.jit`` (hand-written
value_and_grad + the same update, parameters donated: the reference),
``torch eager`` and ``torch.compile`` (when torch is installed: the ``bench``
extra), and ``interpreter`` (``tg.compile`` on the NumPy interpreter, for
reference: timed after the others, not interleaved, fewer steps).

Every implementation starts from the tracegrad model's initial weights and
trains on the same batch; the first step's loss must agree across all of them
(relative 1e-4) before anything is timed.  ``first_call_s`` is the first
step's wall time: trace + compile for the compiled ones; ``second_call_s`` the
second's (a ``tg.compile`` step retraces once its parameters have ``.grad``
tensors, and reuses the executable when the program is the same).  ``cpu_ms`` is the
median process CPU time of a step (all threads): the work done, which a
shared machine's load does not inflate the way it inflates wall time (but
busy-waiting threads, e.g. OpenMP's in PyTorch, count as work).
"""
from __future__ import annotations

import math
import time

import numpy as np

import tracegrad as tg

from . import jax_models, models, torch_models
from .harness import (BF16_LOSS_TOL, DEVICE_COMPILE, DEVICE_EAGER, JAX, record,
                      time_interleaved, warm_eager)

LR = 0.01
DEVICE = "xla"   # the device-resident rows' device: jax's default one


def _ready(loss, step):
    """`loss` once the whole step has run: jax dispatches asynchronously, so the parameters'
    updates may still be running when the loss is ready (and would be timed in the next
    row of the interleaved loop)."""
    import jax
    jax.block_until_ready([loss._data] + [p._data for p in step.model.parameters()])
    return loss


def _mlp_loss(m, x, y):
    return tg.nn.functional.cross_entropy(m(x), y)


SPECS = {
    "mlp": dict(model=models.mlp, batch=models.mlp_batch, loss=_mlp_loss,
                jax=jax_models.mlp_loss, torch_model=torch_models.mlp,
                torch_loss=torch_models.mlp_loss),
    "cnn": dict(model=models.cnn, batch=models.cnn_batch, loss=_mlp_loss,
                jax=jax_models.cnn_loss, torch_model=torch_models.cnn,
                torch_loss=torch_models.mlp_loss),
    "transformer": dict(model=models.Transformer, batch=models.transformer_batch,
                        loss=models.transformer_loss, jax=jax_models.transformer_loss,
                        torch_model=torch_models.transformer,
                        torch_loss=torch_models.transformer_loss),
    "lstm": dict(model=models.LSTMLM, batch=models.lstm_batch, loss=models.lstm_loss,
                 jax=jax_models.lstm_loss, torch_model=torch_models.lstm,
                 torch_loss=torch_models.lstm_loss),
}


def _tg_model(spec, params):
    m = spec["model"]()
    with tg.no_grad():
        for name, p in m.named_parameters():
            p.copy_(tg.tensor(params[name]))
    return m


def _tg_step(spec, params, device=None):
    """A tracegrad training step ``step(*batch) -> loss`` on a fresh copy of the model (its
    parameters on `device` when given: "xla", device-resident)."""
    model = _tg_model(spec, params)
    if device is not None:
        model.to(device)
    opt = tg.optim.SGD(model.parameters(), lr=LR)

    def step(*batch):
        opt.zero_grad()
        loss = spec["loss"](model, *batch)
        loss.backward()
        opt.step()
        return loss
    step.model = model   # the device rows wait for its parameters (`_ready`)
    return step


def _jax_step(spec, params, data):
    import jax
    import jax.numpy as jnp
    fn = jax_models.sgd_step(spec["jax"], LR)
    batch = [jnp.asarray(t.numpy()) for t in data]
    state = {"p": {k: jnp.asarray(v) for k, v in params.items()}}

    def step():
        loss, state["p"] = fn(state["p"], *batch)
        return jax.block_until_ready(loss)
    return step, fn, state, batch


def _torch_steps(spec, params, data, compiled: bool):
    import torch
    out = {}
    batch = torch_models.as_torch([t.numpy() for t in data])
    for impl in ("torch eager", "torch.compile") if compiled else ("torch eager",):
        model = spec["torch_model"]()
        torch_models.load_params(model, params)
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        loss_fn = spec["torch_loss"]
        if impl == "torch.compile":   # forward + backward by inductor; the update stays eager
            loss_fn = torch.compile(loss_fn)

        def step(model=model, opt=opt, loss_fn=loss_fn):
            opt.zero_grad()
            loss = loss_fn(model, *batch)
            loss.backward()
            opt.step()
            return loss
        out[impl] = step
    return out


def _first(step) -> tuple[float, float]:
    t = time.perf_counter()
    loss = step()
    return time.perf_counter() - t, float(loss.item() if hasattr(loss, "item") else loss)


def run(name: str, steps: int, *, use_torch: bool, torch_compile: bool,
        interpreter: bool = True, batch: int | None = None) -> list[dict]:
    """Records of workload `name`; `batch` overrides the batch size (--quick)."""
    spec = SPECS[name]
    tg.manual_seed(0)
    params = jax_models.params_of(spec["model"]())
    data = spec["batch"]() if batch is None else spec["batch"](batch=batch)
    eager = _tg_step(spec, params)
    compiled = tg.compile(_tg_step(spec, params))
    jstep = _jax_step(spec, params, data)[0]
    # the same compiled step with the model and batch on jax's device: state stays in XLA
    # buffers between calls, donated (backends/device_arrays.py); waited for, as jax's row
    # and eagerly: each op its jitted jax kernel, the backward program on jax
    device_step = _tg_step(spec, params, DEVICE)
    on_device = tg.compile(device_step)
    eager_device = _tg_step(spec, params, DEVICE)
    ddata = tuple(d.to(DEVICE) for d in data)
    fns = {"tg.compile": lambda: compiled(*data), "tracegrad eager": lambda: eager(*data),
           JAX: jstep, DEVICE_COMPILE: lambda: _ready(on_device(*ddata), device_step),
           DEVICE_EAGER: lambda: _ready(eager_device(*ddata), eager_device)}
    if use_torch:
        fns.update(_torch_steps(spec, params, data, torch_compile))
    interp = None
    if interpreter:
        interp_step = tg.compile(_tg_step(spec, params), executor="interpreter")
        interp = (lambda: interp_step(*data))
    first = {k: _first(f) for k, f in fns.items()}
    if interp is not None:
        first["interpreter"] = _first(interp)
    ref = first[JAX][1]
    bad = {k: v[1] for k, v in first.items() if not math.isclose(v[1], ref, rel_tol=1e-4)}
    if bad:
        raise RuntimeError(f"{name}: first-step losses disagree with jax.jit's {ref}: {bad}")
    second, warm = {}, {}
    for k, f in fns.items():   # warm-up (the eager backward program goes to jax once hot)
        second[k] = _first(f)[0]
        if k == "tracegrad eager":
            warm[k] = 2 + warm_eager(f)
        else:
            f()
    cpu: dict = {}
    samples = time_interleaved(fns, steps, cpu)
    if interp is not None:
        interp()
        icpu: dict = {}
        samples["interpreter"] = time_interleaved({"i": interp}, max(3, steps // 6), icpu)["i"]
        cpu["interpreter"] = icpu["i"]
    return [record(name, k, v, first_call_s=first[k][0], first_loss=first[k][1],
                   second_call_s=second.get(k), cpu_ms=1e3 * float(np.median(cpu[k])),
                   warmup_calls=warm.get(k))
            for k, v in samples.items()]


# ---- workload transformer_bf16: the transformer step under bfloat16 autocast (issue 17) -------
def run_bf16(steps: int, *, use_torch: bool, torch_compile: bool) -> list[dict]:
    """Records of workload ``transformer_bf16``: the transformer's SGD step with the loss under
    bfloat16 autocast (float32 master weights and gradients) in ``tg.compile bf16``
    (``tg.autocast`` inside the compiled step), ``jax.jit bf16`` (the hand-written loss with its
    GEMMs in bfloat16, float32 accumulation: jax_models.transformer_loss), ``torch eager bf16``
    and ``torch.compile bf16`` (``torch.autocast`` inside the compiled loss); and, for the
    speed-up in the same interleaved run, the float32 ``tg.compile fp32`` and ``torch.compile
    fp32`` steps.  Each first loss must be within `BF16_LOSS_TOL` (relative) of the float32 jax
    loss (``fp32_loss``; ``loss_rel_diff`` in the records) before anything is timed.

    Raises:
        RuntimeError: a first-step loss outside the tolerance.
    """
    import jax
    spec = SPECS["transformer"]
    tg.manual_seed(0)
    params = jax_models.params_of(spec["model"]())
    data = spec["batch"]()
    bf16 = tg.compile(_tg_step(dict(spec, loss=models.transformer_loss_bf16), params))
    fp32 = tg.compile(_tg_step(spec, params))
    jbf16, _, _, jbatch = _jax_step(dict(jax=jax_models.transformer_loss_bf16), params, data)
    fp32_loss = float(jax.jit(jax_models.transformer_loss)(
        {k: jax.numpy.asarray(v) for k, v in params.items()}, *jbatch))
    fns = {"tg.compile bf16": lambda: bf16(*data), "jax.jit bf16": jbf16}
    if use_torch:
        bf = dict(spec, torch_loss=torch_models.transformer_loss_bf16)
        for impl, f in _torch_steps(bf, params, data, torch_compile).items():
            fns[impl + " bf16"] = f
    fns["tg.compile fp32"] = lambda: fp32(*data)
    if use_torch and torch_compile:
        fns["torch.compile fp32"] = _torch_steps(spec, params, data, True)["torch.compile"]
    first = {k: _first(f) for k, f in fns.items()}
    diff = {k: abs(v[1] - fp32_loss) / abs(fp32_loss) for k, v in first.items()}
    bad = {k: first[k][1] for k, d in diff.items() if d > BF16_LOSS_TOL}
    if bad:
        raise RuntimeError(f"transformer_bf16: first-step losses differ from the float32 "
                           f"jax loss {fp32_loss} by more than {BF16_LOSS_TOL} (relative): {bad}")
    second = {k: _first(f)[0] for k, f in fns.items()}
    for f in fns.values():   # one more warm-up call
        f()
    cpu: dict = {}
    samples = time_interleaved(fns, steps, cpu)
    return [record("transformer_bf16", k, v, first_call_s=first[k][0], first_loss=first[k][1],
                   fp32_loss=fp32_loss, loss_rel_diff=diff[k], second_call_s=second[k],
                   cpu_ms=1e3 * float(np.median(cpu[k])))
            for k, v in samples.items()]
