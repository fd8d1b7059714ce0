"""Module hooks (forward, forward-pre, full backward, backward-pre, state-dict) against
torch 2.13: `_scenario` runs the same program on either library (only the import
differs) and logs what the hooks saw; `TORCH_LOG` is torch 2.13's log of it.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.nn as nn


def _r(t):
    return np.round(t.detach().numpy(), 6).tolist()


def _scenario(lib) -> list:
    nn = lib.nn
    log = []

    def lin():
        m = nn.Linear(3, 2).double()
        m.load_state_dict({"weight": lib.tensor(np.arange(6.0).reshape(2, 3) / 10 - 0.2),
                           "bias": lib.tensor([0.1, -0.3])})
        return m

    m = lin()
    x = lib.tensor(np.array([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]]), requires_grad=True)
    handles = [
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,)),
        m.register_forward_hook(lambda mod, args, out: out + 1),
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("kw", sorted(kwargs))),
                                with_kwargs=True),
        m.register_forward_hook(lambda mod, args, out: log.append(("first", _r(out))),
                                prepend=True)]

    def bpre(mod, gout):
        log.append(("bpre", [_r(g) for g in gout]))
        return (gout[0] * 3,)

    def bh(mod, gin, gout):
        log.append(("bh", [_r(g) for g in gin], [_r(g) for g in gout]))
        return (gin[0] * 0.5,)
    handles += [m.register_full_backward_pre_hook(bpre), m.register_full_backward_hook(bh)]
    y = m(x)
    log.append(("y", _r(y)))
    (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)).sum().backward()
    log.append(("xgrad", _r(x.grad), _r(m.weight.grad)))
    for h in handles:
        h.remove()
    log.append(("removed", _r(m(x))))
    m2 = lin()
    m2.register_full_backward_hook(lambda mod, gin, gout: log.append(("nogradin", gin,
                                                                      len(gout))))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m2(lib.tensor(np.ones((1, 3)))).sum().backward()
    log.append(("warned", [str(w.message)[:60] for w in caught]))

    class Add(nn.Module):
        def forward(self, a, b=1.0):
            return a + b
    a = Add()
    a.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"b": kwargs.get("b", 0) * 10}),
                                with_kwargs=True)
    log.append(("kwpre", a(lib.tensor([1.0]), b=2.0).tolist()))

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    bm = Boom()
    bm.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    bm.register_forward_hook(lambda mod, args, out: log.append(("never", out)))
    try:
        bm(lib.zeros(1))
    except ValueError as e:
        log.append(("raised", str(e)))

    seq = nn.Sequential(lin(), nn.ReLU(), lin())
    seq[0].register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("sdpre", prefix,
                                                                             keep)))

    def post(mod, sd, prefix, meta):
        log.append(("sdpost", prefix, list(sd.keys())))
        sd[prefix + "extra"] = lib.tensor([1.0])
    seq[0].register_state_dict_post_hook(post)
    sd = seq.state_dict()
    log.append(("keys", list(sd.keys())))

    def lpre(mod, state_dict, prefix, meta, strict, missing, unexpected, errs):
        log.append(("lpre", prefix, strict, sorted(state_dict.keys())))
        state_dict.pop(prefix + "extra", None)
    seq[0].register_load_state_dict_pre_hook(lpre)
    seq[2].register_load_state_dict_post_hook(
        lambda mod, keys: log.append(("lpost", list(keys.missing_keys),
                                      list(keys.unexpected_keys))))
    r = seq.load_state_dict(sd)
    log.append(("result", list(r.missing_keys), list(r.unexpected_keys)))
    return log


TORCH_LOG = [   # torch 2.13
    ("first", [[0.1, -0.6], [-0.06, -0.76]]),
    ("kw", []),
    ("y", [[1.1, 0.4], [0.94, 0.24]]),
    ("bpre", [[[1.0, 2.0], [3.0, 4.0]]]),
    ("bh", [[[-0.0, 0.9, 1.8], [-0.6, 1.5, 3.6]]], [[[3.0, 6.0], [9.0, 12.0]]]),
    ("xgrad", [[-0.0, 0.9, 1.8], [-0.6, 1.5, 3.6]], [[11.4, -8.4, -15.0], [19.2, -19.2, -18.0]]),
    ("removed", [[0.1, -0.45], [0.02, -0.53]]),
    ("nogradin", (None,), 1),
    ("warned", ["Full backward hook is firing when gradients are computed wit"]),
    ("kwpre", [21.0]),
    ("always", None),
    ("raised", "boom"),
    ("sdpre", "0.", False),
    ("sdpost", "0.", ["0.weight", "0.bias"]),
    ("keys", ["0.weight", "0.bias", "0.extra", "2.weight", "2.bias"]),
    ("lpre", "0.", True, ["0.bias", "0.extra", "0.weight"]),
    ("lpost", [], []),
    ("result", [], []),
]


def test_hooks_see_and_change_what_torchs_do():
    assert _scenario(tg) == TORCH_LOG


def test_handles_remove_as_context_managers_and_hook_order():
    m = nn.Identity()
    calls = []
    with m.register_forward_hook(lambda mod, a, o: calls.append("a")):
        m.register_forward_hook(lambda mod, a, o: calls.append("b"))
        m.register_forward_hook(lambda mod, a, o: calls.append("c"), prepend=True)
        m(tg.zeros(1))
    m(tg.zeros(1))
    assert calls == ["c", "a", "b", "c", "b"]
    with pytest.raises(TypeError, match="callable"):
        m.register_forward_hook(3)
    with pytest.raises(NotImplementedError, match="register_full_backward_hook"):
        m.register_backward_hook(lambda *a: None)


def test_state_dict_post_hook_must_return_none():
    m = nn.Linear(2, 2)
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd)
    with pytest.raises(RuntimeError, match="must return None"):
        m.state_dict()


def test_hooks_run_inside_a_compiled_step():
    tg.manual_seed(0)
    m = nn.Linear(3, 2)
    seen = []
    m.register_forward_hook(lambda mod, args, out: out * 2)
    m.register_full_backward_hook(lambda mod, gin, gout: seen.append(gout[0].shape))
    x = tg.randn(4, 3, requires_grad=True)

    def step(x):
        m.zero_grad()
        loss = m(x).sum()
        loss.backward()
        return loss
    eager = step(x).item()
    grad = m.weight.grad.numpy().copy()
    compiled = tg.compile(step)
    np.testing.assert_allclose(compiled(x).item(), eager, rtol=1e-6)
    np.testing.assert_allclose(m.weight.grad.numpy(), grad, rtol=1e-6)
    assert seen and all(s == (4, 2) for s in seen)
