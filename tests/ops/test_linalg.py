"""torch.linalg conventions the op database cannot express: gradients hard-coded from torch
2.13 (where jax's reference differs or is undefined), which triangle is read, undefined
gradients, torch's errors at backward time and the shapes of full factorizations; for
complex inputs, torch's gradients and tangents, result dtypes, the phase check of eigh/svd
backwards and second derivatives.

The generic checks of these ops (values, finite differences, jax.vjp, executors) run from
tests/opdb/linalg.py.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import tracegrad as tg

LA = tg.linalg
A0 = [[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]]
G = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
R = [[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]]


def _t(values, requires_grad=True):
    return tg.tensor(np.array(values, np.float64), requires_grad=requires_grad)


def _grad(fn, values):
    a = _t(values)
    (g,) = tg.autograd.grad(fn(a), [a])
    return g.numpy()


def _weighted(x):
    """sum(x * cos(k)) over x's entries, flattened: a fixed, non-uniform cotangent."""
    flat = x.reshape(-1)
    return (flat * tg.tensor(np.cos(np.arange(flat.shape[0])))).sum()


def _svd_loss(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    return _weighted(tg.cat([(u * u[:1, :]).reshape(-1), s, (vh * vh[:, :1]).reshape(-1)]))


def _qr_loss(a):
    q, r = LA.qr(a)
    f = tg.cat([q.reshape(-1), r.reshape(-1)])
    return (f * tg.arange(1, f.shape[0] + 1, dtype=tg.float64)).sum()


# torch 2.13 gives each of these (torch.autograd.grad of the loss at the point).
TORCH_GRADIENTS = {
    "eigh": (lambda a: (LA.eigh(a).eigenvectors * LA.eigh(a).eigenvectors[:1, :]
                        * _t(G, False)).sum(), A0,
             [[0.5115917469, 0.3337917454, 0.3117337304],
              [0.3337917454, -0.0518548867, -0.0199715351],
              [0.3117337304, -0.0199715351, -0.4597368602]]),
    "cholesky": (lambda a: (LA.cholesky(a) * _t(G, False)).sum(), A0,
                 [[0.2226712243, -0.045998352, 0.6155253692],
                  [-0.045998352, 1.6326497916, 2.5755480744],
                  [0.6155253692, 2.5755480744, 2.2862973111]]),
    "cholesky_upper": (lambda a: (LA.cholesky(a, upper=True) * _t(G, False)).sum(), A0,
                       [[0.7685018448, -0.5886666949, -0.4824604272],
                        [-0.5886666949, 1.6200006809, 1.9430925423],
                        [-0.4824604272, 1.9430925423, 2.2862973111]]),
    "qr_tall": (_qr_loss, R, [[-7.9316457407, 1.2922850881], [-2.387351087, -10.2349636485],
                              [-14.6344716586, 7.6002178156]]),
    "qr_wide": (_qr_loss, np.transpose(R),
                [[12.7903088313, -10.733126292, -12.0747670785],
                 [-11.9853243594, -1.3416407865, -1.788854382]]),
    "svd_tall": (_svd_loss, R, [[-0.044499946, 0.4927987325], [0.7746636257, -0.4207316967],
                                [-0.0709293461, 0.7905326292]]),
    "svd_wide": (_svd_loss, np.transpose(R),
                 [[0.0475464154, 0.3129622795, 0.6130153234],
                  [-0.0505114432, 0.6552576523, -0.6586338565]]),
    # det at an exactly singular matrix: 0 (the cofactor matrix [[4, -2], [-2, 1]] is what jax
    # and calculus give)
    "det_singular": (lambda a: LA.det(a), [[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]),
    # matrix norms of the zero matrix: three tied singular values 0, U = V = I
    "matrix_norm_2_zero": (lambda a: LA.matrix_norm(a, 2), np.zeros((3, 3)), np.eye(3) / 3),
    "matrix_norm_nuc_zero": (lambda a: LA.matrix_norm(a, "nuc"), np.zeros((3, 3)), np.eye(3)),
    "matrix_norm_1_zero": (lambda a: LA.matrix_norm(a, 1), np.zeros((2, 2)), np.zeros((2, 2))),
    # repeated eigenvalues / singular values: defined when only the values are used
    "eigh_values_repeated": (lambda a: LA.eigh(a).eigenvalues.sum(), np.eye(3), np.eye(3)),
    "svd_values_repeated": (lambda a: LA.svd(a).S.sum(), np.eye(3), np.eye(3)),
    "svdvals_repeated": (lambda a: LA.svdvals(a).sum(), np.eye(3), np.eye(3)),
    # vector norms with a zero entry (the -1 norm is 0 there)
    "vector_norm_0.5": (lambda x: LA.vector_norm(x, 0.5), [3.0, 0.0, -4.0],
                        [2.1547005384, 0.0, -1.8660254038]),
    "vector_norm_-1": (lambda x: LA.vector_norm(x, -1), [3.0, 0.0, -4.0], [0.0, 0.0, 0.0]),
    "vector_norm_3": (lambda x: LA.vector_norm(x, 3), [3.0, 0.0, -4.0],
                      [0.4448513517, 0.0, -0.7908468475]),
    "vector_norm_1.5": (lambda x: LA.vector_norm(x, 1.5), [3.0, 0.0, -4.0],
                        [0.7329564758, 0.0, -0.8463452372]),
    "vector_norm_inf_ties": (lambda x: LA.vector_norm(x, math.inf), [1.0, -2.0, 2.0, 0.0],
                             [0.0, -0.5, 0.5, 0.0]),
    "vector_norm_2_zero": (lambda x: LA.vector_norm(x), [0.0, 0.0], [0.0, 0.0]),
}


@pytest.mark.parametrize("name", sorted(TORCH_GRADIENTS))
def test_gradient_matches_torch(name):
    fn, point, want = TORCH_GRADIENTS[name]
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
CA = [[2 + 0.5j, -0.3 + 0.2j], [0.4 - 0.1j, 1.5 - 0.6j]]            # well conditioned
CH = [[3, 0.5 - 0.7j], [0.5 + 0.7j, 2]]                               # Hermitian positive-definite
CB = [[1 + 0.5j, -0.3 + 0.2j, 0.6], [0.4 - 0.1j, 1.5 - 0.6j, -0.2 + 0.9j]]   # distinct sing. values
CG = [[1 - 0.5j, 0.3 + 0.2j], [-0.7 + 1j, 0.25 - 0.4j]]
CG23 = [[1 - 0.5j, 0.3 + 0.2j, 0.1 - 0.9j], [-0.7 + 1j, 0.25 - 0.4j, 0.5 + 0.5j]]
CRHS = [[0.3 + 0.1j], [-1 + 0.5j]]


@pytest.fixture
def interpreter_only(monkeypatch):
    """Backward programs on the interpreter alone: these tests check values (executor agreement
    on complex programs is tests/ops/test_ops.py's), and each jax run is one more jit compile."""
    monkeypatch.setenv("TRACEGRAD_CROSSCHECK", "0")
    tg.set_executor("interpreter")
    yield
    tg.set_executor("auto")


def _c(values, requires_grad=False):
    return tg.tensor(np.array(values, np.complex128), requires_grad=requires_grad)


def _re(x, g):
    return (x * _c(g).conj()).real.sum()


def _r(values):
    return tg.tensor(np.array(values, np.float64))


def _qr_re(gq, gr):
    return lambda a: _re(LA.qr(a).Q, gq) + _re(LA.qr(a).R, gr)


def _eigh_loss(a):
    """Eigenvalues, |V|^2 and V[0, 0] conj(V[1, 0]): functions of the eigenvectors that their
    phases do not change."""
    w, v = LA.eigh(a)
    return ((w * _r([0.3, -1.2])).sum() + (v.abs() ** 2 * _r([[1, 2], [0.5, -1.0]])).sum()
            + (v[0, 0] * v[1, 0].conj() * (0.4 - 0.8j)).real)


def _csvd_loss(a):
    """S, |U|^2, |Vh|^2 and U[0, k] Vh[k, 1] (a pair's phases cancel) of a 2 x 3 matrix."""
    u, s, vh = LA.svd(a, full_matrices=False)
    return ((s * _r([0.7, -0.4])).sum() + (u.abs() ** 2 * _r([[1, 2], [0.5, -1.0]])).sum()
            + (u[0, :] * vh[:, 1] * _c([0.3 + 0.9j, -0.5 + 0.2j])).real.sum()
            + (vh.abs() ** 2 * _r([[0.2, -0.3, 1.0], [0.6, 0.1, -0.8]])).sum())


def _csvd_tall_loss(a):
    u, s, vh = LA.svd(a, full_matrices=False)
    return (u[1, :] * vh[:, 0] * _c([0.3 + 0.9j, -0.5 + 0.2j])).real.sum() + (s ** 2).sum()


COMPLEX_TORCH_GRADIENTS = {
    "inv": (lambda a: _re(LA.inv(a), CG), CA,
            [[-0.300454664713 + 0.029665614172j, -0.011407695307 - 0.094746718619j],
             [0.068978448298 - 0.301533818032j, 0.013961603162 + 0.234904877575j]]),
    "solve_A": (lambda a: _re(LA.solve(a, _c(CRHS)), [[1 - 0.5j], [-0.7 + 1j]]), CA,
                [[-0.018795107141 + 0.081623610044j, 0.430645466115 - 0.152413033057j],
                 [-0.07331749842 - 0.055556174955j, -0.041073547807 + 0.500018501036j]]),
    "solve_B": (lambda b: _re(LA.solve(_c(CA), b), [[1 - 0.5j], [-0.7 + 1j]]), CRHS,
                [[0.601603557472 - 0.240264115348j], [-0.029982482145 + 0.710820644118j]]),
    "det": (lambda a: (LA.det(a) * (0.7 + 0.2j)).real, CA,    # backward(0.7 - 0.2j)
            [[1.17 + 0.12j, -0.3 + 0.01j], [0.25 + 0.08j, 1.3 - 0.75j]]),
    # a complex sign e^{i theta} has a gradient (a real one does not)
    "slogdet_sign": (lambda a: (LA.slogdet(a).sign * (0.3 - 0.4j)).real, CA,
                     [[-0.044815782 + 0.20301549246j, 0.00433219226 - 0.05288262276j],
                      [-0.01912140032 + 0.04227622102j, 0.1053170877 + 0.2434990822j]]),
    "slogdet": (lambda a: (LA.slogdet(a).sign * (0.3 - 0.4j)).real - 0.6 * LA.slogdet(a)[1], CA,
                [[-0.319509219542 + 0.142376764525j, 0.075885891222 - 0.04702087906j],
                 [-0.076323933671 + 0.016403697101j, -0.224153334076 + 0.386000092845j]]),
    # not Hermitian: torch's Hermitian gradient plus a skew-Hermitian term (no Hermitian change
    # of A sees it)
    "cholesky": (lambda a: _re(LA.cholesky(a), CG), CH,
                 [[0.262758249864 - 0.061493782437j, -0.182563001503 - 0.241474507061j],
                  [-0.253049271952 + 0.291821843097j, 0.094401255067 - 0.151042008107j]]),
    "cholesky_upper": (lambda a: _re(LA.cholesky(a, upper=True), CG), CH,
                       [[0.295474765118 + 0.126926812945j, 0.035625862642 + 0.054588318417j],
                        [0.106112133092 - 0.104935654452j, 0.094401255067 + 0.151042008107j]]),
    "qr": (_qr_re(CG, np.conj(CG) * 0.5), CA,
           [[-0.665334808096 + 0.197541090174j, -0.139144041462 + 0.026041970713j],
            [0.300687860504 - 0.60434124822j, -0.065751396452 + 0.237892844758j]]),
    "qr_wide": (_qr_re(CG, CG23), CB,
                [[-1.556189065831 - 0.529579063926j, -0.110401340017 - 0.175470263623j,
                  -0.340116194811 + 0.925702476855j],
                 [1.479252320615 - 0.376401407675j, -0.444398270215 - 0.184045212801j,
                  -0.582871755491 + 0.08750094298j]]),
    "qr_tall": (_qr_re(np.transpose(CG23), CG), np.transpose(CB),
                [[-1.332012699054 - 0.095431626964j, -0.099968625921 - 0.275207169589j],
                 [-0.716673985528 - 0.639374451875j, -0.227889454755 + 0.086420594026j],
                 [-0.044148980959 + 0.456464500962j, -0.406343205441 - 0.097078292135j]]),
    "eigh": (_eigh_loss, CH, [[-0.403047475802, -0.681699891865 + 0.612666991423j],
                              [-0.681699891865 - 0.612666991423j, -0.496952524198]]),
    "svd": (_csvd_loss, CB,
            [[0.016519538868 - 0.374785381015j, 0.654882254254 - 1.449006697622j,
              -0.675094857705 + 0.477146354233j],
             [0.814780265835 + 0.753917809663j, 0.251654284821 - 0.165166605868j,
              0.029372720916 + 1.299261818577j]]),
    "svd_tall": (_csvd_tall_loss, np.transpose(CB),
                 [[2.037553943016 + 0.848303422576j, 1.30915694534 + 0.098894635996j],
                  [-0.255613001903 - 0.197262816196j, 3.033703279372 - 1.149036794891j],
                  [1.087228234079 + 0.4452338737j, -0.1489045408 + 2.005772054699j]]),
    "svdvals": (lambda a: (LA.svdvals(a) * _r([0.5, -1.5])).sum(), CB,
                [[-1.216731830261 - 0.566260952824j, -0.074556257399 - 0.205732599725j,
                  -0.544215864512 - 0.197893322839j],
                 [-0.195326392945 - 0.056430807529j, 0.37488653511 - 0.201041968309j,
                  -0.185843549723 + 0.242616005235j]]),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_TORCH_GRADIENTS))
def test_complex_gradient_matches_torch(name, interpreter_only):
    fn, point, want = COMPLEX_TORCH_GRADIENTS[name]
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
        np.testing.assert_allclose(g.numpy(), COMPLEX_TORCH_GRADIENTS["eigh"][2], atol=1e-9)
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


def _shifted(a, diag):
    return a + tg.tensor(np.diag(np.asarray(diag, np.complex128)))


def _phase_free(x, first):
    return (x * first.conj()).reshape(-1)


COMPLEX_SECOND_ORDER = {   # well-conditioned points near a small complex matrix a
    "inv": lambda a: LA.inv(_shifted(a, [2, 2, 2])),
    "solve": lambda a: LA.solve(_shifted(a, [2, 2, 2]), a[:, :1]),
    "det": lambda a: LA.det(_shifted(a, [2, 2, 2])).reshape(1),
    "slogdet": lambda a: tg.stack([LA.slogdet(_shifted(a, [2, 2, 2]))[0],
                                   LA.slogdet(_shifted(a, [2, 2, 2]))[1].to(tg.complex128)]),
    "cholesky": lambda a: LA.cholesky(_shifted(a + a.mT.conj(), [4, 4, 4])),
    "qr": lambda a: tg.cat([t.reshape(-1) for t in LA.qr(_shifted(a, [2, 2, 2]))]),
    "eigh": lambda a: (lambda w, v: tg.cat([w.to(tg.complex128), _phase_free(v, v[:1])]))(
        *LA.eigh(_shifted(a + a.mT.conj(), [0, 2, 4]))),
    "svd": lambda a: (lambda u, s, vh: tg.cat([s.to(tg.complex128), _phase_free(u, u[:1]),
                                               _phase_free(vh, vh[:, :1])]))(
        *LA.svd(_shifted(a, [0, 2, 4]), full_matrices=False)),
    "svdvals": lambda a: LA.svdvals(_shifted(a, [0, 2, 4])),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_SECOND_ORDER))
def test_complex_second_order_matches_finite_differences(name, interpreter_only):
    """h(a) = Re <v, grad_a Re <u, f(a)>> is real: its gradient (a double backward through the
    complex rules, the phase check included) against central differences along Re a, Im a."""
    f = COMPLEX_SECOND_ORDER[name]
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
