"""Every op in tests/opdb.py, checked the same way (STYLE.md, "Tests").

- forward: values match the NumPy reference; dtype and shape are exactly
  torch's; every recorded kernel returned the type its `infer` promised;
  ``requires_grad`` of the result is torch's.
- VJP vs central finite differences in float64, in random directions.
- VJP vs ``jax.vjp`` of the same reference written with jax.numpy.
- the interpreter and the jax executor agree on the backward program.
- every cached backward program passes the IR verifier.
- bad inputs raise the declared error, naming the op and the shapes.
"""
from __future__ import annotations

import os
import sys
import zlib

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import engine
from tracegrad.ir import verify
from tracegrad.ir.registry import REGISTRY
from tracegrad.ir.types import from_numpy

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from opdb import F32, F64, NOT_IN_OPDB, OPS  # noqa: E402

FD_EPS = 1e-6
FD_TOL = (1e-6, 1e-5)  # (atol, rtol) on the directional derivative


@pytest.fixture(autouse=True)
def _fresh_programs(monkeypatch):
    """An empty backward-program cache and the interpreter per test, restored to "auto" after.

    Cross-check mode (tests/conftest.py) stays on: every backward program
    built here also runs on jax and must agree with the interpreter.
    """
    engine.clear_cache()
    tg.set_executor("interpreter")
    yield
    tg.set_executor("auto")
    engine.clear_cache()


# ---- cases --------------------------------------------------------------------------------
def _seed(*parts) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def _expected_dtype(info, dtype, sample):
    return sample.dtype or info.out_dtype or dtype


def _diff_positions(sample) -> list[int]:
    return [i for i, a in enumerate(sample.args)
            if isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def _cases():
    out = []
    for info in OPS:
        for dtype in info.dtypes:
            rng = np.random.default_rng(_seed(info.name, dtype.name))
            for i, s in enumerate(info.sample_inputs(rng, dtype)):
                out.append((info, dtype, i, s))
    return out


CASES = _cases()


def _xfail(reason: str) -> list:
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


def _params(cases):
    return [pytest.param(info, dtype, s, id=f"{info.name}-{dtype.short}-{i}", marks=_xfail(s.xfail))
            for info, dtype, i, s in cases]


def _has_grad(info, dtype, s) -> bool:
    return (info.differentiable and bool(_diff_positions(s))
            and _expected_dtype(info, dtype, s).is_floating_point)


GRAD_CASES = [c for c in CASES if _has_grad(c[0], c[1], c[3])]
FD_CASES = [c for c in GRAD_CASES
            if c[3].fd and _expected_dtype(c[0], c[1], c[3]) is F64
            and all(c[3].args[i].dtype == np.float64 for i in _diff_positions(c[3]))]
EXECUTOR_CASES = [c for c in GRAD_CASES if c[1] is F32 and c[2] in c[0].executor_samples]
ERROR_CASES = [pytest.param(info, e, id=f"{info.name}-{k}", marks=_xfail(e.xfail))
               for info in OPS for k, e in enumerate(info.error_inputs())]


# ---- helpers ------------------------------------------------------------------------------
def _tensors(args, requires_grad=True) -> list:
    """Arrays -> tensors (floating ones require grad); other arguments unchanged."""
    return [tg.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
            if isinstance(a, np.ndarray) else a for a in args]


def _upcast(args) -> list:
    """Floating arrays in float64, for references more accurate than the op under test."""
    return [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in args]


def _cotangent(rng, out) -> np.ndarray:
    return np.asarray(rng.standard_normal(out.shape)).astype(out.dtype.numpy)


def _tg_vjp(info, sample, u=None, rng=None):
    """(output, cotangent, gradients as arrays) through tg.autograd.grad."""
    args = _tensors(sample.args)
    diff = _diff_positions(sample)
    out = info.fn(*args, **sample.kwargs)
    if u is None:
        u = _cotangent(rng, out)
    grads = tg.autograd.grad(out, [args[i] for i in diff], grad_outputs=tg.tensor(u))
    for i, g in zip(diff, grads):
        assert g.shape == args[i].shape, f"gradient of argument {i}: shape {g.shape}"
        assert g.dtype is args[i].dtype, f"gradient of argument {i}: dtype {g.dtype}"
        assert not g.requires_grad
    return out, u, [g.numpy() for g in grads]


def _jax_vjp(info, sample, u) -> list[np.ndarray]:
    """Gradients of `info.ref` under jax.numpy, in float64, for cotangent `u`."""
    import jax
    import jax.numpy as jnp

    args = _upcast(sample.args)
    diff = _diff_positions(sample)

    def f(*primals):
        a = list(args)
        for i, p in zip(diff, primals):
            a[i] = p
        return info.ref(jnp, *a, **sample.kwargs)

    with jax.enable_x64(True):
        out, pullback = jax.vjp(f, *[jnp.asarray(args[i]) for i in diff])
        grads = pullback(jnp.asarray(u, dtype=out.dtype))
        return [np.asarray(g) for g in grads]


def _verify_cached_programs(out) -> None:
    """The IR verifier on every cached backward program (there is one unless `out` is a leaf)."""
    programs = list(engine._cache.values())
    if out.grad_fn is not None:
        assert programs, "no backward program was cached"
    for prog in programs:
        verify(prog.graph)


def _tol(info, *dtypes) -> tuple[float, float]:
    """The loosest tolerance among the dtypes a result went through."""
    tols = [info.tol(d) for d in dtypes if d.is_floating_point]
    return max(t[0] for t in tols), max(t[1] for t in tols)


def _float_dtypes(sample) -> list:
    return [from_numpy(sample.args[i].dtype) for i in _diff_positions(sample)]


def _assert_close(actual, expected, dtype, tols, what=""):
    if dtype.is_floating_point:
        atol, rtol = tols
        np.testing.assert_allclose(actual, expected, atol=atol, rtol=rtol, err_msg=what,
                                   equal_nan=False)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


# ---- tests --------------------------------------------------------------------------------
@pytest.mark.parametrize("info,dtype,sample", _params(CASES))
def test_forward_matches_reference(info, dtype, sample):
    args = _tensors(sample.args)
    out = info.fn(*args, **sample.kwargs)
    expected = np.asarray(info.ref(np, *_upcast(sample.args), **sample.kwargs))
    want = _expected_dtype(info, dtype, sample)
    assert isinstance(out, tg.Tensor)
    assert out.dtype is want, f"dtype {out.dtype}, torch gives {want}"
    assert out.shape == expected.shape
    _assert_close(out.detach().numpy(), expected, want, info.tol(want))
    # torch: only float results of differentiable ops on inputs that require grad require grad
    assert out.requires_grad == _has_grad(info, dtype, sample)
    # each recorded kernel returned exactly the shape and dtype its `infer` promised
    for node in engine._collect([out]):
        for t, a in zip(node.out_types, node.saved_outputs):
            assert (t.shape, t.dtype) == (a.shape, from_numpy(a.dtype)), node.op.name


@pytest.mark.parametrize("info,dtype,sample", _params(GRAD_CASES))
def test_vjp_matches_jax(info, dtype, sample):
    rng = np.random.default_rng(_seed("jax", info.name))
    out, u, grads = _tg_vjp(info, sample, rng=rng)
    expected = _jax_vjp(info, sample, u)
    tol = _tol(info, out.dtype, *_float_dtypes(sample))
    for i, g, e in zip(_diff_positions(sample), grads, expected):
        _assert_close(g, e, from_numpy(g.dtype), tol, f"gradient of argument {i}")
    _verify_cached_programs(out)


@pytest.mark.parametrize("info,dtype,sample", _params(FD_CASES))
def test_vjp_matches_finite_differences(info, dtype, sample):
    rng = np.random.default_rng(_seed("fd", info.name))
    out, u, grads = _tg_vjp(info, sample, rng=rng)
    consts = _tensors(sample.args, requires_grad=False)

    def f(i, xi):
        a = list(consts)
        a[i] = tg.tensor(xi)
        with tg.no_grad():
            return info.fn(*a, **sample.kwargs).numpy()

    for i, g in zip(_diff_positions(sample), grads):
        x = sample.args[i]
        v = np.asarray(rng.standard_normal(x.shape))
        jvp = (f(i, x + FD_EPS * v) - f(i, x - FD_EPS * v)) / (2 * FD_EPS)
        numeric, analytic = np.sum(u * jvp), np.sum(g * v)
        np.testing.assert_allclose(analytic, numeric, atol=FD_TOL[0], rtol=FD_TOL[1],
                                   err_msg=f"<vjp, v> vs finite differences, argument {i}")
    _verify_cached_programs(out)


@pytest.mark.parametrize("info,dtype,sample", _params(EXECUTOR_CASES))
def test_executors_agree(info, dtype, sample):
    """One backward program, run by the interpreter and by the jax lowering: same gradients."""
    args = _tensors(sample.args)
    diff = _diff_positions(sample)
    out = info.fn(*args, **sample.kwargs)
    u = tg.tensor(_cotangent(np.random.default_rng(0), out))
    grads = {}
    for executor in ("interpreter", "jax"):
        tg.set_executor(executor)
        for i in diff:
            args[i].grad = None
        out.backward(u, retain_graph=True)
        grads[executor] = [args[i].grad.numpy() for i in diff]
    (prog,) = engine._cache.values()            # one program, run twice
    assert prog.runs == 2 and prog._lowered is not None, "the jax executor did not run"
    tol = _tol(info, out.dtype, *_float_dtypes(sample))
    for i, a, b in zip(diff, grads["interpreter"], grads["jax"]):
        assert a.dtype == b.dtype == sample.args[i].dtype
        assert a.shape == b.shape == sample.args[i].shape
        _assert_close(b, a, from_numpy(a.dtype), tol, f"jax vs interpreter, argument {i}")
    _verify_cached_programs(out)


@pytest.mark.parametrize("info,err", ERROR_CASES)
def test_error_inputs(info, err):
    args = _tensors(err.args, requires_grad=False)
    with pytest.raises(err.exc) as exc_info:
        info.fn(*args, **err.kwargs)
    message = str(exc_info.value)
    for part in err.match:
        assert part in message, f"{part!r} missing from the message: {message!r}"


def test_opdb_covers_the_registry():
    covered = {op for info in OPS for op in (info.covers or (info.name,))}
    missing = set(REGISTRY) - covered - set(NOT_IN_OPDB)
    assert not missing, f"ops without an OpInfo in tests/opdb.py: {sorted(missing)}"
    stale = (covered | set(NOT_IN_OPDB)) - set(REGISTRY)
    assert not stale, f"opdb names ops the registry lacks: {sorted(stale)}"
    assert len({info.name for info in OPS}) == len(OPS)


def test_every_op_has_samples_in_each_dtype():
    for info in OPS:
        for dtype in info.dtypes:
            n = sum(1 for c in CASES if c[0] is info and c[1] is dtype)
            assert n >= 1, f"{info.name} has no {dtype.name} samples"
        if info.differentiable:
            assert any(c[0] is info for c in FD_CASES), f"{info.name}: no finite-difference case"
            assert any(c[0] is info for c in EXECUTOR_CASES), f"{info.name}: no executor case"
