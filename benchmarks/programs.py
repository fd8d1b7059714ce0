"""Ported PyTorch programs, eager: tracegrad eager against torch eager (issue 17).

- ``mnist``: pytorch/examples' MNIST CNN training step: conv 1->32 3x3, ReLU, conv 32->64
  3x3, ReLU, max pool 2, dropout 0.25, flatten, Linear 9216->128, ReLU, dropout 0.5,
  Linear 128->10, log_softmax + nll_loss, Adadelta (lr 1.0); batch 64, 1x28x28.
- ``dcgan``: pytorch/examples' DCGAN step at 32x32 (nz 100, ngf = ndf = 32, batch 64):
  a generator of conv_transpose2d + BatchNorm + ReLU, a discriminator of strided conv +
  LeakyReLU (+ BatchNorm), BCE losses, one Adam update of each network per step.

Both programs are written once against a torch-shaped namespace (``tracegrad`` or
``torch``), so the two rows run the same code.  Dropout draws from each library's own
stream, so the first-step check compares a dropout-free forward (``eval()``) instead of
the first loss; weights are copied from the tracegrad model by parameter name.
"""
from __future__ import annotations

import numpy as np

from .harness import record, time_interleaved, warm_eager


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
    loss_fn = lib.nn.functional.nll_loss
    return model, (model,), [opt], lambda data: [(opt, loss_fn(model(data[0]), data[1]))]


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

    def losses(data):
        real, noise = data
        ones, zeros = lib.ones(real.shape[0]), lib.zeros(real.shape[0])
        fake = gen(noise)
        d_loss = bce(disc(real).view(-1), ones) + bce(disc(fake.detach()).view(-1), zeros)
        yield opt_d, d_loss
        yield opt_g, bce(disc(fake).view(-1), ones)
    whole = lib.nn.ModuleDict({"gen": gen, "disc": disc})
    return whole, (gen, disc), [opt_d, opt_g], lambda data: losses(data)


def _dcgan_data(rng, batch):
    return [rng.uniform(-1, 1, (batch, 3, 32, 32)).astype(np.float32),
            rng.standard_normal((batch, 100, 1, 1)).astype(np.float32)]


PROGRAMS = {"mnist": (_mnist, _mnist_data, 64), "dcgan": (_dcgan, _dcgan_data, 64)}


def _step(lib, build, batch, data):
    """(model, step) where step() runs one training step on `data` (library tensors)."""
    whole, _, opts, losses = build(lib, batch)

    def step():
        last = None
        for opt, loss in losses(data):   # each loss: zero_grad, backward, step (as the examples)
            opt.zero_grad()
            loss.backward()
            opt.step()
            last = loss
        return float(last.item())
    return whole, step


def _probe(lib, whole, name, data):
    """A dropout-free forward value: the first-step check for programs with dropout."""
    whole.eval()
    with lib.no_grad():
        if name == "mnist":
            out = whole(data[0])
        else:
            out = whole["disc"](whole["gen"](data[1]))
    whole.train()
    return np.asarray(out.detach().numpy(), dtype=np.float64)


def run(name: str, steps: int, *, use_torch: bool, batch: int | None = None) -> list[dict]:
    """Records for program `name`: tracegrad eager and (with torch) torch eager, interleaved."""
    import tracegrad as tg
    build, make_data, default_batch = PROGRAMS[name]
    batch = batch or default_batch
    raw = make_data(np.random.default_rng(0), batch)
    tg.manual_seed(0)
    tg_model, tg_step = _step(tg, build, batch, [tg.tensor(a) for a in raw])
    fns = {"tracegrad eager": tg_step}
    probes = {"tracegrad eager": _probe(tg, tg_model, name, [tg.tensor(a) for a in raw])}
    if use_torch:
        import torch
        t_data = [torch.from_numpy(np.array(a)) for a in raw]
        t_model, t_step = _step(torch, build, batch, t_data)
        state = {k: torch.from_numpy(np.array(v.detach().numpy()))
                 for k, v in tg_model.state_dict().items()}
        t_model.load_state_dict(state)
        probes["torch eager"] = _probe(torch, t_model, name, t_data)
        np.testing.assert_allclose(probes["torch eager"], probes["tracegrad eager"],
                                   rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name}: tracegrad and torch forwards disagree")
        fns["torch eager"] = t_step
    first, warm = {}, {}
    for k, f in fns.items():   # first call, then warm-up (the backward programs reach jax)
        first[k] = time_interleaved({k: f}, 1)[k][0]
        if k == "tracegrad eager":
            warm[k] = 1 + warm_eager(f)
        else:
            f()
            f()
    cpu: dict = {}
    samples = time_interleaved(fns, steps, cpu)
    # no jax row: the ratio column of these workloads is to torch eager (harness.REFERENCE)
    return [record(name, k, v, first_call_s=first[k], cpu_ms=1e3 * float(np.median(cpu[k])),
                   warmup_calls=warm.get(k))
            for k, v in samples.items()]
