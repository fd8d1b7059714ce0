"""The backward pipeline: autodiff + prune build the program; cached once per structure."""
import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import engine
from tracegrad.ir import Builder, Graph, verify
from tracegrad.ir import types as T
from tracegrad.passes import autodiff, build_backward, prune
from tracegrad.backends import interpreter, jax_backend


@pytest.fixture(autouse=True)
def _fresh_cache():
    engine.clear_cache()
    yield
    engine.clear_cache()


def _two_branch_graph():
    g = Graph("f")
    x = g.add_input(T.TensorType((3,), T.float64))
    w = g.add_input(T.TensorType((3,), T.float64))
    b = Builder(g)
    used = b.mul(x, w)
    b.exp(b.tanh(x))   # a dead branch
    g.outputs = [b.sum(b.mul(used, used))]
    return g, x, w


def test_prune_removes_dead_forward_branch():
    g, _, _ = _two_branch_graph()
    pruned, report = prune(g)
    assert report.removed == 2
    assert [n.op for n in pruned.nodes] == ["mul", "mul", "sum"]
    verify(pruned)


def test_unrequested_gradient_is_pruned():
    g, x, w = _two_branch_graph()
    both = build_backward(g, [x, w]).backward
    only_w = build_backward(g, [w]).backward
    assert len(only_w.nodes) < len(both.nodes)
    assert len(only_w.outputs) == 1
    # saved values: only_w needs x (for d/dw of x*w) and x*w, not w itself
    assert len(only_w.inputs) - 1 <= len(both.inputs) - 1


def test_backward_program_values_match_analytic_and_executors_agree():
    g, x, w = _two_branch_graph()
    part = build_backward(g, [x, w])
    xv, wv = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25, -0.5])
    fwd = {id(x): xv, id(w): wv}
    # the forward values the program reads, computed by the interpreter
    env_graph = Graph("fwd", list(g.inputs), list(g.nodes), list(part.saved))
    saved = interpreter.run(env_graph, [xv, wv])
    ins = [np.array(1.0)] + saved
    gi = interpreter.run(part.backward, ins)
    gj = jax_backend.run(part.backward, ins)
    # loss = sum((x*w)^2): dx = 2 x w^2, dw = 2 w x^2
    np.testing.assert_allclose(gi[0], 2 * xv * wv ** 2)
    np.testing.assert_allclose(gi[1], 2 * wv * xv ** 2)
    for a, b in zip(gi, gj):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        assert a.dtype == b.dtype == np.float64


def test_cotangents_of_reused_values_are_summed():
    x = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x + x          # x used three times
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]) + 1)


def test_broadcast_cotangent_is_summed_to_shape():
    a = tg.tensor(np.ones((4, 3)), requires_grad=True)
    b = tg.tensor(np.arange(3.0), requires_grad=True)
    c = tg.tensor(np.arange(4.0).reshape(4, 1), requires_grad=True)
    ((a * b) + c).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), np.full(3, 4.0))
    np.testing.assert_allclose(c.grad.numpy(), np.full((4, 1), 3.0))
    assert a.grad.shape == (4, 3)


def test_training_loop_builds_backward_once():
    w = tg.tensor(np.ones((5, 2)), requires_grad=True)
    for i in range(4):
        x = tg.tensor(np.full((3, 5), float(i)))
        (x @ w).tanh().sum().backward()
    assert engine.cache_info()["programs"] == 1
    prog = next(iter(engine._cache.values()))
    assert prog.runs == 4


def test_views_by_a_tensors_shape_keep_one_program():
    # `.shape` is a tuple subclass (Size): reshape(y.shape) and a full slice pos[:t]
    # (a reshape to x.shape) had uncached plans, so each step's tape had a new key
    pos = tg.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    for i in range(3):
        x = tg.tensor(np.full((2, 3), float(i)))
        (pos[:3] * x.reshape(pos.shape)).sum().backward()
    assert engine.cache_info()["programs"] == 1
    np.testing.assert_array_equal(pos.grad.numpy(), np.full((3, 2), 3.0))   # 0 + 1 + 2



def test_float_attributes_keep_one_program():
    # leaky_relu's negative_slope, elu's alpha...: float attributes had no cached plan, so
    # each call's tape node had a new signature and each step rebuilt its backward program
    F = tg.nn.functional
    x = tg.tensor(np.array([-2.0, -0.5, 0.25, 3.0]), requires_grad=True)
    for _ in range(3):
        y = F.leaky_relu(x, 0.2) + F.elu(x, alpha=0.5) + F.hardtanh(x, -1.0, 1.0)
        y.sum().backward()
    assert engine.cache_info()["programs"] == 1
    xs = np.array([-2.0, -0.5, 0.25, 3.0])
    want = (np.where(xs > 0, 1.0, 0.2) + np.where(xs > 0, 1.0, 0.5 * np.exp(xs))
            + (np.abs(xs) < 1.0))
    np.testing.assert_allclose(x.grad.numpy(), 3 * want, rtol=1e-12)


def test_float_attributes_are_keyed_exactly():
    # 0.0 == -0.0: one cached plan (or program) for both would give the other's signs;
    # torch 2.13: leaky_relu(x, s).sum().backward() at x = [-2, 3] gives x.grad [0.0, 1.0]
    # for s = 0.0 and [-0.0, 1.0] for s = -0.0
    for s in (0.0, -0.0, 0.0, -0.0):
        x = tg.tensor(np.array([-2.0, 3.0], np.float32), requires_grad=True)
        tg.nn.functional.leaky_relu(x, s).sum().backward()
        assert x.grad.numpy().tolist() == [0.0, 1.0]
        assert np.signbit(x.grad.numpy()).tolist() == [bool(np.signbit(s)), False]
    assert engine.cache_info()["programs"] == 2


def _tiny_dcgan():
    """pytorch/examples' DCGAN loop at 8x8, batch 4 (weights drawn from NumPy, as in the
    torch 2.13 run that recorded the losses below)."""
    nn = tg.nn
    gen = nn.Sequential(nn.ConvTranspose2d(4, 4, 4, 1, 0, bias=False), nn.BatchNorm2d(4),
                        nn.ReLU(True), nn.ConvTranspose2d(4, 3, 4, 2, 1, bias=False), nn.Tanh())
    disc = nn.Sequential(nn.Conv2d(3, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                         nn.Conv2d(4, 4, 4, 2, 1, bias=False), nn.BatchNorm2d(4),
                         nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(4, 1, 2, 1, 0, bias=False),
                         nn.Sigmoid())
    rng = np.random.default_rng(0)
    with tg.no_grad():
        for p in list(gen.parameters()) + list(disc.parameters()):
            p.copy_(tg.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape)).astype(np.float32)))
    return gen, disc, rng


def test_dcgan_loop_reuses_its_backward_programs(monkeypatch):
    # issue 17: the DCGAN's LeakyReLU(0.2) made all three backward programs new every step
    from tracegrad.ir.ops import conv
    # on NumPy only: cross-checking compiled the two programs for XLA (~5 s), and handing
    # these convs to XLA compiled 11 jax kernels (~4 s); program counts are the point here
    tg.set_executor("interpreter")   # the autouse fixture restores "auto"
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    monkeypatch.setattr(conv, "XLA_MIN_CONTRACTION", 1 << 30)
    gen, disc, rng = _tiny_dcgan()
    bce = tg.nn.BCELoss()
    opt_d = tg.optim.Adam(disc.parameters(), lr=0.01, betas=(0.5, 0.999))
    opt_g = tg.optim.Adam(gen.parameters(), lr=0.01, betas=(0.5, 0.999))
    real = tg.tensor(rng.uniform(-1, 1, (4, 3, 8, 8)).astype(np.float32))
    losses, programs = [], []
    for _ in range(6):
        noise = tg.tensor(rng.standard_normal((4, 4, 1, 1)).astype(np.float32))
        disc.zero_grad()
        label = tg.full((4,), 1.0)
        err_real = bce(disc(real).view(-1), label)
        err_real.backward()
        fake = gen(noise)
        label.fill_(0.0)
        err_fake = bce(disc(fake.detach()).view(-1), label)
        err_fake.backward()
        opt_d.step()
        gen.zero_grad()
        label.fill_(1.0)
        err_g = bce(disc(fake).view(-1), label)
        err_g.backward()
        opt_g.step()
        losses.append(((err_real + err_fake).item(), err_g.item()))
        programs.append(engine.cache_info()["programs"])
    # D on real and D on fake have one structure, G's step the other
    assert programs == [2] * 6
    torch_losses = [(1.364609, 0.762118), (1.320682, 0.795392), (1.321998, 0.759252),
                    (1.299786, 0.766876), (1.303006, 0.776261), (1.300152, 0.751827)]  # torch 2.13
    np.testing.assert_allclose(losses, torch_losses, atol=2e-6)


def _ran_on(monkeypatch):
    """The executors backward programs run on, in order (cross-check off: under it the
    interpreter path also runs, and lowers, the jax function)."""
    from tracegrad.backends.executable import Executable
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    ran = []
    real = Executable.run
    monkeypatch.setattr(Executable, "run", lambda self, a, ex: ran.append(ex) or real(self, a, ex))
    return ran


def _square_steps(n: int) -> list:
    w = tg.tensor(np.ones(3), requires_grad=True)
    grads = []
    for _ in range(n):
        (w * w).sum().backward()
        grads.append(w.grad.numpy().copy())
        w.grad = None
    return grads


def test_auto_executor_switches_to_jax_when_interpreting_cost_the_compile(monkeypatch):
    from tracegrad.autograd import backward_program, profiler_programs
    ran = _ran_on(monkeypatch)
    lowered = []
    real = jax_backend.lower
    monkeypatch.setattr(jax_backend, "lower", lambda g, *a: lowered.append(g) or real(g, *a))
    ticks = iter(range(1000))   # a fake clock: each interpreter run takes 1 "second"
    monkeypatch.setattr(backward_program, "_clock", lambda: float(next(ticks)))
    monkeypatch.setattr(backward_program, "compile_estimate", lambda prog: 3.0)
    w = tg.tensor(np.ones(3), requires_grad=True)
    picked = []
    for i in range(5):
        loss = (w * w).sum()
        if i:   # the profiler labels the run by the same rule, read before it
            picked.append(profiler_programs._executor_of(prog))
        loss.backward()
        np.testing.assert_allclose(w.grad.numpy(), 2 * np.ones(3))
        w.grad = None
        (prog,) = engine._cache.values()
    # 1, 2, then 3 s of interpreting reach the 3 s compile estimate: jax from the 4th run
    assert ran == ["interpreter"] * 3 + ["jax"] * 2
    assert len(lowered) == 1
    assert prog.interpreted_s == 3.0 and prog.runs == 5
    assert picked == ["interpreter"] * 2 + ["jax"] * 2


def test_auto_executor_keeps_a_cheap_program_on_the_interpreter(monkeypatch):
    from tracegrad.autograd import backward_program
    ran = _ran_on(monkeypatch)
    grads = _square_steps(6)
    (prog,) = engine._cache.values()
    # a 3-node program interprets in ~0.1 ms: far from its ~0.8 s compile estimate
    assert backward_program.compile_estimate(prog) > 0.75
    assert 0 < prog.interpreted_s < backward_program.compile_estimate(prog)
    assert ran == ["interpreter"] * 6
    for g in grads:
        np.testing.assert_array_equal(g, 2 * np.ones(3))


def test_hot_after_setting_restores_the_run_count_rule(monkeypatch):
    from tracegrad.passes import settings
    ran = _ran_on(monkeypatch)
    monkeypatch.setenv("TRACEGRAD_HOT_AFTER", "2")
    _square_steps(4)
    assert ran == ["interpreter", "interpreter", "jax", "jax"]
    monkeypatch.setenv("TRACEGRAD_HOT_AFTER", "two")
    with pytest.raises(ValueError, match=r"TRACEGRAD_HOT_AFTER='two' is not a run count"):
        settings.hot_after()


def test_autodiff_marks_backward_provenance():
    g, x, w = _two_branch_graph()
    joint = autodiff(g, [x, w])
    bwd_nodes = [n for n in joint.graph.nodes if id(n) not in joint.forward]
    assert bwd_nodes and all(n.fwd_id is not None or n.op == "full" for n in bwd_nodes)


def _sliced_graph(ranges):
    """out = sum over `ranges` (row slices of x, 6 x 4) of slice * weight."""
    g = Graph("pieces")
    x = g.add_input(T.TensorType((6, 4), T.float64))
    b = Builder(g)
    terms = [b.sum(b.mul(b.slice(x, (lo, 0), (hi, 4), (1, 1)), float(i + 1)))
             for i, (lo, hi) in enumerate(ranges)]
    total = terms[0]
    for t in terms[1:]:
        total = b.add(total, t)
    g.outputs = [total]
    return g, x


@pytest.mark.parametrize("ranges,want_rows", [
    ([(0, 2), (2, 3), (3, 6)], [1, 1, 2, 3, 3, 3]),     # split: one cat, no padding
    ([(4, 5), (1, 3)], [0, 2, 2, 0, 1, 0]),             # a gap and an uncovered tail
    ([(0, 3), (2, 4)], [1, 1, 3, 2, 0, 0]),             # overlapping: summed as before
])
def test_disjoint_slice_cotangents_become_one_cat(ranges, want_rows):
    g, x = _sliced_graph(ranges)
    bwd = build_backward(g, [x]).backward
    ops = [n.op for n in bwd.nodes]
    overlapping = ranges == [(0, 3), (2, 4)]
    assert ops.count("slice_backward") == (2 if overlapping else int(ranges[0][0] != 0))
    assert ops.count("cat") == (0 if overlapping else 1)
    t = tg.zeros(6, 4, dtype=tg.float64, requires_grad=True)     # the same through the engine
    total = sum((t[lo:hi] * float(i + 1)).sum() for i, (lo, hi) in enumerate(ranges))
    total.backward()
    np.testing.assert_array_equal(t.grad.numpy(),
                                  np.repeat(np.array(want_rows, float)[:, None], 4, 1))
