"""tg.optim.lr_scheduler: lr (and momentum) sequences equal torch 2.13's, state_dict, resume,
call-order warning, errors."""
import math
import warnings

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.optim import lr_scheduler as L


def _sequence(make_opt, make_sched, n, key=None):
    w = tg.tensor([0.0], requires_grad=True)
    opt = make_opt(w)
    sched = make_sched(opt)
    out = []
    for _ in range(n):
        opt.step()
        sched.step()
        lr = sched.get_last_lr()[0]
        out.append(lr if key is None else (lr, opt.param_groups[0][key]))
    return out


def _sgd(w, **kw):
    return tg.optim.SGD([w], lr=0.1, **kw)


# torch 2.13 gives these (opt.step(); sched.step(); sched.get_last_lr()[0] for each step)
TORCH_STEP = [0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125, 0.00625]
TORCH_COS = [0.09140576474687263, 0.06890576474687263, 0.04109423525312736, 0.018594235253127367,
             0.01, 0.018594235253127367, 0.04109423525312739, 0.06890576474687267,
             0.09140576474687269, 0.10000000000000006, 0.09140576474687272, 0.06890576474687268]
TORCH_LAMBDA = [0.1, 0.08100000000000002, 0.08290000000000002, 0.06561, 0.06904900000000001,
                0.05314410000000001, 0.05782969000000002, 0.04304672100000001,
                0.048742048900000015, 0.03486784401000001, 0.04138105960900001,
                0.028242953648100012]
TORCH_ONECYCLE_SGD = [
    (0.4223411137347358, 0.9101728006526316), (0.9602614247226174, 0.8541394349247273),
    (0.9797465678213015, 0.8520253513192751), (0.8844757247686303, 0.8615524737330319),
    (0.7260870492975283, 0.8773914046358657), (0.5305827080875998, 0.8969419169589078),
    (0.3300580289872949, 0.9169944650791307), (0.15743251279950787, 0.9342570857483922),
    (0.041045543206290856, 0.9458958292626879), (4e-06, 0.95)]
TORCH_ONECYCLE_ADAM_3PHASE = [
    (0.2333333333333333, (0.9055555555555556, 0.999)),
    (0.44666666666666666, (0.861111111111111, 0.999)),
    (0.34, (0.8833333333333333, 0.999)), (0.12666666666666665, (0.9277777777777777, 0.999)),
    (0.0186668, (0.95, 0.999)), (0.016000399999999998, (0.95, 0.999)), (0.013334, (0.95, 0.999)),
    (0.0106676, (0.95, 0.999)), (0.0080012, (0.95, 0.999)), (0.005334800000000001, (0.95, 0.999)),
    (0.002668399999999998, (0.95, 0.999)), (1.9999999999985307e-06, (0.95, 0.999))]


def test_step_lr_matches_torch():
    assert _sequence(_sgd, lambda o: L.StepLR(o, step_size=3, gamma=0.5), 12) == TORCH_STEP


def test_cosine_annealing_matches_torch_float_for_float():
    seq = _sequence(_sgd, lambda o: L.CosineAnnealingLR(o, T_max=5, eta_min=0.01), 12)
    assert seq == TORCH_COS      # torch's recursive form, so the floats agree exactly
    closed = [0.01 + 0.09 * (1 + math.cos(math.pi * t / 5)) / 2 for t in range(1, 13)]
    np.testing.assert_allclose(seq, closed, rtol=1e-12)


def test_lambda_lr_matches_torch():
    seq = _sequence(_sgd, lambda o: L.LambdaLR(o, lambda e: 0.9 ** e + 0.1 * (e % 2)), 12)
    assert seq == TORCH_LAMBDA


def test_one_cycle_cycles_sgd_momentum_like_torch():
    seq = _sequence(lambda w: _sgd(w, momentum=0.9),
                    lambda o: L.OneCycleLR(o, max_lr=1.0, total_steps=11), 10, key="momentum")
    np.testing.assert_allclose(np.array(seq), np.array(TORCH_ONECYCLE_SGD), rtol=1e-13)


def test_one_cycle_three_phase_linear_cycles_adam_beta1_like_torch():
    seq = _sequence(lambda w: tg.optim.Adam([w], lr=0.1),
                    lambda o: L.OneCycleLR(o, max_lr=0.5, total_steps=13, three_phase=True,
                                           anneal_strategy="linear", pct_start=0.25),
                    12, key="betas")
    got = [(lr, b1, b2) for lr, (b1, b2) in seq]
    want = [(lr, b1, b2) for lr, (b1, b2) in TORCH_ONECYCLE_ADAM_3PHASE]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12)


def test_one_cycle_errors():
    w = tg.tensor([0.0], requires_grad=True)
    with pytest.raises(ValueError, match="total_steps OR"):
        L.OneCycleLR(_sgd(w), max_lr=1.0)
    with pytest.raises(ValueError, match="momentum or beta1"):
        L.OneCycleLR(tg.optim.Adagrad([w]), max_lr=1.0, total_steps=4)
    with pytest.raises(ValueError, match="anneal_strategy"):
        L.OneCycleLR(_sgd(w), max_lr=1.0, total_steps=4, anneal_strategy="exp")
    opt = _sgd(w, momentum=0.9)
    s = L.OneCycleLR(opt, max_lr=1.0, total_steps=2)
    opt.step()
    s.step()
    s.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        s.step()


def test_state_dict_has_torchs_keys_and_resumes():
    w = tg.tensor([0.0], requires_grad=True)
    opt = _sgd(w)
    s = L.StepLR(opt, 2)
    # torch 2.13 gives this StepLR(SGD(lr=0.1), 2).state_dict()
    assert s.state_dict() == {"step_size": 2, "gamma": 0.1, "base_lrs": [0.1], "last_epoch": 0,
                              "_step_count": 1, "_is_initial": False,
                              "_get_lr_called_within_step": False, "_last_lr": [0.1]}
    w2 = tg.tensor([0.0], requires_grad=True)
    opt_a = tg.optim.Adam([w2], lr=0.1)
    sched_a = L.OneCycleLR(opt_a, max_lr=1.0, total_steps=10)
    for _ in range(4):
        opt_a.step()
        sched_a.step()
    opt_sd, sched_sd = opt_a.state_dict(), sched_a.state_dict()
    rest_a = []
    for _ in range(4):
        opt_a.step()
        sched_a.step()
        rest_a.append((sched_a.get_last_lr()[0], opt_a.param_groups[0]["betas"]))
    w3 = tg.tensor([0.0], requires_grad=True)
    opt_b = tg.optim.Adam([w3], lr=0.1)
    sched_b = L.OneCycleLR(opt_b, max_lr=1.0, total_steps=10)   # as torch: scheduler first
    opt_b.load_state_dict(opt_sd)
    sched_b.load_state_dict(sched_sd)
    rest_b = []
    for _ in range(4):
        opt_b.step()
        sched_b.step()
        rest_b.append((sched_b.get_last_lr()[0], opt_b.param_groups[0]["betas"]))
    assert rest_a == rest_b


def test_last_epoch_resume_needs_initial_lr():
    w = tg.tensor([0.0], requires_grad=True)
    with pytest.raises(KeyError, match="initial_lr"):
        L.StepLR(_sgd(w), 2, last_epoch=3)
    opt = _sgd(w)
    opt.param_groups[0]["initial_lr"] = 0.1
    s = L.CosineAnnealingLR(opt, T_max=5, eta_min=0.01, last_epoch=2)
    assert (s.get_last_lr(), s.last_epoch) == ([0.1], 3)   # construction keeps the lr
    opt.step()
    s.step()
    # torch 2.13 gives 0.034875388202501904 (closed form at epoch 4), then 0.01
    assert s.get_last_lr() == [0.034875388202501904]
    opt.step()
    s.step()
    assert s.get_last_lr() == [0.01]
    assert s.last_epoch == 5


def test_lambda_lr_state_dict_saves_callable_objects_only():
    class Warmup:
        def __init__(self, n):
            self.n = n

        def __call__(self, e):
            return min(1.0, (e + 1) / self.n)

    w, v = tg.tensor([0.0], requires_grad=True), tg.tensor([0.0], requires_grad=True)
    opt = tg.optim.SGD([{"params": [w]}, {"params": [v]}], lr=0.1)
    s = L.LambdaLR(opt, [Warmup(4), lambda e: 1.0])
    sd = s.state_dict()
    assert sd["lr_lambdas"] == [{"n": 4}, None]
    sd["lr_lambdas"][0]["n"] = 2
    s.load_state_dict(sd)
    assert s.lr_lambdas[0].n == 2 and "lr_lambdas" in sd
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        L.LambdaLR(opt, [lambda e: 1.0])


def test_warns_when_scheduler_steps_before_optimizer():
    w = tg.tensor([0.0], requires_grad=True)
    s = L.StepLR(_sgd(w), 2)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    w2 = tg.tensor([0.0], requires_grad=True)
    opt = _sgd(w2)
    s = L.StepLR(opt, 2)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()
    with pytest.warns(UserWarning, match="get_last_lr"):
        s.get_lr()


def test_not_an_optimizer():
    with pytest.raises(TypeError, match="is not an Optimizer"):
        L.StepLR(object(), 2)
