"""`scheduler.step()` inside a function compiled by tg.compile: the call is a graph break
(the step runs eagerly, with the warning), and the schedule advances once per call, as in
torch eager.  Before, the trace moved `last_epoch` before the lr assignment refused, and the
eager re-run moved it again (StepLR's `last_epoch` 2 after one call)."""
import warnings

import pytest

import tracegrad as tg
from tracegrad.ir.errors import TraceError


def _step_fn(fullgraph=False):
    tg.manual_seed(0)
    m = tg.nn.Linear(3, 1)
    opt = tg.optim.SGD(m.parameters(), lr=0.1)
    sch = tg.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    @tg.compile(fullgraph=fullgraph)
    def step(x):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        sch.step()
        return loss
    return step, opt, sch


def test_schedule_advances_once_per_call():
    step, opt, sch = _step_fn()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step(tg.ones(2, 3))
    assert any("StepLR.step() was called inside a function being compiled" in str(w.message)
               for w in caught)
    # torch 2.13 eager, same loop: last_epoch 1, lr 0.05; then 2, 0.025
    assert (sch.last_epoch, opt.param_groups[0]["lr"]) == (1, 0.05)
    step(tg.ones(2, 3))
    assert (sch.last_epoch, opt.param_groups[0]["lr"]) == (2, 0.025)


def test_fullgraph_raises_before_the_schedule_moves():
    step, opt, sch = _step_fn(fullgraph=True)
    with pytest.raises(TraceError, match=r"Call scheduler.step\(\) outside the compiled"):
        step(tg.ones(2, 3))
    assert (sch.last_epoch, opt.param_groups[0]["lr"]) == (0, 0.1)


@pytest.mark.parametrize("make", [
    lambda o: tg.optim.lr_scheduler.ReduceLROnPlateau(o),
    lambda o: tg.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2),
    lambda o: tg.optim.lr_scheduler.SequentialLR(
        o, [tg.optim.lr_scheduler.ConstantLR(o), tg.optim.lr_scheduler.ExponentialLR(o, 0.9)],
        milestones=[1]),
    lambda o: tg.optim.lr_scheduler.ChainedScheduler(
        [tg.optim.lr_scheduler.ConstantLR(o), tg.optim.lr_scheduler.ExponentialLR(o, 0.9)]),
], ids=["plateau", "warm_restarts", "sequential", "chained"])
def test_every_scheduler_refuses_inside_a_trace(make):
    w = tg.zeros(2, requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    sch = make(opt)
    # ChainedScheduler has no last_epoch (torch 2.13 neither): its children's count
    epochs = lambda: [c.last_epoch for c in getattr(sch, "_schedulers", [sch])]  # noqa: E731
    before = (epochs(), opt.param_groups[0]["lr"])

    @tg.compile(fullgraph=True)
    def f(x):
        if isinstance(sch, tg.optim.lr_scheduler.ReduceLROnPlateau):
            sch.step(1.0)
        else:
            sch.step()
        return x * 2

    with pytest.raises(TraceError, match=r"\.step\(\) was called inside a function being"):
        f(tg.ones(2))
    assert (epochs(), opt.param_groups[0]["lr"]) == before
