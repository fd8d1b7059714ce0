"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, LBFGS and SGD's nesterov/dampening/maximize
against torch 2.13's trajectories (tests/api/_torch_optim_values.py), their state_dict round
trip, param groups, compiled steps, and the refusals (SparseAdam, fused, differentiable)."""
import io
import logging

import numpy as np
import pytest
from _torch_optim_values import FINAL32, LBFGS64, STEPS64

import tracegrad as tg
from tracegrad.ir.errors import TraceError
from tracegrad.optim import lr_scheduler as L

X = [[0.5, -1.0, 2.0, 0.3], [1.5, 0.2, -0.7, 1.0], [-0.4, 0.9, 0.1, -1.2]]
Y = [1.0, -2.0, 0.5]
W0 = [0.5, -1.2, 2.0, 0.1]
CASES = {
    "Adadelta": ("Adadelta", dict(lr=1.0)),
    "Adadelta_wd_max": ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1,
                                         maximize=True)),
    "Adamax": ("Adamax", dict(lr=0.05)),
    "Adamax_wd": ("Adamax", dict(lr=0.02, betas=(0.8, 0.95), weight_decay=0.1, eps=1e-6)),
    "NAdam": ("NAdam", dict(lr=0.05)),
    "NAdam_wd": ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.01)),
    "NAdam_dwd": ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True,
                                maximize=True)),
    "RAdam": ("RAdam", dict(lr=0.05)),
    "RAdam_fast": ("RAdam", dict(lr=0.05, betas=(0.9, 0.5))),      # rho_t > 5 from step 6
    "RAdam_dwd": ("RAdam", dict(lr=0.05, betas=(0.8, 0.6), weight_decay=0.1,
                                decoupled_weight_decay=True)),
    "RAdam_wd": ("RAdam", dict(lr=0.05, betas=(0.8, 0.6), weight_decay=0.1)),
    "ASGD": ("ASGD", dict(lr=0.05)),
    "ASGD_t0": ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1)),
    "Rprop": ("Rprop", dict(lr=0.05)),
    "Rprop_max": ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2),
                                maximize=True)),
    "SGD_nesterov": ("SGD", dict(lr=0.01, momentum=0.9, nesterov=True, weight_decay=0.05)),
    "SGD_dampening": ("SGD", dict(lr=0.01, momentum=0.8, dampening=0.3, maximize=True)),
}
LBFGS_CASES = {
    "plain": dict(lr=0.5, max_iter=5),
    "wolfe": dict(lr=1, max_iter=6, line_search_fn="strong_wolfe"),
    "wolfe_hist2": dict(lr=1, max_iter=10, history_size=2, line_search_fn="strong_wolfe"),
    "plain_hist": dict(lr=0.8, max_iter=20, history_size=3, tolerance_change=1e-12),
}


def _loss(w, x, y):
    r = x @ w - y
    return (r * r).mean() + 0.1 * (w ** 4).sum()


def _problem(dtype):
    w = tg.tensor(W0, dtype=dtype, requires_grad=True)
    return w, tg.tensor(X, dtype=dtype), tg.tensor(Y, dtype=dtype)


def _make(name, params):
    cls, kw = CASES[name]
    return getattr(tg.optim, cls)(params, **kw)


def _steps(opt, w, x, y, n, fn=None):
    out = []
    for _ in range(n):
        opt.zero_grad()
        if fn is None:
            _loss(w, x, y).backward()
            opt.step()
        else:
            fn(x, y)
        out.append(w.detach().numpy().copy())
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_float64_trajectory_matches_torch_each_step(name):
    w, x, y = _problem(tg.float64)
    got = _steps(_make(name, [w]), w, x, y, 8)
    np.testing.assert_allclose(got, STEPS64[name], rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", list(CASES))
def test_float32_final_parameters_match_torch(name):
    w, x, y = _problem(tg.float32)
    got = _steps(_make(name, [w]), w, x, y, 8)
    assert got[-1].dtype == np.float32
    np.testing.assert_allclose(got[-1], FINAL32[name], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["Adadelta", "Adamax_wd", "NAdam_dwd", "RAdam_fast",
                                  "ASGD_t0", "Rprop_max", "SGD_nesterov"])
def test_state_dict_round_trip_through_save_resumes_torchs_trajectory(name):
    w, x, y = _problem(tg.float64)
    opt = _make(name, [w])
    _steps(opt, w, x, y, 3)
    buf = io.BytesIO()
    tg.save({"w": w.detach(), "opt": opt.state_dict()}, buf)
    buf.seek(0)
    ckpt = tg.load(buf)
    w2 = ckpt["w"].clone().requires_grad_(True)
    opt2 = _make(name, [w2])
    opt2.load_state_dict(ckpt["opt"])
    state = opt2.state_dict()["state"][0]
    assert sorted(state) == sorted(opt.state_dict()["state"][0])
    # as torch 2.13's load_state_dict, every floating state tensor but "step" takes the
    # parameter's dtype: NAdam's mu_product and ASGD's eta and mu become float64, so the
    # resumed run leaves the uninterrupted one by their float32 rounding (torch's too)
    scalars = [k for k in ("mu_product", "eta", "mu") if k in state]
    assert all(state[k].dtype is tg.float64 for k in scalars)
    assert "step" not in state or state["step"].dtype is tg.float32
    got = _steps(opt2, w2, x, y, 5)
    rtol, atol = (1e-7, 1e-9) if scalars else (1e-10, 1e-13)
    np.testing.assert_allclose(got, STEPS64[name][3:], rtol=rtol, atol=atol)


# torch 2.13's state keys (and the dtype of its 0-d ones, all float32)
TORCH_STATE = {"Adadelta": ["step", "square_avg", "acc_delta"],
               "Adamax": ["step", "exp_avg", "exp_inf"],
               "NAdam": ["step", "mu_product", "exp_avg", "exp_avg_sq"],
               "RAdam": ["step", "exp_avg", "exp_avg_sq"],
               "ASGD": ["step", "eta", "mu", "ax"],
               "Rprop": ["step", "prev", "step_size"]}


@pytest.mark.parametrize("cls", list(TORCH_STATE))
def test_state_keys_and_scalar_dtypes_follow_torch(cls):
    w, x, y = _problem(tg.float64)
    opt = getattr(tg.optim, cls)([w])
    _loss(w, x, y).backward()
    opt.step()
    state = opt.state_dict()["state"][0]
    assert sorted(state) == sorted(TORCH_STATE[cls])
    for k, v in state.items():
        assert v.dtype is (tg.float32 if v.ndim == 0 else tg.float64), k


def test_param_groups_and_add_param_group_use_their_own_lr():
    w, x, y = _problem(tg.float64)
    b = tg.tensor([0.3], dtype=tg.float64, requires_grad=True)
    opt = tg.optim.NAdam([w], lr=0.05)
    opt.add_param_group({"params": [b], "lr": 0.0})
    assert opt.param_groups[1]["betas"] == (0.9, 0.999)
    for _ in range(8):
        opt.zero_grad()
        (_loss(w, x, y) + (b * b).sum()).backward()
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), STEPS64["NAdam"][-1], rtol=1e-10)
    assert b.item() == 0.3                      # lr 0: untouched
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [b]})


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_set_to_none(set_to_none):
    w, x, y = _problem(tg.float64)
    opt = tg.optim.Rprop([w])
    _loss(w, x, y).backward()
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert w.grad is None
    else:
        np.testing.assert_array_equal(w.grad.numpy(), np.zeros(4))


# ---- LBFGS ---------------------------------------------------------------------------------
def _lbfgs(kw, closure_fn=None):
    w, x, y = _problem(tg.float64)
    opt = tg.optim.LBFGS([w], **kw)

    def closure():
        opt.zero_grad()
        loss = _loss(w, x, y)
        loss.backward()
        return loss
    out = []
    for _ in range(3):
        loss = opt.step(closure_fn(opt, w, x, y) if closure_fn else closure)
        state = opt.state[w]
        out.append([float(loss), *w.detach().numpy(), state["func_evals"], state["n_iter"]])
    return out, opt


@pytest.mark.parametrize("name", list(LBFGS_CASES))
def test_lbfgs_matches_torch(name):
    got, _ = _lbfgs(LBFGS_CASES[name])
    want = LBFGS64[name]
    np.testing.assert_allclose(np.array(got)[:, :5], np.array(want)[:, :5], rtol=1e-9,
                               atol=1e-12)
    assert [r[5:] for r in got] == [r[5:] for r in want]     # func_evals, n_iter


def test_lbfgs_with_a_compiled_closure_matches_torch():
    def make(opt, w, x, y):
        def closure(x, y):
            opt.zero_grad()       # inside: .grad is None at each call, one trace serves all
            loss = _loss(w, x, y)
            loss.backward()
            return loss
        fn = tg.compile(closure)
        return lambda: fn(x, y)
    got, _ = _lbfgs(LBFGS_CASES["wolfe"], make)
    np.testing.assert_allclose(np.array(got)[:, :5], np.array(LBFGS64["wolfe"])[:, :5],
                               rtol=1e-9, atol=1e-12)


def test_lbfgs_state_dict_round_trip_continues_identically():
    kw = LBFGS_CASES["wolfe_hist2"]
    _, opt = _lbfgs(kw)
    w, x, y = _problem(tg.float64)
    w.data = opt.param_groups[0]["params"][0].detach().clone()
    buf = io.BytesIO()
    tg.save(opt.state_dict(), buf)
    buf.seek(0)
    opt2 = tg.optim.LBFGS([w], **kw)
    opt2.load_state_dict(tg.load(buf))
    assert opt2.state[w]["n_iter"] == opt.state[opt._params[0]]["n_iter"]

    def run(o, p):
        def closure():
            o.zero_grad()
            loss = _loss(p, x, y)
            loss.backward()
            return loss
        return float(o.step(closure))
    assert run(opt2, w) == run(opt, opt._params[0])
    np.testing.assert_array_equal(w.detach().numpy(), opt._params[0].detach().numpy())


def test_lbfgs_errors():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    b = tg.tensor([1.0], requires_grad=True)
    # torch 2.13: ValueError "LBFGS doesn't support per-parameter options (parameter groups)"
    with pytest.raises(ValueError, match=r"doesn't support per-parameter options"):
        tg.optim.LBFGS([{"params": [w]}, {"params": [b]}])
    opt = tg.optim.LBFGS([w])
    with pytest.raises(TypeError, match="requires a closure"):
        opt.step()

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    # inside tg.compile: a graph break (the step runs eagerly, with a warning) ...
    with pytest.warns(UserWarning, match="graph break.*LBFGS.step cannot run inside"):
        tg.compile(lambda: opt.step(closure))()
    assert opt.state[w]["n_iter"] > 0
    # ... and an error under fullgraph=True
    with pytest.raises(TraceError, match="cannot run inside tg.compile"):
        tg.compile(lambda: opt.step(closure), fullgraph=True)()
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        tg.optim.LBFGS([w], line_search_fn="backtracking").step(closure)


# ---- refusals and options ----------------------------------------------------------------
def test_sparse_adam_is_refused_pointing_to_adam():
    with pytest.raises(NotImplementedError, match=r"sparse gradients.*Use tg.optim.Adam"):
        tg.optim.SparseAdam([tg.tensor([1.0], requires_grad=True)])


@pytest.mark.parametrize("cls", ["Adam", "AdamW", "SGD", "Adagrad"])
def test_fused_true_is_refused(cls):
    with pytest.raises(NotImplementedError, match="fused=True.*tg.compile"):
        getattr(tg.optim, cls)([tg.tensor([1.0], requires_grad=True)], fused=True)


@pytest.mark.parametrize("cls", ["Adam", "AdamW", "SGD", "Adagrad", "RMSprop", "Adadelta",
                                 "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_foreach_accepted_and_differentiable_refused(cls):
    w, x, y = _problem(tg.float64)
    opt = getattr(tg.optim, cls)([w], foreach=True, maximize=False)
    _loss(w, x, y).backward()
    opt.step()
    assert "foreach" not in opt.param_groups[0]       # not stored (torch stores it)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(tg.optim, cls)([w], differentiable=True)


@pytest.mark.parametrize("make,match", [
    (lambda w: tg.optim.Adadelta([w], rho=1.5), "invalid rho value: 1.5"),
    (lambda w: tg.optim.Rprop([w], etas=(1.5, 2)), "invalid eta values: 1.5, 2"),
    (lambda w: tg.optim.NAdam([w], momentum_decay=-1), "invalid momentum_decay: -1"),
    (lambda w: tg.optim.RAdam([w], betas=(1.0, 0.9)), "invalid beta parameter at index 0"),
    (lambda w: tg.optim.ASGD([w], weight_decay=-1), "invalid weight_decay: -1"),
    (lambda w: tg.optim.Adamax([w], lr=-1), "invalid lr: -1"),
])
def test_bad_hyper_parameters_raise_value_error(make, match):
    # torch 2.13 raises ValueError "Invalid rho value: 1.5", "Invalid eta values: 1.5, 2", ...
    with pytest.raises(ValueError, match=match):
        make(tg.tensor([1.0], requires_grad=True))


# ---- compiled steps ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Adadelta_wd_max", "Adamax_wd", "NAdam_wd", "RAdam_fast",
                                  "ASGD_t0", "Rprop_max", "SGD_dampening"])
def test_compiled_step_with_a_schedule_equals_eager_without_retracing(name, caplog):
    def run(compiled):
        w, x, y = _problem(tg.float64)
        opt = _make(name, [w])
        sched = L.LambdaLR(opt, lambda e: 1.0 / (1 + e))

        def step(x, y):
            _loss(w, x, y).backward()
            opt.step()
        fn = tg.compile(step) if compiled else step
        out = []
        for _ in range(8):
            opt.zero_grad()
            fn(x, y)
            sched.step()
            out.append(w.detach().numpy().copy())
        return out, fn
    eager, _ = run(False)
    with caplog.at_level(logging.INFO, logger="tracegrad.compile"):
        comp, fn = run(True)
    # the first trace creates the optimizer state, the second reads it; the lr changing
    # at every later call is data
    assert fn.traces == 2
    assert sum("compiling step" in r.message for r in caplog.records) == 2
    np.testing.assert_allclose(comp, eager, rtol=1e-12, atol=1e-14)


# torch 2.13: view_as_real of a complex64 parameter after 8 steps on
# sum(real(z * conj(z) * (real(z) + 2))) from [1+2j, -0.5+0.25j]
TORCH_COMPLEX = [
    ('Adadelta', {},
     [0.9735084772109985, 1.9734187126159668, -0.47334909439086914, 0.22394251823425293]),
    ('Adamax', dict(lr=0.1),
     [0.3641223907470703, 1.3110756874084473, 0.08505388349294662, -0.08318555355072021]),
    ('NAdam', dict(lr=0.1, weight_decay=0.1),
     [0.4496428966522217, 1.4148651361465454, -0.013063553720712662, -0.016554608941078186]),
    ('RAdam', dict(lr=0.1, betas=(0.9, 0.5)),
     [-1.5632805824279785, -1.1498990058898926, 0.12673166394233704, -0.07573099434375763]),
    ('ASGD', dict(lr=0.1, t0=1),
     [-0.0126947071403265, 0.02651062421500683, -0.018759625032544136, 0.0070394971407949924]),
    ('Rprop', dict(lr=0.1),
     [-0.2915905714035034, 0.35009118914604187, -0.006399977952241898, 0.0012000016868114471]),
]


@pytest.mark.parametrize("cls,kw,expected", TORCH_COMPLEX, ids=[c for c, _, _ in TORCH_COMPLEX])
def test_complex_parameter_matches_torch(cls, kw, expected):
    z = tg.tensor([1 + 2j, -0.5 + 0.25j], dtype=tg.complex64, requires_grad=True)
    opt = getattr(tg.optim, cls)([z], **kw)
    for _ in range(8):
        opt.zero_grad()
        (z * z.conj() * (z.real + 2.0)).real.sum().backward()
        opt.step()
    np.testing.assert_allclose(tg.view_as_real(z.detach()).reshape(-1).numpy(), expected,
                               rtol=1e-6, atol=1e-7)
