"""tg.compile(step, mesh=..., data_axis=...): a data-parallel training step on 8 virtual CPU devices
equals the single-device step.

jax fixes its device count when it starts, so the 8-device run happens in a subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=8``.
"""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

import tracegrad as tg

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import jax
    from jax.sharding import Mesh
    import tracegrad as tg
    import tracegrad.nn as nn
    import tracegrad.nn.functional as F

    def train(mesh):
        tg.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(0.25), nn.Linear(16, 3))
        opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        f = tg.compile(step, mesh=mesh, data_axis=None if mesh is None else "data")
        rng = np.random.default_rng(0)
        losses = []
        for i in range(4):
            x = tg.tensor(rng.standard_normal((16, 6)).astype(np.float32))
            y = tg.tensor(rng.integers(0, 3, 16))
            # the first step eagerly: momentum buffers and .grad exist, so one trace follows
            losses.append((f if i else step)(x, y).item())
        assert f.traces == 1
        hlo = ""
        if mesh is not None:   # the program jax lowered (StableHLO, before XLA partitions it)
            entry = next(e for bucket in f._cache.values() for e in bucket)
            inputs = ([x._data, y._data] + [ref()._data for ref, *_ in entry.lifted]
                      + list(entry.trace.constants))
            hlo = entry._exe.lowered().stablehlo(inputs).as_text()
        return losses, [p.detach().numpy().tolist() for p in model.parameters()], hlo, f

    mesh = Mesh(np.array(jax.devices()), ("data",))
    sharded = train(mesh)
    single = train(None)
    try:
        bad = sharded[3](tg.zeros(12, 6), tg.zeros(12, dtype=tg.int64))
        error = ""
    except ValueError as e:
        error = str(e)
    print(json.dumps({"devices": len(jax.devices()), "losses": [sharded[0], single[0]],
                      "params": [sharded[1], single[1]],
                      "hlo": sharded[2].split("func.func public @main")[0:2],
                      "error": error}))
""")


def test_eight_device_data_parallel_step_equals_one_device():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["devices"] == 8
    # one program over 8 partitions, the batch split on its leading dim, a parameter
    # replicated; equal parameters below show the gradients were all-reduced (XLA's
    # compiled program has the all-reduce ops: `.compiled(...).as_text()`, not run here
    # because a second XLA compile of the 8-way program costs seconds)
    header, main = out["hlo"]
    assert "mhlo.num_partitions = 8" in header
    assert '%arg0: tensor<16x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}' in main
    assert '%arg1: tensor<16xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}]>}' in main
    # a replicated parameter (donated on accelerators only, so the donor mark is optional)
    assert re.search(r'tensor<16x6xf32> \{(jax\.buffer_donor = true, )?'
                     r'sdy\.sharding = #sdy\.sharding<@mesh, \[\{\}, \{\}\]>\}', main)
    sharded, single = out["losses"]
    assert sharded == pytest.approx(single, rel=1e-5, abs=1e-6)
    import numpy as np
    for a, b in zip(*out["params"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert "does not divide" in out["error"] and "12" in out["error"]


def test_mesh_argument_errors():
    import jax
    import numpy as np
    from jax.sharding import Mesh
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    with pytest.raises(ValueError, match="not an axis of the mesh"):
        tg.compile(lambda x: x, mesh=mesh, data_axis="batch")
    with pytest.raises(ValueError, match="needs data_axis"):
        tg.compile(lambda x: x, mesh=mesh)
    with pytest.raises(ValueError, match="without a mesh"):
        tg.compile(lambda x: x, data_axis="data")
    with pytest.raises(TypeError, match="jax.sharding.Mesh"):
        tg.compile(lambda x: x, mesh="data", data_axis="data")


MULTI_PROCESS = textwrap.dedent("""
    import json, sys
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address=sys.argv[1], num_processes=2,
                               process_id=int(sys.argv[2]))
    import numpy as np
    from jax.sharding import Mesh
    import tracegrad as tg
    import tracegrad.nn as nn
    import tracegrad.nn.functional as F

    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    mesh = Mesh(np.array(jax.devices()), ("data",))     # 2 processes x 4 devices

    @tg.compile(mesh=mesh, data_axis="data")
    def step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, logits

    rng = np.random.default_rng(0)
    losses = []
    for _ in range(3):   # every process passes the whole global batch
        x = tg.tensor(rng.standard_normal((16, 6)).astype(np.float32))
        y = tg.tensor(rng.integers(0, 3, 16))
        loss, logits = step(x, y)
        losses.append(loss.item())
    print(json.dumps({"devices": [len(jax.devices()), len(jax.local_devices())],
                      "losses": losses, "logits": logits.numpy().tolist(),
                      "params": [p.detach().numpy().tolist() for p in model.parameters()]}))
""")


@pytest.mark.slow
def test_two_process_mesh_equals_one_device():
    """Multi-host data parallelism, simulated: two processes with four CPU devices each,
    joined by jax.distributed.initialize (gloo collectives)."""
    import socket

    import numpy as np
    import tracegrad.nn as nn
    import tracegrad.nn.functional as F
    with socket.socket() as s:
        s.bind(("localhost", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu", TRACEGRAD_CROSSCHECK="0")
    procs = [subprocess.Popen([sys.executable, "-c", MULTI_PROCESS, f"localhost:{port}",
                               str(i)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=300)
        assert p.returncode == 0, stderr[-3000:]
        outs.append(json.loads(stdout.strip().splitlines()[-1]))

    tg.manual_seed(0)   # the same steps on one device, in this process
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(3):
        x = tg.tensor(rng.standard_normal((16, 6)).astype(np.float32))
        y = tg.tensor(rng.integers(0, 3, 16))
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    for out in outs:
        assert out["devices"] == [8, 4]
        assert out["losses"] == pytest.approx(losses, rel=1e-5, abs=1e-6)
        np.testing.assert_allclose(out["logits"], logits.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        for a, p in zip(out["params"], model.parameters()):
            np.testing.assert_allclose(a, p.detach().numpy(), rtol=1e-5, atol=1e-6)
