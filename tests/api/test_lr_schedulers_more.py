"""MultiStepLR, ExponentialLR, LinearLR, ConstantLR, PolynomialLR, MultiplicativeLR,
CosineAnnealingWarmRestarts, SequentialLR, ChainedScheduler, CyclicLR, ReduceLROnPlateau:
30-step lr (and momentum) sequences equal to torch 2.13's (tests/api/_torch_lr_values.py,
recorded by running CASES below under torch), state_dict resumption, torch's errors."""
import io
import warnings

import pytest
from _torch_lr_values import LRS, MOMENTA

import tracegrad as tg
from tracegrad.optim import lr_scheduler as L

# the metric ReduceLROnPlateau sees at each of the 30 steps
METRICS = [1.0, 0.9, 0.95, 0.95, 0.96, 0.97, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6,
           0.6, 0.4, 0.41, 0.42, 0.43, 0.44, 0.45, 0.46, 0.47, 0.48, 0.49, 0.5, 0.51, 0.52, 0.53]


def _optimizer(kind="sgd"):
    a, b = tg.zeros(2, requires_grad=True), tg.zeros(1, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "adam":
        return tg.optim.Adam(groups, lr=0.1)
    return tg.optim.SGD(groups, lr=0.1, momentum=0.9)


CASES = {
    "MultiStepLR": lambda o: L.MultiStepLR(o, milestones=[3, 7, 7, 20], gamma=0.5),
    "ExponentialLR": lambda o: L.ExponentialLR(o, gamma=0.9),
    "LinearLR": lambda o: L.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=10),
    "ConstantLR": lambda o: L.ConstantLR(o, factor=0.3, total_iters=4),
    "PolynomialLR": lambda o: L.PolynomialLR(o, total_iters=12, power=2.0),
    "MultiplicativeLR": lambda o: L.MultiplicativeLR(o, lambda e: 0.95 if e % 2 else 1.01),
    "CosineWarmRestarts": lambda o: L.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2,
                                                                  eta_min=0.001),
    "CosineWarmRestarts1": lambda o: L.CosineAnnealingWarmRestarts(o, T_0=7),
    "Sequential": lambda o: L.SequentialLR(o, [L.LinearLR(o, start_factor=0.1, total_iters=5),
                                               L.CosineAnnealingLR(o, T_max=10, eta_min=0.01),
                                               L.ExponentialLR(o, gamma=0.8)],
                                           milestones=[5, 15]),
    "Chained": lambda o: L.ChainedScheduler([L.ConstantLR(o, factor=0.5, total_iters=3),
                                             L.ExponentialLR(o, gamma=0.9),
                                             L.MultiStepLR(o, milestones=[10, 20])]),
    "CyclicTriangular": lambda o: L.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2],
                                             step_size_up=4, step_size_down=3),
    "CyclicTriangular2": lambda o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3,
                                              mode="triangular2", base_momentum=0.7,
                                              max_momentum=0.95),
    "CyclicExpRange": lambda o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5,
                                           mode="exp_range", gamma=0.95),
    "CyclicNoMomentum": lambda o: L.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2,
                                             cycle_momentum=False),
    "CyclicAdam": lambda o: L.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=4),
    "Plateau": lambda o: L.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1,
                                             min_lr=[0.01, 0.02]),
    "PlateauMaxAbs": lambda o: L.ReduceLROnPlateau(o, mode="max", factor=0.3, patience=1,
                                                   threshold=0.05, threshold_mode="abs",
                                                   eps=1e-3),
}


def _momentum(group):
    return group["betas"][0] if "betas" in group else group["momentum"]


def _run(name, steps=30, start=0, opt=None, sched=None):
    opt = opt or _optimizer("adam" if name == "CyclicAdam" else "sgd")
    sched = sched or CASES[name](opt)
    lrs, moms = [list(sched.get_last_lr())], [_momentum(opt.param_groups[0])]
    for i in range(start, start + steps):
        opt.step()
        sched.step(METRICS[i]) if "Plateau" in name else sched.step()
        lrs.append(list(sched.get_last_lr()))
        moms.append(_momentum(opt.param_groups[0]))
        assert [g["lr"] for g in opt.param_groups] == lrs[-1]
    return lrs, moms, opt, sched


@pytest.mark.parametrize("name", list(CASES))
def test_lr_sequence_equals_torch(name):
    lrs, moms, _, _ = _run(name)
    want0, want1 = LRS[name]
    assert [r[0] for r in lrs] == want0           # exact: torch's float arithmetic
    assert [r[1] for r in lrs] == want1
    if name in MOMENTA:
        assert moms == MOMENTA[name]


@pytest.mark.parametrize("name", ["MultiStepLR", "LinearLR", "MultiplicativeLR",
                                  "CosineWarmRestarts", "Sequential", "Chained",
                                  "CyclicTriangular2", "Plateau"])
def test_state_dict_resumes_the_torch_sequence(name):
    _, _, opt, sched = _run(name, steps=11)
    buf = io.BytesIO()
    tg.save({"opt": opt.state_dict(), "sched": sched.state_dict()}, buf)
    buf.seek(0)
    ckpt = tg.load(buf)
    opt2 = _optimizer()
    sched2 = CASES[name](opt2)        # the usual resume order: build both, then load both
    opt2.load_state_dict(ckpt["opt"])
    sched2.load_state_dict(ckpt["sched"])
    lrs, moms, _, _ = _run(name, steps=19, start=11, opt=opt2, sched=sched2)
    want0, want1 = LRS[name]
    assert [r[0] for r in lrs] == want0[11:] and [r[1] for r in lrs] == want1[11:]


def test_get_lr_outside_step_warns_as_torch():
    sched = L.ExponentialLR(_optimizer(), gamma=0.5)
    # torch 2.13: UserWarning "To get the last learning rate computed by the scheduler,
    # please use `get_last_lr()`."
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()


def test_scheduler_step_before_optimizer_step_warns():
    opt = _optimizer()
    sched = L.MultiStepLR(opt, milestones=[1])
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()


def test_reduce_on_plateau_takes_a_tensor_metric_and_keeps_min_lr():
    opt = _optimizer()
    sched = L.ReduceLROnPlateau(opt, patience=0, factor=0.1, min_lr=0.002)
    for _ in range(5):
        sched.step(tg.tensor(1.0))
    assert sched.get_last_lr() == [0.002, 0.002]   # 0.1 -> 0.01 -> 0.002 (floor), 0.05 -> ...
    assert sched.num_bad_epochs == 0 and sched.best == 1.0


@pytest.mark.parametrize("make,exc,match", [
    # torch 2.13's messages
    (lambda o: L.ConstantLR(o, factor=1.5), ValueError,
     "Constant multiplicative factor expected to be between 0 and 1."),
    (lambda o: L.LinearLR(o, start_factor=0), ValueError,
     "Starting multiplicative factor expected to be greater than 0"),
    (lambda o: L.LinearLR(o, end_factor=2), ValueError,
     "Ending multiplicative factor expected to be between 0 and 1."),
    (lambda o: L.CosineAnnealingWarmRestarts(o, T_0=0), ValueError,
     "Expected positive integer T_0, but got 0"),
    (lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), ValueError,
     "Expected integer T_mult >= 1, but got 0"),
    (lambda o: L.CyclicLR(o, 0.01, 0.1, mode="sawtooth"), ValueError,
     "mode is invalid and scale_fn is None"),
    (lambda o: L.CyclicLR(tg.optim.Adagrad([tg.zeros(1, requires_grad=True)]), 0.01, 0.1),
     ValueError, "optimizer must support momentum or beta1"),
    (lambda o: L.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
    (lambda o: L.ReduceLROnPlateau(o, mode="avg"), ValueError, "mode avg is unknown!"),
    (lambda o: L.ReduceLROnPlateau(o, threshold_mode="x"), ValueError,
     "threshold mode x is unknown!"),
    (lambda o: L.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError, "expected 2 min_lrs, got 1"),
    (lambda o: L.MultiplicativeLR(o, [lambda e: 1.0]), ValueError,
     "Expected 2 lr_lambdas, but got 1"),
    (lambda o: L.SequentialLR(o, [L.ExponentialLR(o, 0.9)], milestones=[3]), ValueError,
     "expects number of schedulers provided to be one more than the number of milestone"),
    (lambda o: L.SequentialLR(o, [L.ReduceLROnPlateau(o), L.ExponentialLR(o, 0.9)],
                              milestones=[3]), ValueError,
     "does not support `ReduceLROnPlateau`"),
    (lambda o: L.ChainedScheduler([L.ExponentialLR(o, 0.9),
                                   L.ExponentialLR(_optimizer(), 0.9)]), ValueError,
     "expects all schedulers to belong to the same optimizer"),
    (lambda o: L.ChainedScheduler([]), ValueError, "expects at least one scheduler"),
])
def test_bad_arguments_raise_torchs_errors(make, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match.replace("(", "\\(").replace(")", "\\)")):
            make(_optimizer())
