"""The programs tests/api/test_weight_spectral_norm.py runs against torch 2.13: weight_norm
(hook form and parametrization), spectral_norm with power-iteration vectors set by hand (so
no random init reaches the values), and a custom parametrization, each a forward and a
backward of a small Linear / Conv2d.  Written against a module `M` that is either ``torch``
or ``tracegrad``; tools/record_torch_norm_param.py prints torch's values.
"""
from __future__ import annotations

import numpy as np

R = np.random.default_rng(1617)
W = np.round(R.uniform(-1, 1, (3, 4)), 2)
B = np.round(R.uniform(-1, 1, 3), 2)
CW = np.round(R.uniform(-1, 1, (2, 3, 2, 2)), 2)
X = np.round(R.uniform(-2, 2, (5, 4)), 2)
CX = np.round(R.uniform(-2, 2, (1, 3, 4, 4)), 2)
U0, V0 = np.array([0.6, -0.8, 0.0]), np.array([0.5, 0.5, -0.5, 0.5])


def _linear(M):
    lin = M.nn.Linear(4, 3)
    with M.no_grad():
        lin.weight.copy_(M.tensor(W, dtype=M.float32))
        lin.bias.copy_(M.tensor(B, dtype=M.float32))
    return lin


def _f(t):
    return t.detach().numpy().astype(np.float64).round(6).tolist()


def _grads(M, module, out):
    w = M.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    (out * w).sum().backward()
    return {k: _f(p.grad) for k, p in module.named_parameters()}


def run(M):
    """{case: {what: values}}."""
    U = M.nn.utils
    res = {}
    x = M.tensor(X, dtype=M.float32)

    for name, dim in (("weight_norm_hook", 0), ("weight_norm_hook_dim1", 1),
                      ("weight_norm_hook_none", None)):
        lin = U.weight_norm(_linear(M), dim=dim)
        out = lin(x)
        res[name] = {"g": _f(lin.weight_g), "out": _f(out), "grads": _grads(M, lin, out),
                     "params": [k for k, _ in lin.named_parameters()]}
    lin = U.weight_norm(_linear(M))
    with M.no_grad():
        lin.weight_g.mul_(2.0)
    lin(x)
    U.remove_weight_norm(lin)
    res["remove_weight_norm"] = {"params": [k for k, _ in lin.named_parameters()],
                                 "weight": _f(lin.weight)}

    for name, dim in (("weight_norm_param", 0), ("weight_norm_param_none", None)):
        lin = U.parametrizations.weight_norm(_linear(M), dim=dim)
        out = lin(x)
        res[name] = {"keys": list(lin.state_dict()), "out": _f(out),
                     "g": _f(lin.parametrizations.weight.original0),
                     "grads": _grads(M, lin, out)}
    lin = U.parametrizations.weight_norm(_linear(M))
    with M.no_grad():
        lin.weight = M.tensor(W * 3, dtype=M.float32)   # right_inverse into g and v
    res["weight_norm_assign"] = {"g": _f(lin.parametrizations.weight.original0),
                                 "weight": _f(lin.weight)}
    U.parametrize.remove_parametrizations(lin, "weight")
    res["weight_norm_removed"] = {"keys": list(lin.state_dict()), "weight": _f(lin.weight),
                                  "class": type(lin).__name__}

    lin = U.parametrizations.spectral_norm(_linear(M))
    sn = lin.parametrizations.weight[0]
    with M.no_grad():
        sn._u = M.tensor(U0, dtype=M.float32)
        sn._v = M.tensor(V0, dtype=M.float32)
    out = lin(x)   # training: one power iteration from (U0, V0), then W / sigma
    res["spectral_norm"] = {"out": _f(out), "u": _f(sn._u), "v": _f(sn._v),
                            "keys": list(lin.state_dict()), "grads": _grads(M, lin, out)}
    lin.eval()
    res["spectral_norm_eval"] = {"weight": _f(lin.weight), "u": _f(sn._u)}
    # many iterations: sigma is the largest singular value whatever the start
    lin = U.parametrizations.spectral_norm(_linear(M), n_power_iterations=50)
    res["spectral_norm_converged"] = {"weight": _f(lin.weight)}

    conv = M.nn.Conv2d(3, 2, 2)
    with M.no_grad():
        conv.weight.copy_(M.tensor(CW, dtype=M.float32))
        conv.bias.zero_()
    conv = U.parametrizations.spectral_norm(conv, n_power_iterations=60)
    out = conv(M.tensor(CX, dtype=M.float32))
    res["spectral_norm_conv"] = {"out": _f(out), "grads": _grads(M, conv, out)}

    class Symmetric(M.nn.Module):
        def forward(self, a):
            return a.triu() + a.triu(1).transpose(0, 1)

    sq = M.nn.Linear(3, 3)
    with M.no_grad():
        sq.weight.copy_(M.tensor(W[:, :3], dtype=M.float32))
    U.parametrize.register_parametrization(sq, "weight", Symmetric())
    out = sq(M.tensor(X[:, :3], dtype=M.float32))
    res["custom_parametrization"] = {
        "weight": _f(sq.weight), "keys": list(sq.state_dict()), "grads": _grads(M, sq, out),
        "is_parametrized": [U.parametrize.is_parametrized(sq),
                            U.parametrize.is_parametrized(sq, "bias")],
        "type_before": U.parametrize.type_before_parametrizations(sq).__name__}
    # a second parametrization appends; removing without leaving it parametrized restores
    # the original (the weight before both)
    U.parametrize.register_parametrization(sq, "weight", Symmetric())
    chained = _f(sq.weight)
    U.parametrize.remove_parametrizations(sq, "weight", leave_parametrized=False)
    res["remove_unparametrized"] = {"chained": chained, "weight": _f(sq.weight),
                                    "class": type(sq).__name__, "keys": list(sq.state_dict()),
                                    "is_parametrized": [U.parametrize.is_parametrized(sq)]}
    return res
