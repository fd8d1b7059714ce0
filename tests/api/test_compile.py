"""@tg.compile: compiled training steps equal eager ones; guards, retracing, write-back."""
import logging

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from helpers import classification_step


def _model_and_opt(momentum, seed=0, dtype=None):
    tg.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16, dtype=dtype), nn.ReLU(), nn.Linear(16, 3, dtype=dtype))
    opt = tg.optim.SGD(model.parameters(), lr=0.1, momentum=momentum, weight_decay=0.01)
    return model, opt


def _data(n=32, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return (tg.tensor(rng.standard_normal((n, 8)).astype(dtype)),
            tg.tensor(rng.integers(0, 3, n)))


def _run(compiled: bool, momentum: float, steps: int = 5, executor=None):
    model, opt = _model_and_opt(momentum)

    step = classification_step(model, opt)

    fn = tg.compile(step, executor=executor) if compiled else step
    x, y = _data()
    losses = [fn(x, y).item() for _ in range(steps)]
    params = [p.detach().numpy().copy() for p in model.parameters()]
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    bufs = [opt.state[p]["momentum_buffer"].numpy().copy() for p in model.parameters()
            if "momentum_buffer" in opt.state[p]]
    return losses, params, grads, bufs, fn


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("executor", ["jax", "interpreter"])
def test_compiled_step_matches_eager(momentum, executor):
    eager = _run(False, momentum)
    comp = _run(True, momentum, executor=executor)
    np.testing.assert_allclose(comp[0], eager[0], rtol=1e-5, atol=1e-6)
    for a, b in zip(comp[1] + comp[2] + comp[3], eager[1] + eager[2] + eager[3]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert len(comp[3]) == (4 if momentum else 0)
    # loss decreases: the step really trains
    assert comp[0][-1] < comp[0][0]
    # zero_grad's .grad None -> tensor changes the guard once; momentum state once more
    assert comp[4].traces == 2


def test_changed_shape_retraces_and_is_logged(caplog):
    model, opt = _model_and_opt(0.0)

    @tg.compile
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        step(*_data(32))
        step(*_data(32, seed=1))
        assert step.traces == 2          # .grad went from None to a tensor
        step(*_data(32, seed=2))
        assert step.traces == 2          # cache hit
        step(*_data(16))
        assert step.traces == 3          # new batch size
    assert any("compiling step" in r.message for r in caplog.records)


def test_grad_accumulates_across_compiled_calls_like_eager():
    results = []
    for compiled in (False, True):
        model, _ = _model_and_opt(0.0)

        def step(x, y):
            F.cross_entropy(model(x), y).backward()

        fn = tg.compile(step) if compiled else step
        x, y = _data()
        for _ in range(3):
            fn(x, y)
        results.append([p.grad.numpy().copy() for p in model.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_static_args_and_returned_structure():
    w = tg.tensor(np.arange(4.0, dtype=np.float32))

    @tg.compile
    def f(x, scale, extra):
        return {"y": x * w * scale, "pair": (x.sum(), extra)}

    x = tg.ones(4)
    out = f(x, 2.0, "tag")
    np.testing.assert_allclose(out["y"].numpy(), np.arange(4.0) * 2)
    assert out["pair"][1] == "tag" and out["pair"][0].item() == 4.0
    out3 = f(x, 3.0, "tag")
    np.testing.assert_allclose(out3["y"].numpy(), np.arange(4.0) * 3)
    assert f.traces == 2
    # a lifted tensor is read by identity at every call, not baked in
    w.add_(1.0)
    np.testing.assert_allclose(f(x, 3.0, "tag")["y"].numpy(), (np.arange(4.0) + 1) * 3)
    assert f.traces == 2


def test_value_dependent_control_flow_names_user_line():
    @tg.compile(fullgraph=True)
    def f(x):
        if x.sum() > 0:   # needs a value: cannot be traced
            return x
        return -x

    with pytest.raises(tg.TraceError) as info:
        f(tg.ones(3))
    assert "test_compile.py" in str(info.value) and "bool(tensor)" in str(info.value)


def test_item_inside_compile_raises():
    @tg.compile(fullgraph=True)
    def f(x):
        return x * x.sum().item()

    with pytest.raises(tg.TraceError, match=r"\.item\(\)"):
        f(tg.ones(3))


def test_float64_step_without_global_x64():
    import jax
    model, opt = _model_and_opt(0.0, dtype=tg.float64)
    x, y = _data(dtype=np.float64)

    step = tg.compile(classification_step(model, opt))

    loss = step(x, y)
    assert loss.dtype is tg.float64 and model[0].weight.dtype is tg.float64
    assert not jax.config.jax_enable_x64   # the user's jax setting is untouched


def test_train_eval_switch_retraces():
    # a compiled Dropout must stop masking after model.eval() (guard on .training)
    drop = nn.Dropout(0.5)
    f = tg.compile(lambda x: drop(x))
    x = tg.ones(1000)
    tg.manual_seed(0)
    assert (f(x).numpy() == 0).sum() > 300        # training: about half dropped
    drop.eval()
    np.testing.assert_array_equal(f(x).numpy(), np.ones(1000))
    drop.train()
    assert (f(x).numpy() == 0).sum() > 300
    assert f.traces == 2


def test_registering_a_hook_after_compiling_retraces():
    w = tg.tensor([1.0, 2.0], requires_grad=True)

    @tg.compile
    def step(x):
        w.grad = None
        (w * x).sum().backward()

    step(tg.ones(2))
    step(tg.ones(2))
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])
    h = w.register_hook(lambda g: g * 10)
    step(tg.ones(2))
    np.testing.assert_array_equal(w.grad.numpy(), [10.0, 10.0])
    h.remove()
    step(tg.ones(2))
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 1.0])


@pytest.mark.parametrize("executor", ["jax", "interpreter"])
def test_returned_loss_backward_runs_the_compiled_backward_program(executor):
    model, _ = _model_and_opt(0.0)
    x, y = _data()
    x.requires_grad_(True)
    f = tg.compile(lambda x, y: F.cross_entropy(model(x), y), executor=executor)
    grads = []
    for compiled in (True, False):
        for p in model.parameters():
            p.grad = None
        x.grad = None
        loss = f(x, y) if compiled else F.cross_entropy(model(x), y)
        assert loss.requires_grad and loss.grad_fn is not None
        loss.backward()
        grads.append([p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    plan = f.programs and next(e for b in f._cache.values() for e in b).grad_plan
    assert plan.saved_bytes > 0    # the hidden activation, chosen by the min-cut partition


def test_result_whose_graph_was_consumed_inside_comes_back_detached():
    model, opt = _model_and_opt(0.0)

    @tg.compile
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    out = step(*_data())
    assert not out.requires_grad
    assert next(e for b in step._cache.values() for e in b).grad_plan is None


def test_compile_a_module_like_torch_compile():
    """tg.compile(module) (torch.compile's OptimizedModule): the forward compiled, the rest the
    module's own; train/eval switches retrace; gradients reach the module's parameters."""
    tg.manual_seed(0)
    m = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.Dropout(0.5), tg.nn.ReLU(),
                         tg.nn.Linear(8, 3))
    cm = tg.compile(m)
    assert cm._orig_mod is m and cm._compiled.__name__ == "Sequential"
    assert list(cm.parameters()) == list(m.parameters()) and cm.state_dict().keys() == \
        m.state_dict().keys()
    x = tg.randn(5, 4)
    cm.eval()
    assert not m.training
    np.testing.assert_allclose(cm(x).detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    m.train()
    tg.manual_seed(1)
    y = cm(x)
    tg.manual_seed(1)
    np.testing.assert_allclose(y.detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    assert cm._compiled.traces == 2
    y.sum().backward()
    grad = m[0].weight.grad.numpy().copy()
    m.zero_grad()
    tg.manual_seed(1)
    m(x).sum().backward()
    np.testing.assert_allclose(grad, m[0].weight.grad.numpy(), rtol=1e-6)
