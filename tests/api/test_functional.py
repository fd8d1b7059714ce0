"""tg.autograd.functional (vjp, jvp, jacobian, hessian, hvp, vhp) and tg.func (jvp, vjp, grad)
against jax.jacrev / jax.jacfwd / jax.hessian / jax.jvp / jax.vjp of the same functions
written in jax.numpy, on both executors; torch's return conventions and errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import tracegrad as tg
from tracegrad.autograd import functional as F

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(7)
XA = RNG.standard_normal((2, 3))
XB = RNG.standard_normal(3)
CONST = RNG.standard_normal((2, 3))


def f_tg(x, constant, flag=True):
    """The seed's f(input, constant, flag=flag): only `input` is differentiated."""
    y = (x.sin() * constant).sum(0)
    return y * x[0] if flag else y.exp()


def f_jax(x, constant, flag=True):
    y = (jnp.sin(x) * constant).sum(0)
    return y * x[0] if flag else jnp.exp(y)


def two_tg(a, b):
    return (a * b).tanh(), (a.exp().sum(0) * b).sum()


def two_jax(a, b):
    return jnp.tanh(a * b), (jnp.exp(a).sum(0) * b).sum()


def scalar_tg(a, b):
    return ((a * b).sin().sum() * b.sum()) ** 2


def scalar_jax(a, b):
    return (jnp.sin(a * b).sum() * b.sum()) ** 2


def _ref(fn, *args, **kw):
    with jax.enable_x64(True):
        out = fn(*[jnp.asarray(a) for a in args], **kw)
        return jax.tree_util.tree_map(np.asarray, out)


def _close(actual, expected, rtol=1e-10, atol=1e-12):
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _close(a, e, rtol, atol)
        return
    assert isinstance(actual, tg.Tensor)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual.detach().numpy(), expected, rtol=rtol, atol=atol)


MODES = [pytest.param("reverse-mode", False, id="reverse"),
         pytest.param("reverse-mode", True, id="reverse-vectorized"),
         pytest.param("forward-mode", True, id="forward-vectorized")]


# ---- jacobian -----------------------------------------------------------------------------------
@pytest.mark.parametrize("strategy,vectorize,flag", [p.values + (True,) for p in MODES] + [
    pytest.param("reverse-mode", True, False, id="reverse-vectorized-flag-off")])
def test_seed_lambda_capture(executor, strategy, vectorize, flag):
    """The seed's usage: jacobian(lambda x: f(x, constant, flag=flag), input)."""
    x, constant = tg.tensor(XA), tg.tensor(CONST, requires_grad=True)
    jac = F.jacobian(lambda x: f_tg(x, constant, flag=flag), x, vectorize=vectorize,
                     strategy=strategy)
    expected = _ref(lambda x: jax.jacrev(lambda x: f_jax(x, CONST, flag=flag))(x), XA)
    _close(jac, expected)
    assert not jac.requires_grad and constant.grad is None and not x.requires_grad


@pytest.mark.parametrize("strategy,vectorize", MODES)
def test_tuple_conventions(strategy, vectorize):
    a, b = tg.tensor(XA), tg.tensor(XB)
    kw = dict(vectorize=vectorize, strategy=strategy)
    jac = F.jacobian(two_tg, (a, b), **kw)                     # tuple in, tuple out
    expected = _ref(lambda a, b: jax.jacfwd(two_jax, argnums=(0, 1))(a, b), XA, XB)
    _close(jac, expected)
    one_in = F.jacobian(lambda a: two_tg(a, b), a, **kw)       # tensor in, tuple out
    _close(one_in, tuple(e[0] for e in expected))
    one_out = F.jacobian(lambda a, b: two_tg(a, b)[1], (a, b), **kw)   # tuple in, tensor out
    _close(one_out, expected[1])


@pytest.mark.parametrize("strategy,vectorize", MODES)
def test_output_that_ignores_an_input_gives_zeros(strategy, vectorize):
    a, b = tg.tensor(XA), tg.tensor(XB)
    jac = F.jacobian(lambda a, b: (a.cos(), b), (a, b), vectorize=vectorize, strategy=strategy)
    np.testing.assert_array_equal(jac[0][1].numpy(), np.zeros((2, 3, 3)))
    np.testing.assert_array_equal(jac[1][0].numpy(), np.zeros((3, 2, 3)))
    np.testing.assert_array_equal(jac[1][1].numpy(), np.eye(3))   # an input returned as it is
    _close(jac[0][0], _ref(jax.jacrev(jnp.cos), XA))


def test_forward_mode_jacobian_has_the_outputs_dtype():
    x = tg.tensor(XB)    # float64 in, float32 out
    jac = F.jacobian(lambda x: x.float() * 2, x, vectorize=True, strategy="forward-mode")
    assert jac.dtype is tg.float32
    np.testing.assert_array_equal(jac.numpy(), 2 * np.eye(3))
    assert F.jacobian(lambda x: x.float() * 2, x).dtype is tg.float64   # reverse: the input's


@pytest.mark.parametrize("vectorize", [False, True])
def test_create_graph_jacobian_is_differentiable(executor, vectorize):
    x = tg.tensor(XB, requires_grad=True)
    jac = F.jacobian(lambda x: x.sin() * x.sum(), x, create_graph=True, vectorize=vectorize)
    assert jac.requires_grad
    (g,) = tg.autograd.grad(jac.sum(), x)
    expected = _ref(jax.grad(lambda x: jax.jacrev(lambda y: jnp.sin(y) * y.sum())(x).sum()), XB)
    _close(g, expected)


def test_vectorized_rows_are_one_vmapped_program(monkeypatch):
    """vectorize=True builds one backward program and runs it once under jax.vmap, cached for
    the next call: no row runs on the interpreter."""
    from tracegrad.autograd import engine
    from tracegrad.backends import interpreter
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.set_executor("jax")
    engine.clear_cache()
    calls = []
    real = interpreter.run
    monkeypatch.setattr(interpreter, "run", lambda *a, **k: calls.append(1) or real(*a, **k))
    x = tg.tensor(XA)
    for _ in range(2):
        jac = F.jacobian(lambda x: (x * x).sum(1), x, vectorize=True)
        np.testing.assert_allclose(jac.numpy(), _ref(jax.jacrev(lambda x: (x * x).sum(1)), XA))
    assert not calls
    (prog,) = engine._cache.values()
    assert len(F._VMAPPED[prog]) == 1 and prog.runs == 0   # never run row by row
    before = len(F._JVP_PROGRAMS)
    for _ in range(2):
        F.jacobian(lambda x: (x * x).sum(1), x, vectorize=True, strategy="forward-mode")
    assert len(F._JVP_PROGRAMS) == before + 1 and not calls


def test_strict_mode_errors():
    x, y = tg.tensor(XB), tg.tensor(XB)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1"):
        F.jacobian(lambda x, y: x.sin(), (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        F.jacobian(lambda x: tg.ones(3), x, strict=True)
    jac = F.jacobian(lambda x, y: x.sin(), (x, y))
    np.testing.assert_array_equal(jac[1].numpy(), np.zeros((3, 3)))
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not "
                                           "supported together"):
        F.jacobian(lambda x: x.sin(), x, strict=True, vectorize=True)
    with pytest.raises(RuntimeError, match="independent of input 0"):
        F.vjp(lambda x, y: y * 2, (x, y), tg.ones(3, dtype=tg.float64), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        F.jvp(lambda x, y: x * 2, (x, y), (x, y), strict=True)
    _, jv = F.jvp(lambda x, y: x * 2, (x, y), (x, y))
    np.testing.assert_allclose(jv.numpy(), 2 * XB)


def test_argument_errors():
    x = tg.tensor(XB)
    with pytest.raises(ValueError, match='"forward-mode" or "reverse-mode"'):
        F.jacobian(lambda x: x, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.jacobian(lambda x: x, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="`create_graph=True` and "
                                                  '`strategy="forward-mode"`'):
        F.jacobian(lambda x: x, x, strategy="forward-mode", vectorize=True, create_graph=True)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        F.hessian(lambda x: x.sum(), x, outer_jacobian_strategy="forward-mode")
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor "
                                        "or a tuple of Tensors but the value at index 1 has type"):
        F.jacobian(lambda x, y: x, (x, 3.0))
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to "
                                        "vjp must be either a Tensor or a tuple of Tensors"):
        F.vjp(lambda x: 3.0, x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be \[3\] but got \[2\]"):
        F.vjp(lambda x: x * 2, x, tg.ones(2))
    with pytest.raises(RuntimeError, match="Entry 1 in v has invalid size"):
        F.jvp(lambda x, y: x * y, (x, x), (tg.ones(3), tg.ones(2)))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but got 1"):
        F.jvp(lambda x, y: x * y, (x, x), (tg.ones(3),))
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                                           "function returns a single Tensor with a single"):
        F.vjp(lambda x: x * 2, x)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the input to the "
                                           "user-provided function is a single Tensor"):
        F.hvp(lambda x: x.sum(), x)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian "
                                           "should contain a single element"):
        F.hessian(lambda x: x * 2, x)
    with pytest.raises(RuntimeError, match="The function given to vhp should return a single "
                                           "Tensor"):
        F.vhp(lambda x: (x.sum(), x.sum()), x, tg.ones(3, dtype=tg.float64))


# ---- hessian, hvp, vhp --------------------------------------------------------------------------
@pytest.mark.parametrize("strategy,vectorize", MODES)
def test_hessian(executor, strategy, vectorize):
    a, b = tg.tensor(XA), tg.tensor(XB)
    kw = dict(vectorize=vectorize, outer_jacobian_strategy=strategy)
    expected = _ref(jax.hessian(scalar_jax, argnums=(0, 1)), XA, XB)
    _close(F.hessian(scalar_tg, (a, b), **kw), expected)
    _close(F.hessian(lambda b: scalar_tg(a, b), b, **kw), expected[1][1])


def test_hessian_create_graph():
    b = tg.tensor(XB, requires_grad=True)
    h = F.hessian(lambda b: (b ** 4).sum(), b, create_graph=True)
    (g,) = tg.autograd.grad(h.sum(), b)
    np.testing.assert_allclose(g.numpy(), 24 * XB)   # d/db sum(diag(12 b^2))


def test_hvp_vhp_vjp_jvp(executor):
    a, b = tg.tensor(XA), tg.tensor(XB)
    va, vb = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    v = (tg.tensor(va), tg.tensor(vb))
    with jax.enable_x64(True):
        hess = jax.hessian(scalar_jax, argnums=(0, 1))(jnp.asarray(XA), jnp.asarray(XB))
        h = [[np.asarray(hess[i][j]) for j in range(2)] for i in range(2)]
        flat = np.block([[h[0][0].reshape(6, 6), h[0][1].reshape(6, 3)],
                         [h[1][0].reshape(3, 6), h[1][1].reshape(3, 3)]])
    hv = flat @ np.concatenate([va.ravel(), vb])
    for fn in (F.hvp, F.vhp):
        out, res = fn(scalar_tg, (a, b), v)
        _close(out, _ref(scalar_jax, XA, XB))
        _close(res, (hv[:6].reshape(2, 3), hv[6:]))
    out, jv = F.jvp(two_tg, (a, b), v)
    e_out, e_jv = _ref(lambda *p: jax.jvp(two_jax, p[:2], p[2:]), XA, XB, va, vb)
    _close(out, e_out)
    _close(jv, e_jv)
    u = (tg.tensor(RNG.standard_normal((2, 3))), tg.tensor(1.5, dtype=tg.float64))
    out, vj = F.vjp(two_tg, (a, b), u)
    _close(vj, _ref(lambda *p: jax.vjp(two_jax, *p[:2])[1](tuple(p[2:])), XA, XB,
                    u[0].numpy(), u[1].numpy()))


def test_single_element_defaults_and_create_graph():
    x = tg.tensor([0.7], dtype=tg.float64, requires_grad=True)
    out, jv = F.jvp(lambda x: x.exp() * x, x)           # v defaults to ones
    np.testing.assert_allclose(jv.numpy(), np.exp(0.7) * 1.7)
    assert not jv.requires_grad and not out.requires_grad
    out, vj = F.vjp(lambda x: (x ** 3).sum(), x, create_graph=True)
    assert vj.requires_grad
    (g,) = tg.autograd.grad(vj.sum(), x)
    np.testing.assert_allclose(g.numpy(), 6 * 0.7)
    v = tg.tensor([2.0], dtype=tg.float64, requires_grad=True)
    _, jv = F.jvp(lambda x: x.sin(), x, v, create_graph=True)
    gx, gv = tg.autograd.grad(jv.sum(), (x, v))          # jv = cos(x) v
    np.testing.assert_allclose(gx.numpy(), -np.sin(0.7) * 2.0)
    np.testing.assert_allclose(gv.numpy(), np.cos(0.7))
    _, h = F.hvp(lambda x: (x ** 4).sum(), x)
    np.testing.assert_allclose(h.numpy(), 12 * 0.7 ** 2)


def test_forward_mode_through_a_custom_function():
    """A custom Function cannot be in an IR program: forward mode runs it eagerly per column,
    with its jvp."""
    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not used")

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x * x * t

    jac = F.jacobian(Cube.apply, tg.tensor(XB), vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(jac.numpy(), np.diag(3 * XB ** 2))


# ---- tg.func ------------------------------------------------------------------------------------
def test_func_jvp():
    x = tg.tensor(XB)
    ones = tg.ones(3, dtype=tg.float64)
    out, tangent = tg.func.jvp(lambda a: (a.sin(), {"k": a * 2}), (x,), (ones,))
    _close(out[0], np.sin(XB))
    _close(tangent[0], np.cos(XB))
    _close(tangent[1]["k"], 2 * np.ones(3))
    _, t, aux = tg.func.jvp(lambda a: (a.exp(), "aux"), (x,), (x,), has_aux=True)
    assert aux == "aux"
    _close(t, np.exp(XB) * XB)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        tg.func.jvp(lambda a: a, x, (x,))
    with pytest.raises(RuntimeError, match="Expected primals and tangents to have the same python "
                                           "structure"):
        tg.func.jvp(lambda a: a, (x,), (x, x))
    with pytest.raises(RuntimeError, match="expected f\\(\\*primals\\) to return only tensors"):
        tg.func.jvp(lambda a: 3, (x,), (x,))
    with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
        tg.func.jvp(lambda a: tg.func.jvp(lambda b: b, (a,), (a,))[1], (x,), (x,))


def test_func_vjp_and_grad():
    x = tg.tensor(XB)
    out, pullback = tg.func.vjp(lambda a, b: (a * b, a + b), x, x)
    assert not out[0].requires_grad
    ga, gb = pullback((tg.ones(3, dtype=tg.float64), tg.ones(3, dtype=tg.float64)))
    _close(ga, XB + 1)     # torch 2.13 gives (x + 1, x + 1) for this pullback
    _close(gb, XB + 1)
    ga2, _ = pullback((tg.ones(3, dtype=tg.float64), tg.zeros(3, dtype=tg.float64)))
    _close(ga2, XB)        # callable again
    gx, gy = tg.func.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, x * 2)
    _close(gx, 2 * XB)
    _close(gy, XB)
    g, aux = tg.func.grad(lambda a: ((a * a).sum(), a), has_aux=True)(x)
    _close(g, 2 * XB)
    assert not aux.requires_grad
    second = tg.func.grad(lambda a: tg.func.grad(lambda b: (b ** 3).sum())(a).sum())(x)
    _close(second, 6 * XB)
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, "
                                           "got tensor with 1 dims"):
        tg.func.grad(lambda a: a.sin())(x)
