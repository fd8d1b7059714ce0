"""torch.linalg conventions the op database cannot express: gradients hard-coded from torch
2.13 (where jax's reference differs or is undefined), which triangle is read, undefined
gradients, torch's errors at backward time and the shapes of full factorizations.

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
