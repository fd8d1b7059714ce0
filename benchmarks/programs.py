"""Ported PyTorch programs: tracegrad eager against torch eager (issue 17), and the runner
of every program (these two and programs_more.py's six: `PROGRAMS`, `NAMES`, `run`).

- ``mnist``: pytorch/examples' MNIST CNN training step: conv 1->32 3x3, ReLU, conv 32->64
  3x3, ReLU, max pool 2, dropout 0.25, flatten, Linear 9216->128, ReLU, dropout 0.5,
  Linear 128->10, log_softmax + nll_loss, Adadelta (lr 1.0); batch 64, 1x28x28.
- ``dcgan``: pytorch/examples' DCGAN step at 32x32 (nz 100, ngf = ndf = 32, batch 64):
  a generator of conv_transpose2d + BatchNorm + ReLU, a discriminator of strided conv +
  LeakyReLU (+ BatchNorm), BCE losses, one Adam update of each network per step.

Each program is written once against a torch-shaped namespace ``lib`` (``tracegrad`` or
``torch``) as ``build(lib, batch) -> (model, step)``, ``step(*data) -> loss`` one training
step, so the rows run the same code: ``tracegrad eager``, ``tg.compile`` (the whole step
compiled; when it does not compile the row says why) and ``torch eager``.  Every row starts
from the tracegrad model's state dict (parameters and buffers, by name).  Dropout and
sampling draw from each library's own stream, so the first-step check compares a forward in
``eval()`` mode; programs without randomness (``same_loss``) must also agree on the first
loss (relative 1e-4).
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .harness import DEVICE_EAGER, record, time_interleaved, warm_eager
from .training import DEVICE
from .programs_more import MORE


def _mnist_net(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = F.relu(self.conv2(F.relu(self.conv1(x))))
            x = self.dropout1(F.max_pool2d(x, 2))
            x = self.dropout2(F.relu(self.fc1(lib.flatten(x, 1))))
            return F.log_softmax(self.fc2(x), dim=1)
    return Net()


def _mnist(lib, batch: int):
    model = _mnist_net(lib)
    opt = lib.optim.Adadelta(model.parameters(), lr=1.0)

    def step(data, target):
        opt.zero_grad()
        loss = lib.nn.functional.nll_loss(model(data), target)
        loss.backward()
        opt.step()
        return loss
    return model, step


def _mnist_data(rng, batch):
    return [rng.standard_normal((batch, 1, 28, 28)).astype(np.float32),
            rng.integers(0, 10, batch)]


def _dcgan_nets(lib, nz=100, ngf=32, ndf=32, nc=3):
    nn = lib.nn
    gen = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2),
        nn.ReLU(),
        nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(),
        nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())
    disc = nn.Sequential(
        nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2),
        nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 4),
        nn.LeakyReLU(0.2),
        nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    return gen, disc


def _dcgan(lib, batch: int):
    gen, disc = _dcgan_nets(lib)
    opt_d = lib.optim.Adam(disc.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = lib.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = lib.nn.functional.binary_cross_entropy

    def step(real, noise):   # the example's order: D on real and fake, then G
        ones, zeros = lib.ones(real.shape[0]), lib.zeros(real.shape[0])
        fake = gen(noise)
        opt_d.zero_grad()
        d_loss = bce(disc(real).view(-1), ones) + bce(disc(fake.detach()).view(-1), zeros)
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = bce(disc(fake).view(-1), ones)
        g_loss.backward()
        opt_g.step()
        return g_loss
    return lib.nn.ModuleDict({"gen": gen, "disc": disc}), step


def _dcgan_data(rng, batch):
    return [rng.uniform(-1, 1, (batch, 3, 32, 32)).astype(np.float32),
            rng.standard_normal((batch, 100, 1, 1)).astype(np.float32)]


# name: the spec of programs_more.MORE (build, data, batch, probe, same_loss, quick_batch)
PROGRAMS = {
    "mnist": dict(build=_mnist, data=_mnist_data, batch=64, same_loss=False, quick_batch=8,
                  probe=lambda model, data: model(data[0])),
    "dcgan": dict(build=_dcgan, data=_dcgan_data, batch=64, same_loss=False, quick_batch=8,
                  probe=lambda whole, data: whole["disc"](whole["gen"](data[1]))),
    **MORE,
}
NAMES = tuple(PROGRAMS)   # the runner's workload names (benchmarks/__main__.py)


def _probe(lib, model, probe, data):
    """A forward value in eval mode (no dropout, no sampling, BatchNorm's running stats):
    the first-step check of programs whose step draws random numbers."""
    model.eval()
    with lib.no_grad():
        out = probe(model, data)
    model.train()
    return np.asarray(out.detach().numpy(), dtype=np.float64)


def _copy_state(lib, model, state):
    """Load tracegrad's initial state dict (parameters and buffers) into `model` of `lib`."""
    model.load_state_dict({k: lib.tensor(np.array(v.detach().numpy())) for k, v in
                           state.items()})


def _synced(loss, model):
    """`loss` once `model`'s parameters (device arrays) are computed: the step's last
    kernels may still run after the loss is known (the next row would pay for them)."""
    import jax
    jax.block_until_ready([p._data for p in model.parameters()])
    return loss


def _timed_first(fn):
    """(seconds, loss) of one call."""
    t = time.perf_counter()
    loss = fn()
    return time.perf_counter() - t, loss


def _compiled(tg, spec, batch, state, data):
    """The tg.compile row's step: the whole training step compiled, on its own model copy
    with the same initial state; (fn, why not or None, the warnings of its first call, that
    call's (seconds, loss))."""
    tg.manual_seed(0)
    model, step = spec["build"](tg, batch)
    _copy_state(tg, model, state)
    fn = tg.compile(step)
    with warnings.catch_warnings(record=True) as caught:   # a graph break is a finding too
        warnings.simplefilter("always")
        try:
            first = _timed_first(lambda: float(fn(*data).item()))
        except Exception as e:   # noqa: BLE001 - the reason goes into the record
            return None, f"{type(e).__name__}: {str(e).splitlines()[0][:160]}", [], None
    return fn, None, sorted({str(w.message).splitlines()[0][:160] for w in caught}), first


def run(name: str, steps: int, *, use_torch: bool, batch: int | None = None,
        compile: bool = True, device: bool = True) -> list[dict]:
    """Records for program `name`: tracegrad eager, tg.compile of the whole step, tracegrad
    eager on "xla" tensors (`device`: each op a jitted jax kernel), and (with torch) torch
    eager, interleaved; `batch` overrides the program's (--quick)."""
    import tracegrad as tg
    spec = PROGRAMS[name]
    batch = batch or spec["batch"]
    raw = spec["data"](np.random.default_rng(0), batch)
    tg_data = [tg.tensor(a) for a in raw]
    tg.manual_seed(0)
    tg_model, tg_step = spec["build"](tg, batch)
    state = {k: v.detach().clone() for k, v in tg_model.state_dict().items()}
    probes = {"tracegrad eager": _probe(tg, tg_model, spec["probe"], tg_data)}
    steps_of = {"tracegrad eager": (tg_step, tg_data)}
    first, losses, warm = {}, {}, {}
    compiled: dict = {}   # the tg.compile record's extra fields: why not, graph breaks
    if compile:
        fn, why, caught, call = _compiled(tg, spec, batch, state, tg_data)
        compiled = dict(error=why, warnings="; ".join(caught) or None)
        if fn is not None:
            steps_of["tg.compile"] = (fn, tg_data)
            first["tg.compile"], losses["tg.compile"] = call
    if device:   # the same program with its model and batch on "xla" (device-resident)
        tg.manual_seed(0)
        d_model, d_step = spec["build"](tg, batch)
        _copy_state(tg, d_model, state)
        d_model.to(DEVICE)
        steps_of[DEVICE_EAGER] = (d_step, [t.to(DEVICE) for t in tg_data])
    if use_torch:
        import torch
        t_data = [torch.from_numpy(np.array(a)) for a in raw]
        t_model, t_step = spec["build"](torch, batch)
        _copy_state(torch, t_model, state)
        probes["torch eager"] = _probe(torch, t_model, spec["probe"], t_data)
        np.testing.assert_allclose(probes["torch eager"], probes["tracegrad eager"],
                                   rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name}: tracegrad and torch forwards disagree")
        steps_of["torch eager"] = (t_step, t_data)
    fns = {k: (lambda f=f, d=d: float(f(*d).item())) for k, (f, d) in steps_of.items()}
    if DEVICE_EAGER in fns:   # jax dispatches asynchronously: wait for the whole update
        fns[DEVICE_EAGER] = lambda f=fns[DEVICE_EAGER]: _synced(f(), d_model)
    for k, f in fns.items():   # first call, then warm-up (the backward programs reach jax)
        if k not in first:
            first[k], losses[k] = _timed_first(f)
        if k == "tracegrad eager":
            warm[k] = 1 + warm_eager(f)
        else:
            f()
            f()
    if spec["same_loss"] and DEVICE_EAGER in losses and not math.isclose(
            losses[DEVICE_EAGER], losses["tracegrad eager"], rel_tol=1e-4):
        raise RuntimeError(f"{name}: the xla-tensor step's first loss {losses[DEVICE_EAGER]} "
                           f"is not the host step's {losses['tracegrad eager']}")
    if spec["same_loss"] and "torch eager" in losses:   # deterministic steps: same loss
        bad = {k: v for k, v in losses.items()
               if not math.isclose(v, losses["torch eager"], rel_tol=1e-4)}
        if bad:
            raise RuntimeError(f"{name}: first-step losses disagree with torch's "
                               f"{losses['torch eager']}: {bad}")
    cpu: dict = {}
    samples = time_interleaved(fns, steps, cpu)
    # no jax row: the ratio column of these workloads is to torch eager (harness.reference)
    out = [record(name, k, v, first_call_s=first[k], first_loss=losses[k],
                  cpu_ms=1e3 * float(np.median(cpu[k])), warmup_calls=warm.get(k),
                  **(compiled if k == "tg.compile" else {}))
           for k, v in samples.items()]
    if compiled and "tg.compile" not in steps_of:
        out.append(record(name, "tg.compile", None, **compiled))
    return out
