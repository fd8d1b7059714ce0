"""Optimizers inside tg.compile: the learning rate (and momentum/betas) is data, so a schedule
that changes it every step does not retrace; what the program bakes in is guarded."""
import logging

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad.ir.errors import TraceError
from tracegrad.optim import lr_scheduler as L

RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 4)).astype(np.float32)
Y = RNG.integers(0, 3, 6)


def _train(make_opt, make_sched, compiled, steps=8, executor="jax"):
    """Train a Linear(4, 3) on a fixed batch; returns parameters, lrs seen, the step fn."""
    tg.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = make_opt(model.parameters())
    sched = make_sched(opt)
    x, y = tg.tensor(X), tg.tensor(Y)

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    fn = tg.compile(step, executor=executor) if compiled else step
    lrs = []
    for _ in range(steps):
        opt.zero_grad()       # outside: .grad is None at every call, so one trace suffices
        fn(x, y)
        lrs.append(opt.param_groups[0]["lr"])
        sched.step()
    return [p.detach().numpy().copy() for p in model.parameters()], lrs, fn


CASES = {
    "SGD+LambdaLR": (lambda ps: tg.optim.SGD(ps, lr=0.5, weight_decay=0.01),
                     lambda o: L.LambdaLR(o, lambda e: 1.0 / (1 + e))),
    "Adagrad+StepLR": (lambda ps: tg.optim.Adagrad(ps, lr=0.3, lr_decay=0.1),
                       lambda o: L.StepLR(o, step_size=1, gamma=0.7)),
}


# (Adam with OneCycleLR, which also changes beta1 every step, compiled: see the
# interrupted-and-resumed training test in test_serialization.py)
@pytest.mark.parametrize("case,executor", [("SGD+LambdaLR", "jax"),
                                           ("SGD+LambdaLR", "interpreter"),
                                           ("Adagrad+StepLR", "jax")])
def test_lr_changing_every_step_traces_once(case, executor, caplog):
    make_opt, make_sched = CASES[case]
    eager, eager_lrs, _ = _train(make_opt, make_sched, compiled=False)
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        comp, comp_lrs, fn = _train(make_opt, make_sched, compiled=True, executor=executor)
    assert len(set(comp_lrs)) == len(comp_lrs) == 8       # a new lr at every call
    assert comp_lrs == eager_lrs
    assert fn.traces == 1
    assert sum("compiling step" in r.message for r in caplog.records) == 1
    for a, b in zip(comp, eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _compiled_sgd(compiled=True, **kw):
    w = tg.tensor([1.0, -2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1, **kw)

    def step():
        (w * w).sum().backward()
        opt.step()

    return w, opt, tg.compile(step) if compiled else step


def _sgd_schedule(compiled, changes, **kw):
    """Run one step per entry of `changes` (group updates applied before the step)."""
    w, opt, step = _compiled_sgd(compiled, **kw)
    for change in changes:
        opt.param_groups[0].update(change)
        opt.zero_grad()
        step()
    return w.detach().numpy(), step


def test_baked_in_hyper_parameter_change_retraces_with_the_reason(caplog):
    changes = [{}, {}, {}, {"nesterov": True}, {}]
    eager, _ = _sgd_schedule(False, changes, momentum=0.9)
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        comp, step = _sgd_schedule(True, changes, momentum=0.9)
    # first call, the new momentum buffer, then nesterov
    assert step.traces == 3
    assert any("param_groups[0]['nesterov'] changed" in r.message for r in caplog.records)
    np.testing.assert_allclose(comp, eager, rtol=1e-6)
    plain, _ = _sgd_schedule(False, [{}] * 5, momentum=0.9)
    assert not np.allclose(eager, plain)          # nesterov did change the result


def test_momentum_from_zero_to_nonzero_retraces_but_its_value_is_data():
    changes = [{}, {"momentum": 0.5}, {"momentum": 0.7}, {"momentum": 0.2}, {"lr": 0.0}]
    eager, _ = _sgd_schedule(False, changes)
    comp, step = _sgd_schedule(True, changes)
    # first call; momentum 0 -> 0.5 adds the buffer (+1) which is new state (+1); then the
    # momentum and lr values (lr even 0) are data
    assert step.traces == 3
    np.testing.assert_allclose(comp, eager, rtol=1e-6)


def test_param_group_replaced_by_a_plain_dict_before_tracing():
    def run(compiled):
        w, opt, step = _compiled_sgd(compiled)
        opt.param_groups[0] = dict(opt.param_groups[0])   # wrapped again inside the trace
        for lr in (0.1, 0.3, 0.05):
            opt.param_groups[0]["lr"] = lr
            opt.zero_grad()
            step()
        return w.detach().numpy(), step

    (eager, _), (comp, step) = run(False), run(True)
    np.testing.assert_allclose(comp, eager, rtol=1e-6)
    np.testing.assert_allclose(eager, np.array([1.0, -2.0]) * 0.8 * 0.4 * 0.9, rtol=1e-6)
    assert step.traces == 1


def test_new_param_group_retraces():
    w, opt, step = _compiled_sgd()
    v = tg.tensor([3.0], requires_grad=True)
    opt.zero_grad()
    step()
    opt.add_param_group({"params": [v], "lr": 1.0})
    v.grad = None
    opt.zero_grad()
    step()
    assert step.traces == 2


def _step_with_scheduler_inside(**compile_kw):
    w = tg.tensor([1.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    sched = L.StepLR(opt, 1, gamma=0.5)

    @tg.compile(**compile_kw)
    def step():
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
        sched.step()

    return w, opt, step


def test_setting_lr_inside_a_compiled_step_is_a_graph_break():
    w, opt, step = _step_with_scheduler_inside(fullgraph=True)
    with pytest.raises(TraceError, match="outside the compiled function"):
        step()
    assert opt.param_groups[0]["lr"] == 0.1 and w.grad is None   # the trace was rolled back
    w, opt, step = _step_with_scheduler_inside()
    with pytest.warns(UserWarning, match="graph break"):
        step()
    step()
    step()     # eager fallback: the scheduler really steps at every call
    assert opt.param_groups[0]["lr"] == 0.1 * 0.5 ** 3
    # w <- w - lr * 2w with lr = 0.1, 0.05, 0.025
    np.testing.assert_allclose(w.detach().item(), 0.8 * 0.9 * 0.95, rtol=1e-6)


def test_load_state_dict_keeps_a_compiled_step_valid():
    w, opt, step = _compiled_sgd(momentum=0.9)
    for _ in range(3):
        opt.zero_grad()
        step()
    traces = step.traces
    snapshot = {k: v for k, v in opt.state_dict().items()}
    snapshot["state"] = {0: {"momentum_buffer": tg.tensor([10.0, 10.0])}}
    snapshot["param_groups"] = [dict(snapshot["param_groups"][0], lr=0.0, momentum=0.5)]
    opt.load_state_dict(snapshot)
    before = w.detach().numpy().copy()
    opt.zero_grad()
    step()                       # lr 0: w unchanged; the loaded buffer was used
    assert step.traces == traces
    np.testing.assert_array_equal(w.detach().numpy(), before)
    np.testing.assert_allclose(opt.state[w]["momentum_buffer"].numpy(),
                               10.0 * 0.5 + 2 * before, rtol=1e-6)


def test_compiled_adam_on_a_complex_parameter_equals_eager():
    # the real-view updates (tg.view_as_real writing through into z and its complex state)
    # trace into the one step program: same values as eager, which tests/api/test_optim.py
    # checks against torch's algorithm
    a = tg.tensor(np.array([[1.0 - 0.5j, -2.0 + 0.3j], [0.3 + 0.2j, 0.8 - 1.1j]]))
    runs = []
    for compiled in (False, True):
        z = tg.tensor(np.array([0.5 + 0.25j, -1.0 + 0.75j]), requires_grad=True)
        opt = tg.optim.Adam([z], lr=0.1, amsgrad=True, weight_decay=0.1)

        def step():
            ((a @ z - 1j).abs() ** 2).sum().backward()
            opt.step()

        fn = tg.compile(step) if compiled else step
        for _ in range(3):
            opt.zero_grad()
            fn()
        runs.append((z.detach().numpy().copy(),
                     {k: v.numpy().copy() for k, v in opt.state[z].items()}))
    (eager, eager_state), (comp, comp_state) = runs
    assert comp.dtype == np.complex128 and comp_state["exp_avg_sq"].dtype == np.complex128
    np.testing.assert_allclose(comp, eager, rtol=1e-12)
    for k in eager_state:
        np.testing.assert_allclose(comp_state[k], eager_state[k], rtol=1e-12)
    assert fn.traces == 2      # the first call, then with the state the first step created


@pytest.mark.parametrize("norm_type", [2.0, float("inf")])
def test_clip_grad_norm_inside_a_compiled_step_equals_eager(norm_type):
    def train(compiled, max_norm=0.5):
        tg.manual_seed(0)
        model = nn.Linear(4, 3)
        opt = tg.optim.SGD(model.parameters(), lr=0.5)
        x, y = tg.tensor(X), tg.tensor(Y)

        def step(x, y):
            (F.cross_entropy(model(x), y) * 10).backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm, norm_type=norm_type)
            opt.step()
            return norm

        fn = tg.compile(step) if compiled else step
        norms = []
        for _ in range(3):
            opt.zero_grad()
            norms.append(fn(x, y).item())
        return [p.detach().numpy().copy() for p in model.parameters()], norms, fn

    eager, eager_norms, _ = train(False)
    comp, comp_norms, fn = train(True)
    assert fn.traces == 1 and min(eager_norms) > 0.5          # every step clipped
    np.testing.assert_allclose(comp_norms, eager_norms, rtol=1e-5)
    for a, b in zip(comp, eager):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    unclipped, _, _ = train(False, max_norm=1e9)
    assert not np.allclose(unclipped[0], eager[0])
