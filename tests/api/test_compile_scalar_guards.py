"""tg.compile guards the Python numbers a trace baked in (issue 15: silently stale values).

Expected values: the same programs under torch 2.13 eager (and plain arithmetic):
a hand-written SGD whose lr a StepLR halves gives 0.9, 0.85, 0.825; a global lr
divided by 4 after each step gives 0.9, 0.875, 0.86875.
"""
import logging

import numpy as np

import tracegrad as tg

lr = 0.1   # read by _global_lr_step through its globals


def _global_lr_step(v, x):
    loss = (v * x).sum()
    loss.backward()
    with tg.no_grad():
        v.data.add_(v.grad, alpha=-lr)
        v.grad = None
    return loss


def test_a_global_number_the_step_reads_retraces_when_it_changes(caplog):
    global lr
    lr = 0.1
    v = tg.nn.Parameter(tg.ones(2))
    step = tg.compile(_global_lr_step)
    seen = []
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        for _ in range(3):
            step(v, tg.ones(2))
            seen.append(v.detach().numpy()[0])
            lr /= 4
    np.testing.assert_allclose(seen, [0.9, 0.875, 0.86875], rtol=1e-6)   # torch 2.13
    assert step.traces == 3      # one per value of lr
    assert "global lr changed: 0.1 -> 0.025" in caplog.text


class _MySGD(tg.optim.Optimizer):
    def __init__(self, params, lr):
        super().__init__(params, dict(lr=lr))

    @tg.no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                p.add_(p.grad, alpha=-g["lr"])


def test_a_hand_written_optimizer_reads_its_scheduled_lr():
    w = tg.nn.Parameter(tg.ones(2))
    opt = _MySGD([w], lr=0.1)
    sched = tg.optim.lr_scheduler.StepLR(opt, 1, gamma=0.5)

    @tg.compile
    def step(x):
        opt.zero_grad()
        loss = (w * x).sum()
        loss.backward()
        opt.step()
        return loss

    seen = []
    for _ in range(3):
        step(tg.ones(2))
        sched.step()
        seen.append(w.detach().numpy()[0])
    np.testing.assert_allclose(seen, [0.9, 0.85, 0.825], rtol=1e-6)   # torch 2.13


def test_a_closure_number_and_a_module_attribute_are_guarded():
    def make():
        k = 2.0

        def f(x):
            return x * k

        def set_k(value):
            nonlocal k
            k = value
        return f, set_k

    f, set_k = make()
    cf = tg.compile(f)
    np.testing.assert_allclose(cf(tg.ones(2)).numpy(), [2.0, 2.0])
    set_k(3.0)
    np.testing.assert_allclose(cf(tg.ones(2)).numpy(), [3.0, 3.0])   # eager: x * 3
    assert cf.traces == 2
    drop = tg.nn.Dropout(p=0.0)
    g = tg.compile(drop)
    x = tg.ones(1000)
    np.testing.assert_allclose(g(x).numpy(), np.ones(1000))
    drop.p = 1.0            # torch: every element dropped
    np.testing.assert_allclose(g(x).numpy(), np.zeros(1000))


def test_a_number_the_step_itself_changes_does_not_retrace_every_call():
    box = type("Box", (), {})()
    box.calls = 0

    def f(x):
        box.calls += 1          # the step's own state: not an input of the program
        return x * 2

    c = tg.compile(f)
    for _ in range(4):
        c(tg.ones(2))
    assert c.traces == 1
    assert box.calls == 1       # the Python side effect ran while tracing only


# ---- numbers inside a list or dict, and tuples of numbers (issue 15: "dict entries") --------
CFG = {"lr": 0.1, "name": "sgd"}
BETAS = (0.5, 2.0)


def test_numbers_in_a_closure_list_a_global_dict_and_a_global_tuple_are_guarded(caplog):
    global BETAS
    CFG["lr"], BETAS = 0.1, (0.5, 2.0)
    lr = [0.1]            # the script anneals lr[0] in place: the list keeps its identity
    v = tg.nn.Parameter(tg.ones(2))

    @tg.compile
    def step(x):
        loss = (v * x).sum()
        loss.backward()
        with tg.no_grad():
            v.data.add_(v.grad, alpha=-(lr[0] + CFG["lr"]) * BETAS[0])
            v.grad = None
        return loss

    seen = []
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        for change in ("none", "list", "dict", "tuple"):
            if change == "list":
                lr[0] = 0.3
            elif change == "dict":
                CFG["lr"] = 0.5
            elif change == "tuple":
                BETAS = (1.0, 2.0)
            step(tg.ones(2))
            seen.append(float(v.detach().numpy()[0]))
    # plain arithmetic (torch 2.13 eager gives the same): 1 - 0.1, then - 0.2, - 0.4, - 0.8
    np.testing.assert_allclose(seen, [0.9, 0.7, 0.3, -0.5], rtol=1e-6)
    assert step.traces == 4
    assert "closure variable lr[0] changed: 0.1 -> 0.3" in caplog.text
    assert "global CFG['lr'] changed: 0.1 -> 0.5" in caplog.text
    # the fourth retrace logs the first cached program's failed guard (CFG), so the tuple's
    # own reason is checked on a function that reads only it
    @tg.compile
    def scaled(x):
        return x * BETAS[1]

    BETAS = (0.5, 2.0)
    first = scaled(tg.ones(1)).item()
    BETAS = (0.5, 3.0)
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        assert (first, scaled(tg.ones(1)).item()) == (2.0, 3.0)
    assert "global BETAS changed: (0.5, 2.0) -> (0.5, 3.0)" in caplog.text


def test_a_list_the_step_appends_to_does_not_retrace():
    history = []
    v = tg.nn.Parameter(tg.ones(2))

    @tg.compile
    def step(x):
        loss = (v * x).sum()
        history.append(1.0)     # the call's own state: appended entries are new, not changed
        return loss

    for _ in range(3):
        step(tg.ones(2))
    assert step.traces == 1
