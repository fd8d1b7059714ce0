"""torch.linalg conventions beyond the generic checks: torch 2.13's gradients at chosen points
(where jax's reference differs or is undefined; recorded in the op database entries'
`point_checks`), which triangle is read, undefined
gradients, torch's errors at backward time and the shapes of full factorizations; for
complex inputs, torch's gradients and tangents, result dtypes, the phase check of eigh/svd
backwards and second derivatives.

The generic checks of these ops (values, finite differences, jax.vjp, executors) run from
tests/opdb/linalg.py.
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np
import pytest

import tracegrad as tg

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from opdb import point_checks  # noqa: E402
from opdb.core import LinalgSecondOrder, LinalgTorchGrad  # noqa: E402
# the points and losses of the recorded gradients, which the tests below use too
from opdb.linalg import CA, CB, CH, G, R, _c, _eigh_loss, _re, _t  # noqa: E402

LA = tg.linalg
# torch 2.13 gives each of these (torch.autograd.grad of the loss at the point), declared
# with their ops' entries in tests/opdb/linalg.py
TORCH_GRADIENTS = point_checks(LinalgTorchGrad, lambda r: not r.complex)
COMPLEX_TORCH_GRADIENTS = point_checks(LinalgTorchGrad, lambda r: r.complex)
COMPLEX_SECOND_ORDER = point_checks(LinalgSecondOrder)   # near a small complex matrix




def _grad(fn, values):
    a = _t(values)
    (g,) = tg.autograd.grad(fn(a), [a])
    return g.numpy()










@pytest.mark.parametrize("name", sorted(TORCH_GRADIENTS))
def test_gradient_matches_torch(name):
    r = TORCH_GRADIENTS[name]
    fn, point, want = r.fn, r.point, r.grads
    np.testing.assert_allclose(_grad(fn, point), np.array(want, np.float64), atol=1e-9,
                               err_msg=f"{name}: torch 2.13 gives {want}")


@pytest.mark.parametrize("use", ["eigenvectors", "U"])
def test_gradient_undefined_at_repeated_values_is_nan(use):
    """torch 2.13 gives nan everywhere: 1 / (lambda_i - lambda_j) with lambda_i == lambda_j."""
    if use == "eigenvectors":
        fn = lambda a: (LA.eigh(a).eigenvectors * _t(G, False)).sum()  # noqa: E731
    else:
        fn = lambda a: (LA.svd(a).U * _t(G, False)).sum()  # noqa: E731
    assert np.isnan(_grad(fn, np.eye(3))).any()


def test_one_triangle_is_read():
    # torch 2.13: eigh(UPLO='U') and cholesky(upper=True) read the upper triangle only
    a = tg.tensor(np.array([[4.0, 2.0], [100.0, 3.0]]))
    w, v = LA.eigh(a, UPLO="U")
    np.testing.assert_allclose(w.numpy(), [1.4384471872, 5.5615528128], atol=1e-9)
    np.testing.assert_allclose(np.abs(v.numpy()), [[0.6154122094, 0.7882054380],
                                                   [0.7882054380, 0.6154122094]], atol=1e-9)
    np.testing.assert_allclose(LA.cholesky(a, upper=True).numpy(),
                               [[2.0, 1.0], [0.0, math.sqrt(2.0)]], atol=1e-12)
    np.testing.assert_allclose(LA.cholesky(a.mT).numpy(), [[2.0, 0.0], [1.0, math.sqrt(2.0)]],
                               atol=1e-12)


def test_compiled_factorizations_read_the_same_triangle():
    """The jax kernels (tg.compile) read the triangle numpy and torch read."""
    a = tg.tensor(np.array([[4.0, 2.0], [100.0, 3.0]]))
    step = tg.compile(lambda a: (LA.cholesky(a, upper=True), LA.eigh(a, UPLO="U").eigenvalues,
                                 LA.cholesky(a.mT)))
    upper, w, lower = step(a)
    np.testing.assert_allclose(upper.numpy(), [[2.0, 1.0], [0.0, math.sqrt(2.0)]], atol=1e-12)
    np.testing.assert_allclose(lower.numpy(), [[2.0, 0.0], [1.0, math.sqrt(2.0)]], atol=1e-12)
    np.testing.assert_allclose(w.numpy(), [1.4384471872, 5.5615528128], atol=1e-9)


@pytest.mark.parametrize("mode,shape,message", [
    ("r", (3, 2), "mode='r'"), ("complete", (3, 2), "mode='complete' and nrows > ncols")])
def test_qr_backward_raises_where_torch_does(mode, shape, message):
    a = _t(np.arange(6.0).reshape(shape) + np.eye(*shape))
    q, r = LA.qr(a, mode=mode)
    with pytest.raises(RuntimeError, match=message):
        r.sum().backward()


def test_full_factorization_shapes():
    a = tg.tensor(np.arange(6.0).reshape(3, 2) + 1.0)
    u, s, vh = LA.svd(a)                        # full_matrices=True by default, as torch
    assert (u.shape, s.shape, vh.shape) == ((3, 3), (2,), (2, 2))
    np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(3), atol=1e-12)
    q, r = LA.qr(a, mode="complete")
    assert (q.shape, r.shape) == ((3, 3), (3, 2))
    q, r = LA.qr(a, mode="r")
    assert (q.shape, r.shape) == ((0,), (2, 2))
    assert LA.slogdet(tg.tensor(np.ones((2, 2))))[1].item() == -math.inf   # sign 0, -inf
    assert LA.slogdet(tg.tensor(np.ones((2, 2)))).sign.item() == 0.0


def test_named_results_and_dtypes():
    a = tg.tensor(np.diag([1.0, 2.0, 3.0]).astype(np.float32))
    assert LA.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert LA.svd(a)._fields == ("U", "S", "Vh")
    assert LA.qr(a)._fields == ("Q", "R")
    assert LA.slogdet(a)._fields == ("sign", "logabsdet")
    for out in (LA.inv(a), LA.det(a), *LA.eigh(a), *LA.svd(a), *LA.qr(a), *LA.slogdet(a),
                LA.cholesky(a), LA.svdvals(a), LA.norm(a), LA.solve(a, a)):
        assert out.dtype is tg.float32


def test_einsum_sums_an_ellipsis_left_out_of_the_output():
    x = tg.tensor(np.arange(12.0).reshape(3, 2, 2))
    np.testing.assert_array_equal(tg.einsum("...ij->ij", x).numpy(), [[12, 15], [18, 21]])
    np.testing.assert_array_equal(tg.einsum("ij,jk", [x[0], x[1]]).numpy(),
                                  x[0].numpy() @ x[1].numpy())   # a list of operands


def test_linalg_error_is_torch_shaped():
    assert issubclass(LA.LinAlgError, RuntimeError)
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: .*singular .*f64\[2,2\]") as info:
        LA.inv(tg.tensor(np.ones((2, 2))))
    assert "test_linalg.py" in str(info.value)    # the user's line


# ---- complex inputs ------------------------------------------------------------------------------
# torch 2.13's gradients of real losses of complex128 inputs (torch's convention: dL/dRe A +
# i dL/dIm A).  `_re(x, g)` = Re sum(conj(g) x) is the loss of x.backward(g).


@pytest.fixture
def interpreter_only(monkeypatch):
    """Backward programs on the interpreter alone: these tests check values (executor agreement
    on complex programs is tests/ops/test_ops.py's), and each jax run is one more jit compile."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.set_executor("interpreter")
    yield
    tg.set_executor("auto")


















@pytest.mark.parametrize("name", sorted(COMPLEX_TORCH_GRADIENTS))
def test_complex_gradient_matches_torch(name, interpreter_only):
    r = COMPLEX_TORCH_GRADIENTS[name]
    fn, point, want = r.fn, r.point, r.grads
    a = _c(point, requires_grad=True)
    (g,) = tg.autograd.grad(fn(a), [a])
    assert g.dtype is tg.complex128
    np.testing.assert_allclose(g.numpy(), np.array(want), atol=1e-9,
                               err_msg=f"{name}: torch 2.13 gives {want}")


def test_complex_results_have_torchs_dtypes():
    a = tg.tensor(np.array(CH, np.complex64))
    c64, f32 = tg.complex64, tg.float32
    assert [x.dtype for x in LA.eigh(a)] == [f32, c64]          # real eigenvalues
    assert [x.dtype for x in LA.svd(a)] == [c64, f32, c64]      # real singular values
    assert [x.dtype for x in LA.slogdet(a)] == [c64, f32]       # sign e^{i theta}, real log|det|
    assert LA.svdvals(a).dtype is f32
    for out in (LA.inv(a), LA.det(a), *LA.qr(a), LA.cholesky(a), LA.solve(a, a)):
        assert out.dtype is c64
    np.testing.assert_allclose(LA.det(a).numpy(), np.linalg.det(np.array(CH)), rtol=1e-6)
    with pytest.raises(TypeError, match="linalg.solve.*same dtype.*c64.*f32"):
        LA.solve(a, tg.ones(2, 1))


@pytest.mark.parametrize("case", ["eigh", "svd_U", "svd_Vh"])
def test_complex_phase_dependent_loss_raises(case, interpreter_only):
    """Complex eigen- and singular vectors are defined up to a phase each: torch 2.13 raises at
    backward for a loss that depends on the phases (here Re V, Re U, Re Vh), and so do we."""
    if case == "eigh":
        a = _c(CH, True)
        vectors = LA.eigh(a).eigenvectors
    else:
        a = _c(CB, True)
        vectors = LA.svd(a, full_matrices=False)[0 if case == "svd_U" else 2]
    with pytest.raises(RuntimeError, match=r"depends on those phases.*ill-defined"):
        vectors.real.sum().backward()


def test_complex_phase_check_runs_on_jax_too(monkeypatch):
    """The jitted backward raises too (a host check there, read after the call), with the same
    RuntimeError, not jax's runtime error wrapping it (jax_backend.host_check)."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.set_executor("jax")
    try:
        a = _c(CH, True)
        for _ in range(2):   # the first call traces the program, the second reuses it
            with pytest.raises(RuntimeError, match=r"^linalg.eigh backward.*depends on those "
                                                   r"phases") as err:
                LA.eigh(a).eigenvectors.real.sum().backward()
            assert type(err.value) is RuntimeError and "Traceback" not in str(err.value)
        (g,) = tg.autograd.grad(_eigh_loss(a), [a])   # a phase-free loss: torch's gradient
        np.testing.assert_allclose(g.numpy(), COMPLEX_TORCH_GRADIENTS["eigh"].grads, atol=1e-9)
    finally:
        tg.set_executor("auto")


def test_complex_forward_ad_matches_torch(interpreter_only):
    """Tangents along a Hermitian direction (torch 2.13's values)."""
    import tracegrad.autograd.forward_ad as fwAD
    t = _c([[0.2, 0.3 + 0.25j], [0.3 - 0.25j, -0.1]])
    with fwAD.dual_level():
        w = LA.eigh(fwAD.make_dual(_c(CH), t)).eigenvalues
        low = LA.cholesky(fwAD.make_dual(_c(CH), t))
        np.testing.assert_allclose(fwAD.unpack_dual(w).tangent.numpy(),
                                   [-0.000251890763, 0.100251890763], atol=1e-10)
        np.testing.assert_allclose(fwAD.unpack_dual(low).tangent.numpy(),
                                   [[0.057735026919, 0], [0.16358257627 - 0.157809073578j,
                                                          -0.025257580245]], atol=1e-10)
        ta = _c([[0.1j, 1], [0.5, -0.3 + 0.2j]])
        s = LA.svdvals(fwAD.make_dual(_c(CA), ta))
        np.testing.assert_allclose(fwAD.unpack_dual(s).tangent.numpy(),
                                   [0.103407077394, -0.520415047233], atol=1e-10)
        d = LA.det(fwAD.make_dual(_c(CA), ta))
        np.testing.assert_allclose(fwAD.unpack_dual(d).tangent.numpy(), -0.89 + 0.4j, atol=1e-12)








@pytest.mark.parametrize("name", sorted(COMPLEX_SECOND_ORDER))
def test_complex_second_order_matches_finite_differences(name, interpreter_only):
    """h(a) = Re <v, grad_a Re <u, f(a)>> is real: its gradient (a double backward through the
    complex rules, the phase check included) against central differences along Re a, Im a."""
    f = COMPLEX_SECOND_ORDER[name].fn
    rng = np.random.default_rng(0)
    a0 = 0.3 * (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)))
    out = f(tg.tensor(a0))
    u = rng.standard_normal(out.shape) + 1j * rng.standard_normal(out.shape)
    u = tg.tensor(u if out.dtype.is_complex else u.real)
    v = tg.tensor(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)))

    def h(av, create_graph):
        a = tg.tensor(av, requires_grad=True)
        (g,) = tg.autograd.grad(f(a), [a], grad_outputs=u, create_graph=create_graph)
        return a, (g * v.conj()).real.sum()

    a, ha = h(a0, True)
    (gg,) = tg.autograd.grad(ha, [a])
    eps = 1e-6
    for d in (rng.standard_normal((3, 3)), 1j * rng.standard_normal((3, 3))):
        numeric = (h(a0 + eps * d, False)[1].item() - h(a0 - eps * d, False)[1].item()) / (2 * eps)
        np.testing.assert_allclose(np.real(np.sum(np.conj(gg.numpy()) * d)), numeric,
                                   rtol=1e-6, atol=1e-7, err_msg=name)
