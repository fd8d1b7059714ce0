"""Forward-mode AD on every op in the op database (tests/opdb).

- JVP against VJP: ``<J v, u> == <v, J^T u>`` in float64, with J v from
  ``make_dual``/``unpack_dual`` (the op's tangent program: its hand rule,
  ``LINEAR``, the elementwise derivation or the transposed VJP) and J^T u from
  ``tg.autograd.grad``, for random v and u; the dual's primal equals the plain
  forward and its tangent has the output's shape and dtype (all that is checked
  at kinks and ties, where the VJP is a subgradient).  `make test` runs the
  first float64 sample of each op; the other samples are marked slow.
- ``make_dual`` against ``jax.jvp`` of the op database's reference for a few ops.
"""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
import tracegrad.autograd.forward_ad as fwAD
from tracegrad.ir.types import from_numpy

from test_ops import (C128, F64, GRAD_CASES, _diff_positions, _joined, _seed, _tensors, _upcast,
                      _xfail)

# (atol, rtol) of the two inner products (sums of O(100) products), by the least precise dtype
TOLS = {"float64": (1e-9, 1e-8), "float32": (1e-5, 1e-5), "float16": (1e-2, 1e-2),
        "bfloat16": (5e-2, 5e-2)}


@pytest.fixture(autouse=True)
def _interpreter(monkeypatch):
    """Backward programs on the interpreter alone: these checks are about values (executor
    agreement is test_ops.py's), and each jax run would be one more jit compile."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.set_executor("interpreter")
    yield
    tg.set_executor("auto")


def _cases():
    out, seen = [], set()
    for info, dtype, i, s in GRAD_CASES:
        if dtype not in (F64, C128):
            continue
        first = (info.name, dtype) not in seen
        seen.add((info.name, dtype))
        marks = _xfail(s.xfail) + ([] if first and dtype is F64 else [pytest.mark.slow])
        out.append(pytest.param(info, s, id=f"{info.name}-{dtype.short}-{i}", marks=marks))
    return out


def _random(rng, like: np.ndarray) -> np.ndarray:
    """Standard normal values of `like`'s shape and dtype (complex: both parts)."""
    v = rng.standard_normal(like.shape)
    if np.iscomplexobj(like):
        v = v + 1j * rng.standard_normal(like.shape)
    return v.astype(like.dtype)


def _jvp(info, sample, vs):
    """(primal output, tangent) of the op at the sample with tangents `vs` on its float args."""
    args = _tensors(sample.args, requires_grad=False)
    with fwAD.dual_level():
        for i, v in zip(_diff_positions(sample), vs):
            args[i] = fwAD.make_dual(args[i], tg.tensor(v))
        out = _joined(info.fn(*args, **sample.kwargs))
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


def _inner(a, b) -> float:
    """The real inner product Re <a, b> (for complex tangents too)."""
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


@pytest.mark.parametrize("info,sample", _cases())
def test_jvp_matches_vjp(info, sample):
    rng = np.random.default_rng(_seed("fwad", info.name))
    diff = _diff_positions(sample)
    vs = [_random(rng, sample.args[i]) for i in diff]
    primal, tangent = _jvp(info, sample, vs)
    args = _tensors(sample.args)
    out = _joined(info.fn(*args, **sample.kwargs))
    np.testing.assert_array_equal(primal.detach().numpy(), out.detach().numpy())
    if tangent is None:   # no tangent reached the output: J v = 0
        jv = np.zeros(out.shape, out.dtype.numpy)
    else:
        assert (tangent.shape, tangent.dtype) == (out.shape, out.dtype)
        jv = tangent.detach().numpy()
    if not sample.fd:
        # kinks and ties (std of equal values, duplicate scatter indices): the VJP is torch's
        # subgradient convention, not the transpose of a derivative, so only the above holds
        return
    u = _random(rng, np.zeros(out.shape, out.dtype.numpy))
    grads = tg.autograd.grad(out, [args[i] for i in diff], grad_outputs=tg.tensor(u),
                             allow_unused=True)
    lhs = _inner(u, jv)
    rhs = sum(_inner(g.numpy(), v) for g, v in zip(grads, vs) if g is not None)
    scale = max(1.0, float(np.abs(u).sum() * np.abs(jv).max(initial=0.0)))
    names = {out.dtype.to_real().name} | {from_numpy(sample.args[i].dtype).to_real().name
                                           for i in diff}
    atol, rtol = max(TOLS[n] for n in names)
    assert abs(lhs - rhs) <= atol * scale + rtol * abs(rhs), \
        f"<u, J v> = {lhs!r} but <J^T u, v> = {rhs!r}"


# ops whose opdb reference is written once for NumPy and jax.numpy; each derivation kind
JAX_OPS = ("mul", "pow", "amax", "softmax", "matmul", "getitem", "var")


def _jax_cases():
    out, seen = [], set()
    for info, dtype, i, s in GRAD_CASES:
        if dtype is F64 and info.name in JAX_OPS and info.name not in seen and s.fd:
            seen.add(info.name)
            out.append(pytest.param(info, s, id=info.name))
    assert seen == set(JAX_OPS), f"no float64 sample for {set(JAX_OPS) - seen}"
    return out


@pytest.mark.parametrize("info,sample", _jax_cases())
def test_make_dual_matches_jax_jvp(info, sample):
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(_seed("jaxjvp", info.name))
    diff = _diff_positions(sample)
    vs = [rng.standard_normal(sample.args[i].shape) for i in diff]
    _, tangent = _jvp(info, sample, vs)
    args = _upcast(sample.args)

    def f(*primals):
        a = list(args)
        for i, p in zip(diff, primals):
            a[i] = p
        return _joined(info.ref(jnp, *a, **sample.kwargs), jnp)

    with jax.enable_x64(True):
        _, expected = jax.jvp(f, tuple(jnp.asarray(args[i]) for i in diff),
                              tuple(jnp.asarray(v) for v in vs))
    np.testing.assert_allclose(tangent.detach().numpy(), np.asarray(expected),
                               rtol=1e-9, atol=1e-10)
