"""tg.autocast: matmul-like ops in low precision, float32 master weights and gradients, the same
in eager and compiled steps."""
import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F


def _leaves(seed=0):
    rng = np.random.default_rng(seed)
    x = tg.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    w = tg.tensor(rng.standard_normal((3, 6)).astype(np.float32), requires_grad=True)
    b = tg.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    return x, w, b


def test_linear_equals_manual_cast_and_grads_stay_float32():
    x, w, b = _leaves()
    target = tg.tensor([0, 2, 1, 0])
    with tg.autocast("cpu", dtype=tg.bfloat16):
        logits = F.linear(x, w, b)
        loss = F.cross_entropy(logits, target)      # on the float32 list
    assert logits.dtype is tg.bfloat16 and loss.dtype is tg.float32
    loss.backward()
    got = [logits.detach().numpy(), loss.item(), w.grad.numpy(), b.grad.numpy()]
    assert w.grad.dtype is tg.float32 and b.grad.dtype is tg.float32

    w.grad = b.grad = None   # the same computation with the casts written out
    bf = tg.bfloat16
    manual = F.linear(x.to(bf), w.to(bf), b.to(bf))
    manual_loss = F.cross_entropy(manual.float(), target)
    manual_loss.backward()
    np.testing.assert_array_equal(got[0], manual.detach().numpy())
    assert got[1] == manual_loss.item()
    np.testing.assert_array_equal(got[2], w.grad.numpy())
    np.testing.assert_array_equal(got[3], b.grad.numpy())
    # and it is close to the float32 result (bfloat16 keeps ~3 significant digits)
    np.testing.assert_allclose(got[0].astype(np.float32), F.linear(x, w, b).detach().numpy(),
                               rtol=3e-2, atol=3e-2)


# torch 2.13 gives these output dtypes under torch.autocast("cpu", dtype=torch.bfloat16) for
# float32 inputs (None: float32, i.e. not cast); float64 inputs are never cast
_X = np.random.default_rng(1).standard_normal((2, 3, 3)).astype(np.float32)
CPU_CASES = {
    "matmul": (lambda a: a @ a, tg.bfloat16),
    "bmm": (lambda a: tg.bmm(a, a), tg.bfloat16),
    "einsum": (lambda a: tg.einsum("bij,bjk->bik", a, a), tg.bfloat16),
    "conv2d": (lambda a: F.conv2d(a[None], a[None, :, :2, :2]), tg.bfloat16),
    "mv": (lambda a: tg.mv(a[0], a[0, 0]), tg.float32),
    "avg_pool2d": (lambda a: F.avg_pool2d(a[None], 2), tg.float32),
    "softmax": (lambda a: a.softmax(-1), tg.float32),
    "mse_loss on bf16": (lambda a: F.mse_loss(a.to(tg.bfloat16), a.to(tg.bfloat16)), tg.float32),
    "layer_norm on bf16": (lambda a: F.layer_norm(a.to(tg.bfloat16), (3,)), tg.bfloat16),
    "sum on bf16": (lambda a: a.to(tg.bfloat16).sum(), tg.bfloat16),
}


@pytest.mark.parametrize("name", list(CPU_CASES))
def test_cpu_policy_matches_torch_output_dtypes(name):
    fn, expected = CPU_CASES[name]
    with tg.autocast("cpu"):
        assert fn(tg.tensor(_X)).dtype is expected
        assert fn(tg.tensor(_X.astype(np.float64))).dtype is (
            tg.float64 if "bf16" not in name else expected)


def test_cuda_table_runs_softmax_and_sum_in_float32():
    x = tg.tensor(_X).to(tg.bfloat16)
    with tg.autocast("cuda", dtype=tg.bfloat16):
        assert x.softmax(-1).dtype is tg.float32 and x.sum().dtype is tg.float32
        assert (tg.tensor(_X) @ tg.tensor(_X)).dtype is tg.bfloat16
    with tg.autocast("gpu"):                      # float16 by default, as torch's cuda
        assert (tg.tensor(_X) @ tg.tensor(_X)).dtype is tg.float16
        assert tg.get_autocast_dtype("cuda") is tg.float16 and tg.is_autocast_enabled("gpu")


def test_regions_nest_disable_and_decorate():
    a = tg.tensor(_X)
    with tg.autocast("cpu"):
        with tg.autocast("cpu", enabled=False):
            assert (a @ a).dtype is tg.float32 and not tg.is_autocast_enabled()
        assert (a @ a).dtype is tg.bfloat16

        @tg.autocast("cpu", dtype=tg.float16)
        def half(t):
            return t @ t
        assert half(a).dtype is tg.float16 and (a @ a).dtype is tg.bfloat16
    assert (a @ a).dtype is tg.float32 and not tg.is_autocast_enabled()


def test_bad_arguments():
    with pytest.raises(ValueError, match="device_type"):
        tg.autocast("tpu")
    with pytest.warns(UserWarning, match="disabling autocast"):
        region = tg.autocast("cpu", dtype=tg.float64)
    with region:
        assert (tg.tensor(_X) @ tg.tensor(_X)).dtype is tg.float32


def _mlp_step(model, opt):
    def step(x, y):
        opt.zero_grad()
        with tg.autocast("cpu", dtype=tg.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def test_compiled_training_step_equals_eager():
    rng = np.random.default_rng(0)
    x = tg.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    y = tg.tensor(rng.integers(0, 3, 8))
    runs = []
    for compiled in (False, True):
        tg.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        opt = tg.optim.SGD(model.parameters(), lr=0.5)
        step = _mlp_step(model, opt)
        step(x, y)        # eagerly first: .grad exists, so one trace
        fn = tg.compile(step) if compiled else step
        losses = [fn(x, y).item() for _ in range(3)]
        assert not compiled or fn.traces == 1
        params = [p.detach().numpy().copy() for p in model.parameters()]
        grads = [p.grad for p in model.parameters()]
        assert all(p.dtype is tg.float32 for p in model.parameters())
        assert all(g.dtype is tg.float32 for g in grads)
        runs.append((losses, params, [g.numpy().copy() for g in grads]))
    assert runs[1][0] == pytest.approx(runs[0][0], rel=1e-6)
    assert runs[0][0][-1] < runs[0][0][0]
    for a, b in zip(runs[1][1] + runs[1][2], runs[0][1] + runs[0][2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_compiled_program_records_the_casts_and_guards_on_autocast():
    w = tg.tensor(_X[0], requires_grad=True)
    f = tg.compile(lambda x: (x @ w).sum())
    x = tg.tensor(_X[1])
    with tg.autocast("cpu"):
        out_amp = f(x)
    out_fp32 = f(x)          # outside the region: another program, no casts
    assert f.traces == 2
    from tracegrad.ir.printer import print_graph
    amp_graph = next(g for g in _graphs(f) if "bf16" in print_graph(g))
    assert "convert" in print_graph(amp_graph)
    with tg.autocast("cpu"):
        expected = (x.to(tg.bfloat16) @ w.to(tg.bfloat16)).sum()
    np.testing.assert_array_equal(out_amp.detach().numpy(), expected.detach().numpy())
    np.testing.assert_allclose(out_fp32.detach().numpy(), (x @ w).sum().detach().numpy(),
                               rtol=1e-6)
    assert out_amp.dtype is tg.bfloat16 and out_fp32.dtype is tg.float32


def _graphs(f):
    return [e.graph for bucket in f._cache.values() for e in bucket]
