"""tg.optim: each optimizer's update rule against a NumPy re-implementation of torch's rule
(float64, tight tolerance) and against torch 2.13 numbers (float32); param groups,
zero_grad, state_dict / load_state_dict, add_param_group, errors."""
import numpy as np
import pytest

import tracegrad as tg

A = np.array([[1.0, -2.0, 0.5], [0.3, 0.8, -1.5]])
Y = np.array([0.7, -1.1])
W0, B0 = np.array([0.5, -1.0, 2.0]), np.array([0.1, -0.3])


def _grads(w, b):
    """d/dw, d/db of sum((A @ w + b - Y)**2)."""
    r = A @ w + b - Y
    return 2 * A.T @ r, 2 * r


def _tg_run(cls, steps, groups=None, **kw):
    w = tg.tensor(W0, requires_grad=True)
    b = tg.tensor(B0, requires_grad=True)
    opt = cls(groups(w, b) if groups else [w, b], **kw)
    for _ in range(steps):
        opt.zero_grad()
        ((tg.tensor(A) @ w + b - tg.tensor(Y)) ** 2).sum().backward()
        opt.step()
    return w.detach().numpy(), b.detach().numpy(), opt


# ---- NumPy references: torch's single-tensor update rules, one parameter at a time ----------
def _sgd(p, g, s, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
         maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    if momentum:
        s["buf"] = g.copy() if "buf" not in s else momentum * s["buf"] + (1 - dampening) * g
        g = g + momentum * s["buf"] if nesterov else s["buf"]
    return p - lr * g


def _adam(p, g, s, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
          maximize=False, decoupled=False):
    b1, b2 = betas
    g = -g if maximize else g
    t = s["t"] = s.get("t", 0) + 1
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    m = s["m"] = s.get("m", 0) * b1 + (1 - b1) * g
    v = s["v"] = s.get("v", 0) * b2 + (1 - b2) * g * g
    if amsgrad:
        v = s["vmax"] = np.maximum(s.get("vmax", 0), v)
    return p - lr / (1 - b1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - b2 ** t) + eps)


def _rmsprop(p, g, s, lr, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
             centered=False, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    v = s["v"] = alpha * s.get("v", 0) + (1 - alpha) * g * g
    if centered:
        a = s["a"] = alpha * s.get("a", 0) + (1 - alpha) * g
        avg = np.sqrt(v - a * a) + eps
    else:
        avg = np.sqrt(v) + eps
    if momentum > 0:
        s["buf"] = momentum * s.get("buf", 0) + g / avg
        return p - lr * s["buf"]
    return p - lr * g / avg


def _adagrad(p, g, s, lr, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
             eps=1e-10, maximize=False):
    g = -g if maximize else g
    t = s["t"] = s.get("t", 0) + 1
    g = g + weight_decay * p
    s["sum"] = s.get("sum", initial_accumulator_value) + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s["sum"]) + eps)


def _np_run(rule, steps, **kw):
    w, b, sw, sb = W0.copy(), B0.copy(), {}, {}
    for _ in range(steps):
        gw, gb = _grads(w, b)
        w, b = rule(w, gw, sw, **kw), rule(b, gb, sb, **kw)
    return w, b


CASES = [
    (tg.optim.SGD, _sgd, dict(lr=0.05)),
    (tg.optim.SGD, _sgd, dict(lr=0.05, momentum=0.9, weight_decay=0.1)),
    (tg.optim.SGD, _sgd, dict(lr=0.05, momentum=0.9, nesterov=True)),
    (tg.optim.SGD, _sgd, dict(lr=0.05, momentum=0.5, dampening=0.3, maximize=True)),
    (tg.optim.Adam, _adam, dict(lr=0.1)),
    (tg.optim.Adam, _adam, dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    (tg.optim.Adam, _adam, dict(lr=0.1, eps=1e-3, maximize=True)),
    (tg.optim.AdamW, _adam, dict(lr=0.1, weight_decay=0.2, decoupled=True)),
    (tg.optim.AdamW, _adam, dict(lr=0.1, weight_decay=0.2, amsgrad=True, decoupled=True)),
    (tg.optim.RMSprop, _rmsprop, dict(lr=0.01)),
    (tg.optim.RMSprop, _rmsprop, dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1)),
    (tg.optim.RMSprop, _rmsprop, dict(lr=0.01, centered=True, eps=1e-4, maximize=True)),
    (tg.optim.Adagrad, _adagrad, dict(lr=0.1)),
    (tg.optim.Adagrad, _adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                                      initial_accumulator_value=0.5, eps=1e-6)),
]


@pytest.mark.parametrize("cls,rule,kw", CASES,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_update_rule_matches_numpy_reference(cls, rule, kw):
    tg_kw = {k: v for k, v in kw.items() if k != "decoupled"}
    w, b, _ = _tg_run(cls, 5, **tg_kw)
    ref_w, ref_b = _np_run(rule, 5, **kw)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(b, ref_b, rtol=1e-12, atol=1e-13)
    assert not np.allclose(w, W0)   # it moved


# torch 2.13 gives these after 3 steps on loss = (w**3).sum() from w = [1, -2, 3] (float32)
TORCH_CUBE = [
    (tg.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
     [-0.21739628911018372, -155.00747680664062, -38.67975997924805]),
    (tg.optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.2, maximize=True),
     [1.7303050756454468, -0.507454514503479, 15.155817985534668]),
    (tg.optim.Adam, dict(lr=0.1, amsgrad=True, weight_decay=0.1),
     [0.7040482759475708, -2.3004941940307617, 2.7008626461029053]),
    (tg.optim.AdamW, dict(lr=0.1, betas=(0.8, 0.99)),
     [0.7036293745040894, -2.29512095451355, 2.6929028034210205]),
    (tg.optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.05),
     [0.6841323375701904, -2.353623390197754, 2.6661317348480225]),
    (tg.optim.Adagrad, dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1),
     [0.7915364503860474, -2.2342145442962646, 2.7789061069488525]),
]


@pytest.mark.parametrize("cls,kw,expected", TORCH_CUBE,
                         ids=[c.__name__ for c, _, _ in TORCH_CUBE])
def test_matches_torch_float32(cls, kw, expected):
    w = tg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    opt = cls([w], **kw)
    for _ in range(3):
        opt.zero_grad()
        (w * w * w).sum().backward()
        opt.step()
    assert w.dtype is tg.float32
    np.testing.assert_allclose(w.detach().numpy(), expected, rtol=2e-6)


def test_param_groups_use_their_own_hyper_parameters():
    w, b, opt = _tg_run(tg.optim.Adam, 4, lr=0.1,
                        groups=lambda w, b: [{"params": [w]}, {"params": b, "lr": 0.02,
                                                               "amsgrad": True}])
    sw, sb, rw, rb = {}, {}, W0.copy(), B0.copy()
    for _ in range(4):
        gw, gb = _grads(rw, rb)
        rw, rb = _adam(rw, gw, sw, lr=0.1), _adam(rb, gb, sb, lr=0.02, amsgrad=True)
    np.testing.assert_allclose(w, rw, rtol=1e-12)
    np.testing.assert_allclose(b, rb, rtol=1e-12)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.02]
    assert "max_exp_avg_sq" in opt.state[opt.param_groups[1]["params"][0]]


def test_changing_lr_between_steps_is_used():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1)
    for lr in (0.1, 0.5, 0.0):
        opt.param_groups[0]["lr"] = lr
        w.grad = tg.tensor([1.0, 1.0])
        opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [1.0 - 0.6, 2.0 - 0.6], rtol=1e-6)
    opt.param_groups[0].update(lr=1.0)     # dict.update goes through the same path
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), [-0.6, 0.4], rtol=1e-6)


def test_params_without_grad_are_skipped_and_zero_grad():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    v = tg.tensor([3.0], requires_grad=True)
    opt = tg.optim.Adam([w, v], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    assert v.grad is None and v.detach().numpy().tolist() == [3.0] and v not in opt.state
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.numpy().tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert w.grad is None


def test_step_closure_returns_the_loss():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 5.0
    np.testing.assert_allclose(w.detach().numpy(), [0.5, 1.0])


# ---- state_dict ----------------------------------------------------------------------------
def test_state_dict_has_torchs_format():
    _, _, opt = _tg_run(tg.optim.Adam, 2, lr=0.1, weight_decay=0.01,
                        groups=lambda w, b: [{"params": [w]}, {"params": [b], "lr": 0.5}])
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 1]
    assert sorted(sd["state"][0]) == ["exp_avg", "exp_avg_sq", "step"]
    assert sd["state"][0]["step"].dtype is tg.float32 and sd["state"][0]["step"].item() == 2.0
    assert sd["state"][1]["exp_avg"].shape == (2,)
    g0, g1 = sd["param_groups"]
    # torch 2.13's Adam param group keys, less foreach/capturable/differentiable/fused
    assert list(g0) == ["lr", "betas", "eps", "weight_decay", "amsgrad", "maximize",
                        "decoupled_weight_decay", "params"]
    assert g0["params"] == [0] and g1["params"] == [1] and g1["lr"] == 0.5
    assert g0["betas"] == (0.9, 0.999)


@pytest.mark.parametrize("cls,kw", [(tg.optim.SGD, dict(lr=0.05, momentum=0.9)),
                                    (tg.optim.Adam, dict(lr=0.1, amsgrad=True)),
                                    (tg.optim.RMSprop, dict(lr=0.01, momentum=0.3,
                                                            centered=True)),
                                    (tg.optim.Adagrad, dict(lr=0.1, lr_decay=0.1))])
def test_load_state_dict_resumes_exactly(cls, kw):
    w_full, b_full, _ = _tg_run(cls, 6, **kw)
    w_half, b_half, opt = _tg_run(cls, 3, **kw)
    sd = opt.state_dict()
    w = tg.tensor(w_half, requires_grad=True)
    b = tg.tensor(b_half, requires_grad=True)
    fresh = cls([w, b], **{**kw, "lr": 123.0})   # the lr comes back from the state_dict
    fresh.load_state_dict(sd)
    assert fresh.param_groups[0]["lr"] == kw["lr"]
    for st in fresh.state.values():              # copies, not the other optimizer's tensors
        assert all(t is not o for t, o in zip(st.values(), sd["state"][0].values()))
    for _ in range(3):
        fresh.zero_grad()
        ((tg.tensor(A) @ w + b - tg.tensor(Y)) ** 2).sum().backward()
        fresh.step()
    np.testing.assert_array_equal(w.detach().numpy(), w_full)
    np.testing.assert_array_equal(b.detach().numpy(), b_full)


def test_load_state_dict_casts_state_to_param_dtype_but_not_step():
    w = tg.tensor([1.0, 2.0], requires_grad=True)
    opt = tg.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    opt.step()
    w64 = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    opt64 = tg.optim.Adam([w64], lr=0.1)
    opt64.load_state_dict(opt.state_dict())
    assert opt64.state[w64]["exp_avg"].dtype is tg.float64
    assert opt64.state[w64]["step"].dtype is tg.float32


def test_load_state_dict_errors():
    w, v = tg.tensor([1.0], requires_grad=True), tg.tensor([2.0], requires_grad=True)
    sd = tg.optim.SGD([w, v], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        tg.optim.SGD([{"params": [w]}, {"params": [v]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size"):
        tg.optim.SGD([w], lr=0.1).load_state_dict(sd)


# ---- complex parameters: torch updates the real view (..., 2), per component ----------------
AC = np.array([[1.0 - 0.5j, -2.0 + 0.3j, 0.5 + 1.0j], [0.3 + 0.2j, 0.8 - 1.1j, -1.5 + 0.4j]])
BC = np.array([0.7 + 0.2j, -1.1 - 0.6j])
Z0 = np.array([0.5 + 0.25j, -1.0 + 0.75j, 2.0 - 0.5j])


def _tg_run_complex(opt_or_cls, steps, z=None, dtype=tg.complex128, **kw):
    """`steps` updates of z on loss sum |AC z - BC|^2; returns (z, optimizer)."""
    z = tg.tensor(Z0.astype(dtype.numpy), requires_grad=True) if z is None else z
    opt = opt_or_cls([z], **kw) if isinstance(opt_or_cls, type) else opt_or_cls
    a, b = tg.tensor(AC.astype(dtype.numpy)), tg.tensor(BC.astype(dtype.numpy))
    for _ in range(steps):
        opt.zero_grad()
        ((a @ z - b).abs() ** 2).sum().backward()
        opt.step()
    return z, opt


def _np_run_complex(rule, steps, **kw):
    """The real rule on the real views of z and of torch's gradient dL/dx + i dL/dy."""
    z, state = Z0.copy(), {}
    for _ in range(steps):
        g = 2 * AC.conj().T @ (AC @ z - BC)
        p = rule(np.stack([z.real, z.imag], -1), np.stack([g.real, g.imag], -1), state, **kw)
        z = p[..., 0] + 1j * p[..., 1]
    return z, state


# the reference's state names -> torch's
STATE_NAMES = {"m": "exp_avg", "v": "exp_avg_sq", "vmax": "max_exp_avg_sq", "sum": "sum"}
COMPLEX_CASES = [
    (tg.optim.Adam, _adam, dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True)),
    (tg.optim.Adam, _adam, dict(lr=0.1, eps=1e-3, maximize=True)),
    (tg.optim.AdamW, _adam, dict(lr=0.1, weight_decay=0.2, amsgrad=True, decoupled=True)),
    (tg.optim.RMSprop, _rmsprop, dict(lr=0.01)),
    (tg.optim.RMSprop, _rmsprop, dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1,
                                      centered=True)),
    (tg.optim.Adagrad, _adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                                      initial_accumulator_value=0.5, eps=1e-6)),
]


@pytest.mark.parametrize("cls,rule,kw", COMPLEX_CASES,
                         ids=[f"{c.__name__}-{i}" for i, (c, _, _) in enumerate(COMPLEX_CASES)])
def test_complex_parameter_is_updated_as_its_real_view(cls, rule, kw):
    z, opt = _tg_run_complex(cls, 4, **{k: v for k, v in kw.items() if k != "decoupled"})
    ref, ref_state = _np_run_complex(rule, 4, **kw)
    np.testing.assert_allclose(z.detach().numpy(), ref, rtol=1e-12, atol=1e-13)
    state = opt.state[z]
    names = (dict(v="square_avg", a="grad_avg", buf="momentum_buffer")
             if cls is tg.optim.RMSprop else STATE_NAMES)
    for key, value in ref_state.items():
        if key == "t":
            continue
        got = state[names[key]]
        assert got.dtype is tg.complex128       # complex state, as torch's
        np.testing.assert_allclose(tg.view_as_real(got).numpy(), value, rtol=1e-12, atol=1e-13)


# torch 2.13, complex64, 4 steps of _tg_run_complex (z's real and imaginary parts)
TORCH_COMPLEX64 = [
    (tg.optim.Adam, dict(lr=0.1, betas=(0.8, 0.9), weight_decay=0.1, amsgrad=True),
     [0.10960047 - 0.14631371j, -0.6059779 + 0.40527138j, 1.6027567 - 0.10655992j]),
    (tg.optim.RMSprop, dict(lr=0.01, alpha=0.9, momentum=0.5, weight_decay=0.1, centered=True),
     [0.34370616 + 0.09104507j, -0.84224635 + 0.60174364j, 1.8404769 - 0.34251606j]),
    (tg.optim.Adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.1,
                            initial_accumulator_value=0.5, eps=1e-6),
     [0.25941992 + 3.4996867e-04j, -0.7530334 + 5.4420316e-01j, 1.7470511 - 2.5380966e-01j]),
]


@pytest.mark.parametrize("cls,kw,expected", TORCH_COMPLEX64,
                         ids=[c.__name__ for c, _, _ in TORCH_COMPLEX64])
def test_complex64_matches_torch(cls, kw, expected):
    z, opt = _tg_run_complex(cls, 4, dtype=tg.complex64, **kw)
    assert z.dtype is tg.complex64
    assert all(v.dtype is tg.complex64 for k, v in opt.state[z].items() if k != "step")
    np.testing.assert_allclose(z.detach().numpy(), expected, rtol=2e-6, atol=1e-6)


def test_complex_state_dict_resumes_exactly():
    kw = dict(lr=0.1, amsgrad=True, weight_decay=0.1)
    full, _ = _tg_run_complex(tg.optim.Adam, 4, **kw)
    half, opt = _tg_run_complex(tg.optim.Adam, 2, **kw)
    sd = opt.state_dict()
    assert sd["state"][0]["exp_avg_sq"].dtype is tg.complex128
    z = tg.tensor(half.detach().numpy(), requires_grad=True)
    fresh = tg.optim.Adam([z], **kw)
    fresh.load_state_dict(sd)
    _tg_run_complex(fresh, 2, z=z)
    np.testing.assert_array_equal(z.detach().numpy(), full.detach().numpy())


# ---- add_param_group and errors -------------------------------------------------------------
def test_add_param_group():
    w, v = tg.tensor([1.0], requires_grad=True), tg.tensor([2.0], requires_grad=True)
    opt = tg.optim.SGD([w], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": v, "lr": 0.5})
    assert opt.param_groups[1]["lr"] == 0.5 and opt.param_groups[1]["momentum"] == 0.9
    w.grad, v.grad = tg.tensor([1.0]), tg.tensor([1.0])
    opt.step()
    assert w.detach().item() == pytest.approx(0.9) and v.detach().item() == pytest.approx(1.5)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {tg.tensor([1.0], requires_grad=True)}})
    with pytest.raises(TypeError, match="must be a dict"):
        opt.add_param_group([v])


@pytest.mark.parametrize("make,exc,match", [
    (lambda w: tg.optim.SGD([], lr=0.1), ValueError, "empty parameter list"),
    (lambda w: tg.optim.SGD(w, lr=0.1), TypeError, "iterable of Tensors"),
    (lambda w: tg.optim.SGD([w * 2], lr=0.1), ValueError, "non-leaf"),
    (lambda w: tg.optim.SGD([w, 3.0], lr=0.1), TypeError, "one of the params is float"),
    (lambda w: tg.optim.SGD([w], lr=-1.0), ValueError, "invalid lr: -1.0"),
    (lambda w: tg.optim.SGD([w], lr=0.1, nesterov=True), ValueError, "Nesterov"),
    (lambda w: tg.optim.Adam([w], betas=(0.9, 1.0)), ValueError, "beta parameter at index 1"),
    (lambda w: tg.optim.Adam([w], eps=-1e-8), ValueError, "Adam: invalid eps"),
    (lambda w: tg.optim.RMSprop([w], alpha=-0.5), ValueError, "alpha"),
    (lambda w: tg.optim.Adagrad([w], lr_decay=-0.1), ValueError, "lr_decay"),
    (lambda w: tg.optim.Adam([w], lr=tg.tensor(0.1)), NotImplementedError,
     "lr given as a Tensor"),
    (lambda w: tg.optim.SGD([w], lr="0.1"), TypeError, "real number"),
])
def test_bad_arguments_raise(make, exc, match):
    w = tg.tensor([1.0], requires_grad=True)
    with pytest.raises(exc, match=match):
        make(w)


def test_custom_step_override_still_marks_step_called():
    class Plain(tg.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": 0.1})

        def step(self, closure=None):
            for g in self.param_groups:
                for p in g["params"]:
                    p.data.sub_(p.grad * g["lr"])

    w = tg.tensor([1.0], requires_grad=True)
    opt = Plain([w])
    w.grad = tg.tensor([1.0])
    opt.step()
    assert opt._opt_called and w.detach().item() == pytest.approx(0.9)


# ---- adversarial: complex and real parameters together, 0-d, compiled, reloaded -------------
_MA = np.array([[1.0 - 0.5j, -2.0 + 0.3j, 0.5 + 1.0j], [0.3 + 0.2j, 0.8 - 1.1j, -1.5 + 0.4j]])
_MB = np.array([0.7 + 0.2j, -1.1 - 0.6j])


def _mixed_problem():
    """A complex64 z and a float32 w in one loss (w scales z[:2])."""
    z = tg.tensor(np.array([0.5 + 0.25j, -1.0 + 0.75j, 2.0 - 0.5j]), dtype=tg.complex64,
                  requires_grad=True)
    w = tg.tensor([0.3, -0.2], requires_grad=True)
    a, b = tg.tensor(_MA, dtype=tg.complex64), tg.tensor(_MB, dtype=tg.complex64)

    def loss():
        return ((a @ z - b).abs() ** 2).sum() + ((w * z[:2]).abs() ** 2).sum() + (w ** 2).sum()
    return z, w, loss


# torch 2.13: z and w after 3 steps of _mixed_problem with one optimizer over [z, w]
TORCH_MIXED = [
    (tg.optim.Adam, dict(lr=0.1, weight_decay=0.1),
     [0.20359966 - 0.04858924j, -0.70223004 + 0.46667188j, 1.70100367 - 0.20241189j],
     [0.01685004, 0.06363319]),
    (tg.optim.AdamW, dict(lr=0.1, amsgrad=True, maximize=True),
     [0.79858589 + 0.54944015j, -1.29719377 + 1.04609895j, 2.29413795 - 0.79868948j],
     [0.59606725, -0.49394903]),
    (tg.optim.RMSprop, dict(lr=0.05, centered=True, momentum=0.9),
     [-0.75082725 - 1.38239408j, 0.5218997 - 0.09773116j, 0.21801929 + 1.01406765j],
     [-0.15337655, 0.28670996]),
    (tg.optim.Adagrad, dict(lr=0.1, initial_accumulator_value=0.2, lr_decay=0.1),
     [0.30106205 + 0.04518593j, -0.79721737 + 0.57353204j, 1.79335749 - 0.29760635j],
     [0.14015886, -0.05234407]),
]


@pytest.mark.parametrize("cls,kw,want_z,want_w", TORCH_MIXED,
                         ids=[c.__name__ for c, *_ in TORCH_MIXED])
def test_complex_and_real_parameters_in_one_group_match_torch(cls, kw, want_z, want_w):
    z, w, loss = _mixed_problem()
    opt = cls([z, w], **kw)
    for _ in range(3):
        opt.zero_grad()
        loss().backward()
        opt.step()
    np.testing.assert_allclose(z.detach().numpy(), want_z, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(w.detach().numpy(), want_w, rtol=2e-6, atol=2e-6)
    assert z.dtype is tg.complex64 and w.dtype is tg.float32
    assert all(v.dtype is tg.complex64 for k, v in opt.state[z].items() if k != "step")
    assert all(v.dtype is tg.float32 for v in opt.state[w].values())


def test_zero_dim_complex_parameter_matches_torch():
    # torch 2.13: z = 1.2993766+1.7003815j, exp_avg_sq = 0.04335597+0.10089669j
    z = tg.tensor(1 + 2j, requires_grad=True)
    opt = tg.optim.Adam([z], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        ((z - (3 - 1j)).abs() ** 2).backward()
        opt.step()
    assert z.shape == () and opt.state[z]["exp_avg_sq"].shape == ()
    np.testing.assert_allclose(z.detach().numpy(), 1.2993766069 + 1.7003815175j, rtol=1e-6)
    np.testing.assert_allclose(opt.state[z]["exp_avg_sq"].numpy(),
                               0.0433559716 + 0.1008966938j, rtol=1e-6)


@pytest.mark.parametrize("cls,kw", [(tg.optim.RMSprop, dict(lr=0.05, centered=True,
                                                              momentum=0.9, weight_decay=0.1)),
                                    (tg.optim.Adagrad, dict(lr=0.1, lr_decay=0.1,
                                                            initial_accumulator_value=0.2))],
                         ids=["RMSprop", "Adagrad"])
def test_compiled_complex_step_equals_eager_and_resumes_from_state_dict(cls, kw):
    runs = []
    for compiled in (False, True):
        z, w, loss = _mixed_problem()
        opt = cls([z, w], **kw)

        def step():
            opt.zero_grad()
            loss().backward()
            opt.step()

        fn = tg.compile(step) if compiled else step
        for _ in range(2):
            fn()
        saved = {"state": {k: {n: tg.tensor(v.numpy().copy()) for n, v in s.items()}
                           for k, s in opt.state_dict()["state"].items()},
                 "param_groups": [dict(g) for g in opt.state_dict()["param_groups"]]}
        mid = z.detach().numpy().copy(), w.detach().numpy().copy()
        for _ in range(2):
            fn()
        runs.append((z.detach().numpy().copy(), w.detach().numpy().copy()))
        if compiled:   # back to step 2 (state and parameters), then the same 2 steps again
            opt.load_state_dict(saved)
            with tg.no_grad():
                z.copy_(tg.tensor(mid[0]))
                w.copy_(tg.tensor(mid[1]))
            for _ in range(2):
                fn()
            np.testing.assert_array_equal(z.detach().numpy(), runs[-1][0])
            np.testing.assert_array_equal(w.detach().numpy(), runs[-1][1])
            assert fn.traces == 2        # loading wrote into the lifted state tensors
    (ez, ew), (cz, cw) = runs
    np.testing.assert_allclose(cz, ez, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cw, ew, rtol=1e-5, atol=1e-6)
