"""Op database: matrix products (mm, bmm, mv, dot, outer, tensordot, einsum) and torch.linalg.

Samples are small and well conditioned: matrices near 2I for inv/solve/det, A + A^T with a
chosen spectrum for cholesky/eigh (the `fn` symmetrizes, so finite differences in any
direction are valid; a `sym=False` sample calls the op on a symmetric matrix directly and is
checked against jax, whose eigh/cholesky gradients are symmetric like torch's), and U S V^T
with distinct singular values for svd/qr.  Eigenvectors and singular vectors are defined up
to sign, so `fn`/`ref` return sign-free products (each column times its first entry).
Multi-output ops are checked through one tensor holding every output, flattened.

The solves and factorizations also take complex64/complex128: the same samples drawn
complex (the generators give complex noise, unitary factors and Hermitian A + A^H), with
phase-free products (each column times the conjugate of its first entry) for eigh/svd,
whose complex vectors are defined up to a phase.  torch 2.13's gradients at chosen points
(complex ones, and real ones where jax's reference differs or is undefined) are recorded in
each entry's `point_checks`; tests/ops/test_linalg.py checks them.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg

from .core import (C64, F32, F64, I64, ErrorInput, OpInfo, Sample, cuniform, ints, uniform,
                   with_imag)
from .core import (ComplexEdgeGrad, ComplexTorchGrad, LinalgSecondOrder,  # point-check records
                   LinalgTorchGrad, Subgradient, Z00)

INF = math.inf
LA = tg.linalg
LINALG_TOLS = {F32: (2e-4, 2e-4), C64: (2e-4, 2e-4)}   # single precision vs float64 refs


# ---- the points and losses of the recorded gradients (LinalgTorchGrad, LinalgSecondOrder) ---
A0 = [[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]]
G = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
R = [[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]]
CA = [[2 + 0.5j, -0.3 + 0.2j], [0.4 - 0.1j, 1.5 - 0.6j]]            # well conditioned
CH = [[3, 0.5 - 0.7j], [0.5 + 0.7j, 2]]                               # Hermitian positive-definite
CB = [[1 + 0.5j, -0.3 + 0.2j, 0.6], [0.4 - 0.1j, 1.5 - 0.6j, -0.2 + 0.9j]]   # distinct sing. values
CG = [[1 - 0.5j, 0.3 + 0.2j], [-0.7 + 1j, 0.25 - 0.4j]]
CG23 = [[1 - 0.5j, 0.3 + 0.2j, 0.1 - 0.9j], [-0.7 + 1j, 0.25 - 0.4j, 0.5 + 0.5j]]
CRHS = [[0.3 + 0.1j], [-1 + 0.5j]]


def _t(values, requires_grad=True):
    return tg.tensor(np.array(values, np.float64), requires_grad=requires_grad)


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


def _shifted(a, diag):
    return a + tg.tensor(np.diag(np.asarray(diag, np.complex128)))


def _phase_free(x, first):
    return (x * first.conj()).reshape(-1)
NO_LOW = {"low_precision": "torch.linalg has no float16/bfloat16 kernels (raises, as torch)"}


def _f(*shape, dtype=np.float32):
    return np.ones(shape, dtype)


# ---- generators (a complex dtype draws complex values: noise, unitary factors) ---------------
def _near_identity(rng, shape, dtype, scale=2.0):
    """scale * I plus noise in [-0.5, 0.5] (complex: in both parts): well conditioned, det far
    from 0."""
    n = shape[-1]
    a = rng.uniform(-0.5, 0.5, shape) + scale * np.eye(n)
    return (with_imag(rng, a, dtype, 0.5) if dtype.is_complex else a).astype(dtype.numpy)


def _orthogonal(rng, shape, complex_=False):
    """Orthogonal matrices; unitary ones with `complex_`."""
    g = rng.standard_normal(shape)
    if complex_:
        g = g + 1j * rng.standard_normal(shape)
    q, r = np.linalg.qr(g)
    d = np.diagonal(r, axis1=-2, axis2=-1)
    return q * (d / np.abs(d))[..., None, :]


def _mH(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _half_spectrum(rng, shape, dtype, values):
    """A with A + A^H = Q diag(values) Q^H (A itself symmetric, Hermitian for a complex dtype)."""
    q = _orthogonal(rng, shape, dtype.is_complex)
    return ((q * np.asarray(values, float)) @ _mH(q) / 2).astype(dtype.numpy)


def _with_singular_values(rng, shape, dtype, values):
    *batch, m, n = shape
    k = min(m, n)
    u = _orthogonal(rng, tuple(batch) + (m, m), dtype.is_complex)[..., :k]
    v = _orthogonal(rng, tuple(batch) + (n, n), dtype.is_complex)[..., :k]
    return ((u * np.asarray(values, float)) @ _mH(v)).astype(dtype.numpy)


def _uniform(rng, shape, dtype, low=-1.0, high=1.0):
    return (cuniform if dtype.is_complex else uniform)(rng, shape, dtype, low, high)


def _is_complex(x) -> bool:
    """For tensors and NumPy/jax arrays alike."""
    return x.dtype.is_complex if isinstance(x, tg.Tensor) else np.iscomplexobj(x)


def _conj(x):
    """conj(x) for complex x; x itself for a real one (no extra op in the real programs)."""
    return x.conj() if _is_complex(x) else x


def _herm(x):
    """x^H of a tensor or an array (x^T for real ones)."""
    return _conj(x.mT if isinstance(x, tg.Tensor) else x.swapaxes(-1, -2))


# ---- helpers shared by fn (tracegrad) and ref (xp) -------------------------------------------
def _mT(xp, x):
    return xp.swapaxes(x, -1, -2)


def _flat_cat_tg(*xs, batch):
    return tg.cat([x.reshape(*batch, -1) for x in xs], -1)


def _flat_cat_xp(xp, *xs, batch):
    return xp.concatenate([xp.reshape(x, tuple(batch) + (-1,)) for x in xs], -1)


# ---- mm, bmm, mv, dot, outer ------------------------------------------------------------------
def _pair_samples(shapes, ints_ok=True):
    def samples(rng, dtype):
        out = [Sample((uniform(rng, a, dtype, -1, 1), uniform(rng, b, dtype, -1, 1)))
               for a, b in shapes]
        if ints_ok and dtype is F32:   # integer products, as torch (forward only)
            out.append(Sample((ints(rng, shapes[0][0]), ints(rng, shapes[0][1])), dtype=I64))
        return out
    return samples


def _mm_errors():
    return [ErrorInput((_f(3), _f(3, 2)), ValueError, ("mm", "self must be a matrix", "f32[3]")),
            ErrorInput((_f(2, 3), _f(3)), ValueError, ("mm", "mat2 must be a matrix")),
            ErrorInput((_f(2, 3), _f(4, 2)), ValueError,
                       ("mm", "cannot be multiplied", "2x3 and 4x2", "f32[2,3]", "f32[4,2]")),
            ErrorInput((_f(2, 3), _f(3, 2, dtype=np.float64)), TypeError,
                       ("mm", "same dtype", "f32[2,3]", "f64[3,2]"))]


def _bmm_errors():
    return [ErrorInput((_f(2, 3), _f(3, 2)), ValueError, ("bmm", "batch1 must be a 3D tensor")),
            ErrorInput((_f(2, 2, 3), _f(3, 3, 2)), ValueError,
                       ("bmm", "[2, 3]", "[3, 3]", "f32[2,2,3]")),
            ErrorInput((_f(2, 2, 3), _f(2, 4, 2)), ValueError, ("bmm", "[2, 3]", "[2, 4]")),
            ErrorInput((_f(2, 2, 3), _f(2, 3, 2, dtype=np.float64)), TypeError,
                       ("bmm", "same dtype"))]


def _mv_errors():
    return [ErrorInput((_f(2, 3), _f(3, 1)), ValueError, ("mv", "f32[2,3]", "f32[3,1]")),
            ErrorInput((_f(2, 3), _f(4)), ValueError, ("mv", "size mismatch", "2x3", "(4)")),
            ErrorInput((_f(2, 3), _f(3, dtype=np.float64)), TypeError, ("mv", "same dtype"))]


def _dot_errors():
    return [ErrorInput((_f(2, 3), _f(3)), ValueError, ("dot", "1D tensors expected", "2D")),
            ErrorInput((_f(3), _f(4)), ValueError, ("dot", "inconsistent tensor size", "[3]",
                                                    "[4]")),
            ErrorInput((_f(3), _f(3, dtype=np.float64)), TypeError,
                       ("dot", "same dtype", "f32[3]", "f64[3]")),
            ErrorInput((_f(3), 2.0), TypeError, ("dot()", "tensor", "float"))]


def _outer_samples(rng, dtype):
    out = _pair_samples([((3,), (4,)), ((1,), (2,))])(rng, dtype)
    if dtype is F32:   # torch.outer promotes like mul
        out.append(Sample((uniform(rng, (3,), F32), uniform(rng, (2,), F64)), dtype=F64))
        out.append(Sample((ints(rng, (3,)), uniform(rng, (2,), F32)), dtype=F32))
    return out


PRODUCT_OPS = [
    OpInfo("mm", tg.mm, lambda xp, a, b: xp.matmul(a, b),
           _pair_samples([((3, 4), (4, 2)), ((1, 3), (3, 1))]), error_inputs=_mm_errors,
           complex_samples=2),
    OpInfo("bmm", lambda a, b: a.bmm(b), lambda xp, a, b: xp.matmul(a, b),
           _pair_samples([((2, 3, 4), (2, 4, 2)), ((1, 2, 1), (1, 1, 3))]),
           error_inputs=_bmm_errors, complex_samples=2),
    OpInfo("mv", tg.mv, lambda xp, a, v: xp.matmul(a, v),
           _pair_samples([((3, 4), (4,)), ((1, 2), (2,))]), error_inputs=_mv_errors,
           complex_samples=2),
    OpInfo("dot", lambda a, b: a.dot(b), lambda xp, a, b: xp.dot(a, b),
           _pair_samples([((4,), (4,)), ((1,), (1,))]), error_inputs=_dot_errors,
           complex_samples=2,
           point_checks=(
               ComplexTorchGrad("dot", lambda a, b: tg.dot(a, b).reshape(1), 2,
                                [[0.5 + 0.25j, 0.95 - 1.1j, -1.25 - 0.5j],
                                 [-2.5j, -0.65 - 0.05j, 1.25 + 0.75j]]),
           )),
    OpInfo("outer", tg.outer, lambda xp, a, b: xp.outer(a, b), _outer_samples,
           error_inputs=lambda: [ErrorInput((_f(2, 3), _f(3)), ValueError,
                                            ("outer", "1-D argument self", "2-D"))],
           complex_samples=2),
]


# ---- tensordot --------------------------------------------------------------------------------
def _tensordot_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -1, 1)  # noqa: E731
    return [Sample((u(2, 3, 4), u(3, 4, 2))),                                  # dims=2
            Sample((u(2, 3), u(3, 2)), {"dims": 1}),
            Sample((u(2, 3), u(2)), {"dims": 0}),                              # outer product
            Sample((u(2, 3, 4), u(4, 3, 2)), {"dims": ([1, 2], [1, 0])}),
            Sample((u(3, 2), u(2, 3)), {"dims": ([-1, 0], [0, -1])}),          # full contraction
            Sample((u(2, 3), u(2, 3)), {"dims": 2})]                         # -> 0-d


def _tensordot_ref(xp, a, b, dims=2):
    return xp.tensordot(a, b, axes=dims)


def _tensordot_errors():
    a, b = _f(2, 3, 4), _f(4, 4, 5)
    return [ErrorInput((a, b), ValueError, ("tensordot", "contracted dimensions need to match",
                                            "size 3", "size 4", "f32[2,3,4]")),
            ErrorInput((_f(2, 3), _f(3, 5)), ValueError, ("dims >= 0", "dims=-1"), {"dims": -1}),
            ErrorInput((_f(2, 3), _f(3, 5)), ValueError, ("ndim", "dims=3"), {"dims": 3}),
            ErrorInput((_f(2, 3), _f(3, 5)), ValueError, ("same length",),
                       {"dims": ([1], [0, 1])}),
            ErrorInput((_f(2, 3), _f(3, 5)), TypeError, ("tensordot", "pair of lists"),
                       {"dims": (1, 0)}),
            ErrorInput((_f(2, 3), _f(3, 5, dtype=np.float64)), TypeError,
                       ("tensordot", "same dtype"), {"dims": 1}),
            ErrorInput((_f(2, 3), _f(3, 5)), IndexError, ("tensordot", "out of range"),
                       {"dims": ([2], [0])})]


TENSORDOT = OpInfo("tensordot", tg.tensordot, _tensordot_ref, _tensordot_samples,
                   error_inputs=_tensordot_errors, complex_samples=2)


# ---- einsum -----------------------------------------------------------------------------------
EINSUM_CASES = [   # (equation, operand shapes)
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("ii->i", [(3, 3)]),                    # diagonal
    ("ii", [(3, 3)]),                       # trace (implicit output)
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("...ij,...jk", [(2, 2, 3), (3, 2)]),   # ellipsis broadcasting
    ("ijk->kji", [(2, 3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)]),
    ("ba,cb", [(3, 2), (4, 3)]),            # implicit output 'ac'
    ("i j , j k -> i k", [(2, 3), (3, 2)]),
    ("iij,kj->ki", [(2, 2, 3), (4, 3)]),    # a diagonal inside a product
    ("ij,kj->", [(2, 1), (3, 4)]),          # size-1 broadcasting of j (torch allows it)
]


def _einsum_samples(rng, dtype):
    out = [Sample(tuple(uniform(rng, s, dtype, -1, 1) for s in shapes), {"equation": eq})
           for eq, shapes in EINSUM_CASES]
    if dtype is F32:
        out.append(Sample((ints(rng, (2, 3)), ints(rng, (3, 2))), {"equation": "ij,jk"},
                          dtype=I64))
    return out


def _einsum_ref(xp, *xs, equation):
    if equation == "ij,kj->":   # numpy/jax do not broadcast a labelled size-1 dim
        xs = (xp.broadcast_to(xs[0], (2, 4)), xs[1])
    return xp.einsum(equation, *xs)


def _einsum_errors():
    def e(eq, shapes, exc, *match, dtype=np.float32):
        return ErrorInput(tuple(np.ones(s, dtype) for s in shapes), exc, match, {"equation": eq})
    return [e("ij,jk", [(2, 3)], ValueError, "einsum()", "fewer operands"),
            e("ij", [(2, 3), (3,)], ValueError, "einsum()", "more operands"),
            e("ijk,jk", [(2, 3), (3, 2)], ValueError, "einsum()", "subscripts", "(3)", "(2)",
              "operand 0"),
            e("ij->ii", [(2, 2)], ValueError, "einsum()", "output subscript i",
              "more than once"),
            e("ij->k", [(2, 2)], ValueError, "output subscript k", "does not appear"),
            e("i1->i", [(2, 2)], ValueError, "einsum()", "invalid subscript", "[a-zA-Z]"),
            e("ij,jk", [(2, 3), (4, 2)], ValueError, "einsum()", "subscript j", "size 4",
              "operand 1", "size 3"),
            e("ii->i", [(2, 3)], ValueError, "einsum()", "subscript i is repeated", "3 != 2"),
            e("...ij,...jk", [(5, 2, 3), (4, 3, 2)], ValueError, "einsum()", "ellipsis",
              "size 4"),
            ErrorInput((_f(2, 3), _f(3, 2, dtype=np.float64)), TypeError,
                       ("einsum()", "dtype", "f32[2,3]", "f64[3,2]"), {"equation": "ij,jk"}),
            ErrorInput((_f(2, 3), 2.0), TypeError, ("einsum()", "tensor", "float"),
                       {"equation": "ij,"})]


EINSUM = OpInfo("einsum", lambda *xs, equation: tg.einsum(equation, *xs), _einsum_ref,
                _einsum_samples, error_inputs=_einsum_errors, executor_samples=(0, 8),
                complex_samples=3)


# ---- inv, solve, det, slogdet -----------------------------------------------------------------
def _square_errors(name, **kw):
    return [ErrorInput((_f(2, 3),), ValueError, (name, "square matrices", "2 by 3", "f32[2,3]"),
                       kw),
            ErrorInput((_f(3),), ValueError, (name, "at least 2 dimensions", "f32[3]"), kw),
            ErrorInput((np.eye(2, dtype=np.int64),), TypeError, (name, "floating point",
                                                                 "i64[2,2]"), kw),
            ErrorInput((np.eye(2, dtype=np.float16),), TypeError,
                       (name, "Low precision", "f16[2,2]"), kw)]


def _inv_samples(rng, dtype):
    return [Sample((_near_identity(rng, (3, 3), dtype),)),
            Sample((_near_identity(rng, (2, 2, 2), dtype),)),
            Sample((_near_identity(rng, (1, 1), dtype, -1.5),))]


def _inv_errors():
    singular = np.stack([np.eye(2), np.ones((2, 2))]).astype(np.float32)
    return _square_errors("linalg.inv") + [
        ErrorInput((_f(2, 2),), tg.linalg.LinAlgError, ("linalg.inv", "singular", "f32[2,2]")),
        ErrorInput((singular,), RuntimeError, ("linalg.inv", "(Batch element 1)", "singular"))]


def _solve_samples(rng, dtype):
    a = lambda *s: _near_identity(rng, s, dtype)  # noqa: E731
    u = lambda *s: _uniform(rng, s, dtype)  # noqa: E731
    return [Sample((a(3, 3), u(3, 2))),
            Sample((a(3, 3), u(3,))),                            # a vector right-hand side
            Sample((a(2, 3, 3), u(2, 3))),                       # a batch of vectors
            Sample((a(2, 3, 3), u(3, 1))),                       # B broadcast over A's batch
            Sample((a(3, 3), u(2, 3, 2))),                       # A broadcast over B's batch
            Sample((a(3, 3), u(2, 3)), {"left": False})]         # X A = B


def _solve_ref(xp, a, b, left=True):
    if not left:
        return _mT(xp, xp.linalg.solve(_mT(xp, a), _mT(xp, b)))
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        return xp.linalg.solve(a, b[..., None])[..., 0]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                           xp.broadcast_to(b, batch + b.shape[-2:]))


def _solve_errors():
    eye = np.eye(3, dtype=np.float32)
    return [ErrorInput((eye, _f(4)), ValueError, ("linalg.solve", "Incompatible shapes",
                                                  "AX = B", "3x3 and 4x1")),
            ErrorInput((eye, _f(4, 2)), ValueError, ("linalg.solve", "4x2")),
            ErrorInput((eye, _f(3)), ValueError, ("linalg.solve", "XA = B"), {"left": False}),
            ErrorInput((eye, _f(3, dtype=np.float64)), TypeError,
                       ("linalg.solve", "same dtype", "f32[3,3]", "f64[3]")),
            ErrorInput((_f(2, 3), _f(2)), ValueError, ("linalg.solve", "square", "2 by 3")),
            ErrorInput((_f(3, 3), _f(3)), tg.linalg.LinAlgError, ("linalg.solve", "singular")),
            ErrorInput((np.stack([eye, eye]), _f(3, 3, 1)), ValueError,
                       ("linalg.solve", "batch dimensions", "broadcast"))]


def _det_samples(rng, dtype):
    flip = _near_identity(rng, (3, 3), dtype)
    flip[0] *= -1                                       # a negative determinant
    return [Sample((_near_identity(rng, (3, 3), dtype),)), Sample((flip,)),
            Sample((_near_identity(rng, (2, 2, 2), dtype),)),
            Sample((_near_identity(rng, (1, 1), dtype),))]


def _slogdet_fn(a):
    sign, logabsdet = LA.slogdet(a)
    return tg.cat([sign.unsqueeze(-1), logabsdet.unsqueeze(-1)], -1)


def _slogdet_ref(xp, a):
    sign, logabsdet = xp.linalg.slogdet(a)
    return xp.stack([sign, logabsdet], -1)


SOLVE_OPS = [
    OpInfo("linalg.inv", LA.inv, lambda xp, a: xp.linalg.inv(a), _inv_samples,
           error_inputs=_inv_errors, covers=("linalg_inv",), tols=LINALG_TOLS, skips=NO_LOW,
           complex_samples=_inv_samples,
           point_checks=(
               LinalgTorchGrad("inv", lambda a: _re(LA.inv(a), CG), CA,
                               [[-0.300454664713 + 0.029665614172j,
                                 -0.011407695307 - 0.094746718619j],
                                [0.068978448298 - 0.301533818032j,
                                 0.013961603162 + 0.234904877575j]],
                               complex=True),
               LinalgSecondOrder("inv", lambda a: LA.inv(_shifted(a, [2, 2, 2]))),
           )),
    OpInfo("linalg.solve", LA.solve, _solve_ref, _solve_samples, error_inputs=_solve_errors,
           covers=("linalg_solve", "batched_solve"), tols=LINALG_TOLS, skips=NO_LOW,
           executor_samples=(0, 4), complex_samples=_solve_samples,
           point_checks=(
               LinalgTorchGrad("solve_A",
                               lambda a: _re(LA.solve(a, _c(CRHS)), [[1 - 0.5j], [-0.7 + 1j]]), CA,
                               [[-0.018795107141 + 0.081623610044j,
                                 0.430645466115 - 0.152413033057j],
                                [-0.07331749842 - 0.055556174955j,
                                 -0.041073547807 + 0.500018501036j]],
                               complex=True),
               LinalgTorchGrad("solve_B",
                               lambda b: _re(LA.solve(_c(CA), b), [[1 - 0.5j], [-0.7 + 1j]]), CRHS,
                               [[0.601603557472 - 0.240264115348j],
                                [-0.029982482145 + 0.710820644118j]],
                               complex=True),
               LinalgSecondOrder("solve", lambda a: LA.solve(_shifted(a, [2, 2, 2]), a[:, :1])),
           )),
    OpInfo("linalg.det", LA.det, lambda xp, a: xp.linalg.det(a), _det_samples,
           error_inputs=lambda: _square_errors("linalg.det"), covers=("linalg_det",),
           tols=LINALG_TOLS, skips=NO_LOW, complex_samples=_det_samples,
           notes="0 at an exactly singular matrix (det == 0), as torch; the cofactor matrix, "
                 "jax's answer, is the true gradient there",
           point_checks=(
               # det at an exactly singular matrix: 0 (the cofactor matrix [[4, -2], [-2, 1]] is
               # what jax
               # and calculus give)
               LinalgTorchGrad("det_singular", lambda a: LA.det(a), [[1.0, 2.0], [2.0, 4.0]],
                               [[0.0, 0.0], [0.0, 0.0]]),
               LinalgTorchGrad("det", lambda a: (LA.det(a) * (0.7 + 0.2j)).real, CA,
                               [[1.17 + 0.12j, -0.3 + 0.01j], [0.25 + 0.08j, 1.3 - 0.75j]],
                               complex=True),
               LinalgSecondOrder("det", lambda a: LA.det(_shifted(a, [2, 2, 2])).reshape(1)),
           )),
    OpInfo("linalg.slogdet", _slogdet_fn, _slogdet_ref, _det_samples,
           error_inputs=lambda: _square_errors("linalg.slogdet"), covers=("linalg_slogdet",),
           tols=LINALG_TOLS, skips=NO_LOW, complex_samples=_det_samples,
           notes="a real sign has no gradient (a complex one, e^(i theta), has); at a singular "
                 "matrix (logabsdet = -inf) the backward raises LinAlgError (torch gives inf)",
           point_checks=(
               # a complex sign e^{i theta} has a gradient (a real one does not)
               LinalgTorchGrad("slogdet_sign", lambda a: (LA.slogdet(a).sign * (0.3 - 0.4j)).real,
                               CA,
                               [[-0.044815782 + 0.20301549246j, 0.00433219226 - 0.05288262276j],
                                [-0.01912140032 + 0.04227622102j, 0.1053170877 + 0.2434990822j]],
                               complex=True),
               LinalgTorchGrad("slogdet",
                               lambda a: ((LA.slogdet(a).sign * (0.3 - 0.4j)).real
                                          - 0.6 * LA.slogdet(a)[1]),
                               CA,
                               [[-0.319509219542 + 0.142376764525j,
                                 0.075885891222 - 0.04702087906j],
                                [-0.076323933671 + 0.016403697101j,
                                 -0.224153334076 + 0.386000092845j]],
                               complex=True),
               LinalgSecondOrder("slogdet",
                                 lambda a: tg.stack([
                                     LA.slogdet(_shifted(a, [2, 2, 2]))[0],
                                     LA.slogdet(_shifted(a, [2, 2, 2]))[1].to(tg.complex128)])),
           )),
]


# ---- cholesky, qr, eigh, svd, svdvals ---------------------------------------------------------
def _cholesky_fn(a, upper=False, sym=True):
    return LA.cholesky(a + _herm(a) if sym else a, upper=upper)


def _cholesky_ref(xp, a, upper=False, sym=True):
    m = a + _herm(a) if sym else a
    low = xp.linalg.cholesky(m)
    return _herm(low) if upper else low


def _cholesky_samples(rng, dtype):
    spd = lambda *s: _half_spectrum(rng, s, dtype, np.linspace(1.0, 4.0, s[-1]))  # noqa: E731
    return [Sample((spd(3, 3),)), Sample((spd(3, 3),), {"upper": True}),
            Sample((spd(2, 2, 2),)),
            # A itself SPD, not symmetrized: checked against jax (symmetric gradient, as torch)
            Sample((2 * spd(3, 3),), {"sym": False}, fd=False)]


def _cholesky_errors():
    bad = np.stack([np.eye(2), -np.eye(2)]).astype(np.float32)
    return _square_errors("linalg.cholesky", sym=False) + [
        ErrorInput((-np.eye(3, dtype=np.float32),), tg.linalg.LinAlgError,
                   ("linalg.cholesky", "not positive-definite", "f32[3,3]"), {"sym": False}),
        ErrorInput((bad,), RuntimeError, ("linalg.cholesky", "(Batch element 1)"),
                   {"sym": False})]


def _qr_fn(a, mode="reduced"):
    q, r = LA.qr(a, mode)
    return _flat_cat_tg(q, r, batch=a.shape[:-2])


def _qr_ref(xp, a, mode="reduced"):
    q, r = xp.linalg.qr(a, mode=mode)
    return _flat_cat_xp(xp, q, r, batch=a.shape[:-2])


def _qr_samples(rng, dtype):
    g = lambda *s: _with_singular_values(rng, s, dtype, np.linspace(2.0, 1.0, min(s[-2:])))  # noqa
    return [Sample((g(4, 3),)), Sample((g(2, 4),)), Sample((g(2, 3, 3),)),
            Sample((g(2, 3),), {"mode": "complete"})]


def _qr_errors():
    return [ErrorInput((_f(3),), ValueError, ("linalg.qr", "at least 2 dimensions")),
            ErrorInput((_f(3, 2),), ValueError, ("linalg.qr", "unrecognized mode 'foo'"),
                       {"mode": "foo"}),
            ErrorInput((np.ones((2, 2), np.int64),), TypeError, ("linalg.qr", "floating point"))]


def _eigh_fn(a, UPLO="L", sym=True):
    w, v = LA.eigh(a + _herm(a) if sym else a, UPLO)
    return tg.cat([w.unsqueeze(-2), v * _conj(v[..., :1, :])], -2)   # sign-free eigenvectors


def _eigh_ref(xp, a, UPLO="L", sym=True):
    w, v = xp.linalg.eigh(a + _herm(a) if sym else a, UPLO=UPLO)
    return xp.concatenate([w[..., None, :].astype(v.dtype), v * _conj(v[..., :1, :])], -2)


def _eigh_samples(rng, dtype):
    h = lambda *s: _half_spectrum(rng, s, dtype, np.linspace(-1.5, 2.0, s[-1]))  # noqa: E731
    return [Sample((h(3, 3),)), Sample((h(2, 3, 3),)), Sample((h(3, 3),), {"UPLO": "U"}),
            Sample((2 * h(3, 3),), {"sym": False}, fd=False),   # symmetric gradient, as torch
            Sample((h(1, 1),))]


def _eigh_errors():
    return _square_errors("linalg.eigh", sym=False) + [
        ErrorInput((_f(2, 2),), ValueError, ("linalg.eigh", "UPLO", "'L' or 'U'", "X"),
                   {"UPLO": "X"})]


def _sign_free_svd(u, s, vh, k):
    """Each singular vector times (the conjugate of) its first entry: invariant under
    (u_i, v_i) -> -(u_i, v_i), and (u_i, v_i) -> (u_i, v_i) e^{i phi} for complex ones."""
    u, vh = u[..., :, :k], vh[..., :k, :]
    return u * _conj(u[..., :1, :]), s, vh * _conj(vh[..., :, :1])


def _svd_fn(a, full_matrices=False, part="all"):
    u, s, vh = LA.svd(a, full_matrices=full_matrices)
    if part == "S":
        return s
    return _flat_cat_tg(*_sign_free_svd(u, s, vh, min(a.shape[-2:])), batch=a.shape[:-2])


def _svd_ref(xp, a, full_matrices=False, part="all"):
    u, s, vh = xp.linalg.svd(a, full_matrices=False)   # jax differentiates only this form
    if part == "S":
        return s
    return _flat_cat_xp(xp, *_sign_free_svd(u, s, vh, min(a.shape[-2:])), batch=a.shape[:-2])


def _svd_samples(rng, dtype):
    g = lambda *s: _with_singular_values(rng, s, dtype, np.linspace(3.0, 1.0, min(s[-2:])))  # noqa
    return [Sample((g(3, 2),)), Sample((g(2, 3),)), Sample((g(2, 3, 3),)),
            Sample((g(3, 2),), {"full_matrices": True}),   # extra column of U: no gradient
            Sample((g(2, 3),), {"part": "S"}, dtype=dtype.to_real())]   # S: real


def _svd_errors():
    return [ErrorInput((_f(3),), ValueError, ("linalg.svd", "at least 2 dimensions")),
            ErrorInput((np.ones((3, 2), np.int64),), TypeError, ("linalg.svd", "floating point"))]


def _svdvals_samples(rng, dtype):
    g = lambda *s: _with_singular_values(rng, s, dtype, np.linspace(3.0, 1.0, min(s[-2:])))  # noqa
    # the identity: one singular value three times, and the gradient is still defined
    real = dtype.to_real()   # the singular values of a complex matrix are real
    return [Sample((g(3, 2),), dtype=real), Sample((g(2, 2, 3),), dtype=real),
            Sample((np.eye(3, dtype=dtype.numpy),), dtype=real, fd=False)]


FACTOR_OPS = [
    # complex: no sym=False sample (torch's complex gradient is not Hermitian, jax's is; the
    # torch values are in tests/ops/test_linalg.py)
    OpInfo("linalg.cholesky", _cholesky_fn, _cholesky_ref, _cholesky_samples,
           error_inputs=_cholesky_errors, covers=("linalg_cholesky",), tols=LINALG_TOLS,
           skips=NO_LOW, complex_samples=lambda rng, dtype: _cholesky_samples(rng, dtype)[:3],
           notes="the gradient is symmetric (torch's), though only one triangle of A is read; "
                 "complex: Hermitian plus torch's skew-Hermitian i L^-H Im(diag(L^H g)) L^-1 / 2",
           point_checks=(
               LinalgTorchGrad("cholesky", lambda a: (LA.cholesky(a) * _t(G, False)).sum(), A0,
                               [[0.2226712243, -0.045998352, 0.6155253692],
                                [-0.045998352, 1.6326497916, 2.5755480744],
                                [0.6155253692, 2.5755480744, 2.2862973111]]),
               LinalgTorchGrad("cholesky_upper",
                               lambda a: (LA.cholesky(a, upper=True) * _t(G, False)).sum(), A0,
                               [[0.7685018448, -0.5886666949, -0.4824604272],
                                [-0.5886666949, 1.6200006809, 1.9430925423],
                                [-0.4824604272, 1.9430925423, 2.2862973111]]),
               # not Hermitian: torch's Hermitian gradient plus a skew-Hermitian term (no Hermitian
               # change
               # of A sees it)
               LinalgTorchGrad("cholesky", lambda a: _re(LA.cholesky(a), CG), CH,
                               [[0.262758249864 - 0.061493782437j,
                                 -0.182563001503 - 0.241474507061j],
                                [-0.253049271952 + 0.291821843097j,
                                 0.094401255067 - 0.151042008107j]],
                               complex=True),
               LinalgTorchGrad("cholesky_upper", lambda a: _re(LA.cholesky(a, upper=True), CG), CH,
                               [[0.295474765118 + 0.126926812945j,
                                 0.035625862642 + 0.054588318417j],
                                [0.106112133092 - 0.104935654452j,
                                 0.094401255067 + 0.151042008107j]],
                               complex=True),
               LinalgSecondOrder("cholesky",
                                 lambda a: LA.cholesky(_shifted(a + a.mT.conj(), [4, 4, 4]))),
           )),
    OpInfo("linalg.qr", _qr_fn, _qr_ref, _qr_samples, error_inputs=_qr_errors,
           covers=("linalg_qr",), tols=LINALG_TOLS, skips=NO_LOW, executor_samples=(0, 1),
           complex_samples=_qr_samples,
           notes="undefined when A is rank-deficient (R singular); mode='r' and "
                 "mode='complete' with m > n have none (backward raises, as torch)",
           point_checks=(
               LinalgTorchGrad("qr_tall", _qr_loss, R,
                               [[-7.9316457407, 1.2922850881], [-2.387351087, -10.2349636485],
                     [-14.6344716586, 7.6002178156]]),
               LinalgTorchGrad("qr_wide", _qr_loss, np.transpose(R),
                               [[12.7903088313, -10.733126292, -12.0747670785],
                                [-11.9853243594, -1.3416407865, -1.788854382]]),
               LinalgTorchGrad("qr", _qr_re(CG, np.conj(CG) * 0.5), CA,
                               [[-0.665334808096 + 0.197541090174j,
                                 -0.139144041462 + 0.026041970713j],
                                [0.300687860504 - 0.60434124822j,
                                 -0.065751396452 + 0.237892844758j]],
                               complex=True),
               LinalgTorchGrad("qr_wide", _qr_re(CG, CG23), CB,
                               [[-1.556189065831 - 0.529579063926j,
                                 -0.110401340017 - 0.175470263623j,
                                 -0.340116194811 + 0.925702476855j],
                                [1.479252320615 - 0.376401407675j,
                                 -0.444398270215 - 0.184045212801j,
                                 -0.582871755491 + 0.08750094298j]], complex=True),
               LinalgTorchGrad("qr_tall", _qr_re(np.transpose(CG23), CG), np.transpose(CB),
                               [[-1.332012699054 - 0.095431626964j,
                                 -0.099968625921 - 0.275207169589j],
                                [-0.716673985528 - 0.639374451875j,
                                 -0.227889454755 + 0.086420594026j],
                                [-0.044148980959 + 0.456464500962j,
                                 -0.406343205441 - 0.097078292135j]],
                               complex=True),
               LinalgSecondOrder("qr",
                                 lambda a: tg.cat([t.reshape(-1) for t in LA.qr(_shifted(a,
                                                                                         [2, 2,
                                                                                          2]))])),
           )),
    OpInfo("linalg.eigh", _eigh_fn, _eigh_ref, _eigh_samples, error_inputs=_eigh_errors,
           covers=("linalg_eigh",), tols=LINALG_TOLS, skips=NO_LOW, complex_samples=_eigh_samples,
           notes="symmetric (Hermitian) gradient (torch's); inf/nan at repeated eigenvalues when "
                 "the eigenvectors are used; eigenvectors are defined up to sign (complex: a "
                 "phase, and a loss that depends on it raises RuntimeError, as torch)",
           point_checks=(
               LinalgTorchGrad("eigh",
                               lambda a: (LA.eigh(a).eigenvectors * LA.eigh(a).eigenvectors[:1, :]
                                  * _t(G, False)).sum(), A0,
                               [[0.5115917469, 0.3337917454, 0.3117337304],
                                [0.3337917454, -0.0518548867, -0.0199715351],
                                [0.3117337304, -0.0199715351, -0.4597368602]]),
               # repeated eigenvalues / singular values: defined when only the values are used
               LinalgTorchGrad("eigh_values_repeated", lambda a: LA.eigh(a).eigenvalues.sum(),
                               np.eye(3), np.eye(3)),
               LinalgTorchGrad("eigh", _eigh_loss, CH,
                               [[-0.403047475802, -0.681699891865 + 0.612666991423j],
                        [-0.681699891865 - 0.612666991423j, -0.496952524198]], complex=True),
               LinalgSecondOrder("eigh",
                                 lambda a: (lambda w,
                                            v: tg.cat([w.to(tg.complex128),
                                                       _phase_free(v, v[:1])]))(
                             *LA.eigh(_shifted(a + a.mT.conj(), [0, 2, 4])))),
           )),
    OpInfo("linalg.svd", _svd_fn, _svd_ref, _svd_samples, error_inputs=_svd_errors,
           covers=("linalg_svd",), tols=LINALG_TOLS, skips=NO_LOW, executor_samples=(0, 1),
           complex_samples=_svd_samples,
           notes="undefined at repeated singular values when U or Vh are used and at zero "
                 "singular values of a non-square A; singular vector pairs are defined up to "
                 "sign (complex: a phase, and a loss that depends on it raises RuntimeError, as "
                 "torch); with full_matrices the extra columns of U / rows of Vh get none",
           point_checks=(
               LinalgTorchGrad("svd_tall", _svd_loss, R,
                               [[-0.044499946, 0.4927987325], [0.7746636257, -0.4207316967],
                    [-0.0709293461, 0.7905326292]]),
               LinalgTorchGrad("svd_wide", _svd_loss, np.transpose(R),
                               [[0.0475464154, 0.3129622795, 0.6130153234],
                                [-0.0505114432, 0.6552576523, -0.6586338565]]),
               LinalgTorchGrad("svd_values_repeated", lambda a: LA.svd(a).S.sum(), np.eye(3),
                               np.eye(3)),
               LinalgTorchGrad("svd", _csvd_loss, CB,
                               [[0.016519538868 - 0.374785381015j, 0.654882254254 - 1.449006697622j,
                                 -0.675094857705 + 0.477146354233j],
                                [0.814780265835 + 0.753917809663j, 0.251654284821 - 0.165166605868j,
                                 0.029372720916 + 1.299261818577j]], complex=True),
               LinalgTorchGrad("svd_tall", _csvd_tall_loss, np.transpose(CB),
                               [[2.037553943016 + 0.848303422576j, 1.30915694534 + 0.098894635996j],
                                [-0.255613001903 - 0.197262816196j,
                                 3.033703279372 - 1.149036794891j],
                                [1.087228234079 + 0.4452338737j, -0.1489045408 + 2.005772054699j]],
                               complex=True),
               LinalgSecondOrder("svd",
                                 lambda a: (lambda u, s,
                                            vh: tg.cat([s.to(tg.complex128), _phase_free(u, u[:1]),
                                                                     _phase_free(vh, vh[:, :1])]))(
                              *LA.svd(_shifted(a, [0, 2, 4]), full_matrices=False))),
           )),
    OpInfo("linalg.svdvals", LA.svdvals, lambda xp, a: xp.linalg.svd(a, compute_uv=False),
           _svdvals_samples, error_inputs=lambda: [ErrorInput((_f(3),), ValueError,
                                                              ("linalg.svdvals", "2 dimensions"))],
           covers=("linalg_svdvals",), tols=LINALG_TOLS, skips=NO_LOW,
           complex_samples=_svdvals_samples,
           notes="U diag(g) Vh: defined also at repeated singular values",
           point_checks=(
               LinalgTorchGrad("svdvals_repeated", lambda a: LA.svdvals(a).sum(), np.eye(3),
                               np.eye(3)),
               LinalgTorchGrad("svdvals", lambda a: (LA.svdvals(a) * _r([0.5, -1.5])).sum(), CB,
                               [[-1.216731830261 - 0.566260952824j,
                                 -0.074556257399 - 0.205732599725j,
                                 -0.544215864512 - 0.197893322839j],
                                [-0.195326392945 - 0.056430807529j, 0.37488653511 - 0.201041968309j,
                                 -0.185843549723 + 0.242616005235j]], complex=True),
               LinalgSecondOrder("svdvals", lambda a: LA.svdvals(_shifted(a, [0, 2, 4]))),
           )),
]


# ---- norms ------------------------------------------------------------------------------------
def _safe_norm_ref(xp, x, ord=2, dim=None, keepdim=False):
    """Written so jax differentiates to torch's values: 0 where the norm is 0."""
    axis = None if dim is None else dim
    if x.ndim == 0:
        axis = None
    cplx = x.dtype.kind == "c"   # |z| is real; complex samples stay away from 0
    kw = {"axis": axis, "keepdims": keepdim}
    if ord == INF:
        return xp.max(xp.abs(x), **kw)
    if ord == -INF:
        return xp.min(xp.abs(x), **kw)
    if ord == 0:
        return xp.sum((x != 0).astype(xp.real(x).dtype), **kw)
    if ord == 1:
        return xp.sum(xp.abs(x) if cplx else x * xp.sign(x), **kw)
    if ord == 2:
        sq = xp.sum(xp.real(x) ** 2 + xp.imag(x) ** 2 if cplx else x * x, **kw)
        ok = sq > 0
        return xp.where(ok, xp.sqrt(xp.where(ok, sq, 1.0)), 0.0)
    return xp.sum(xp.abs(x) ** ord, **kw) ** (1.0 / ord)


def _vector_norm_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    zero_row = uniform(rng, (3, 4), dtype)
    zero_row[1] = 0.0
    ties = np.array([1.0, -2.0, 2.0, 0.5], dtype.numpy)
    out = [Sample((x,)), Sample((x, 1)), Sample((x, INF), {"dim": 1}), Sample((x, -INF)),
           Sample((x, 3.0), {"dim": 0, "keepdim": True}), Sample((x, 0.5), {"dim": (0, 1)}),
           Sample((x, -1.5), {"dim": -1}), Sample((x, 0)),
           Sample((uniform(rng, (), dtype),)),
           Sample((zero_row,), {"dim": 1}, fd=False),             # gradient 0 at the zero row
           Sample((ties, INF), fd=False)]                        # tied maxima share it
    if dtype is F32:
        out.append(Sample((x,), {"dtype": tg.float64}, dtype=F64))
    return out


def _vector_norm_complex(rng, dtype):
    """Norms of complex vectors are real (float32 for complex64); complex64 with
    dtype=complex128 too."""
    real = dtype.to_real()
    cu = lambda *s: cuniform(rng, s, dtype)  # noqa: E731
    out = [Sample((cu(3, 4),), dtype=real), Sample((cu(3, 4), 1), dtype=real),
           Sample((cu(3, 4), INF), {"dim": 1}, dtype=real),
           Sample((cu(3, 4), 3.0), {"dim": 0, "keepdim": True}, dtype=real),
           Sample((cu(3, 4), -1.5), {"dim": -1}, dtype=real)]
    if dtype is C64:
        out.append(Sample((cu(3, 4),), {"dtype": tg.complex128}, dtype=F64))
    return out


def _vector_norm_ref(xp, x, ord=2, dim=None, keepdim=False, dtype=None):
    return _safe_norm_ref(xp, x, ord, dim, keepdim)


def _vector_norm_errors():
    return [ErrorInput((np.ones(3, np.int64),), TypeError,
                       ("linalg.vector_norm", "floating point", "i64[3]")),
            ErrorInput((_f(3), "fro"), TypeError, ("linalg.vector_norm", "ord", "str")),
            ErrorInput((_f(0), INF), ValueError, ("linalg.vector_norm", "inf norm",
                                                  "empty tensor")),
            ErrorInput((_f(2, 3),), IndexError, ("linalg.vector_norm", "out of range"),
                       {"dim": 2}),
            ErrorInput((_f(3, dtype=np.float64),), TypeError, ("narrowing", "float32"),
                       {"dtype": tg.float32}),
            ErrorInput((_f(3, dtype=np.complex64),), TypeError, ("complex", "float64"),
                       {"dtype": tg.float64}),
            ErrorInput((_f(3),), TypeError, ("real", "complex64"), {"dtype": tg.complex64})]


def _matrix_norm_samples(rng, dtype):
    x = _with_singular_values(rng, (3, 2), dtype, [2.0, 1.0])
    y = _with_singular_values(rng, (2, 3, 3), dtype, [3.0, 2.0, 1.0])
    y = np.ascontiguousarray(np.moveaxis(y, 0, 1))      # (3, 2, 3): matrices over dims (0, 2)
    return [Sample((x,)), Sample((x, "nuc")), Sample((x, 2)), Sample((x, -2)),
            Sample((uniform(rng, (3, 4), dtype), 1)), Sample((uniform(rng, (3, 4), dtype), -1)),
            Sample((uniform(rng, (3, 4), dtype), INF), {"keepdim": True}),
            Sample((uniform(rng, (3, 4), dtype), -INF)),
            Sample((y, 2), {"dim": (0, 2), "keepdim": True}),
            Sample((y, "fro"), {"dim": (2, 0)}),
            Sample((np.eye(3, dtype=dtype.numpy), 2), fd=False)]   # three tied singular values


def _matrix_norm_complex(rng, dtype):
    """Norms of complex matrices are real (float32 for complex64); 'nuc' and ±2 through the
    complex singular values (random matrices: distinct)."""
    real = dtype.to_real()
    cu = lambda *s: cuniform(rng, s, dtype)  # noqa: E731
    return [Sample((cu(3, 4), 1), dtype=real),
            Sample((cu(3, 2, 3), "fro"), {"dim": (2, 0)}, dtype=real),
            Sample((cu(3, 4), INF), {"keepdim": True}, dtype=real),
            Sample((cu(2, 3, 4), -1), {"dim": (0, 2)}, dtype=real),
            Sample((cu(3, 4), "nuc"), dtype=real),
            Sample((cu(3, 2, 3), 2), {"dim": (0, 2), "keepdim": True}, dtype=real)]


def _linalg_norm_complex(rng, dtype):
    """A vector or a matrix norm of complex tensors, as linalg.norm picks."""
    real = dtype.to_real()
    cu = lambda *s: cuniform(rng, s, dtype)  # noqa: E731
    return [Sample((cu(2, 3, 2),), dtype=real), Sample((cu(4,), 1), dtype=real),
            Sample((cu(3, 4), INF, 0), dtype=real), Sample((cu(3, 4), "fro"), dtype=real),
            Sample((cu(3, 4), 1), dtype=real), Sample((cu(2, 3, 4), "nuc", (0, 2)), dtype=real)]


def _matrix_norm_ref(xp, a, ord="fro", dim=(-2, -1), keepdim=False):
    if ord == "fro":
        return _safe_norm_ref(xp, a, 2, tuple(dim), keepdim)
    if ord in ("nuc", 2, -2):
        d0, d1 = (d % a.ndim for d in dim)
        rest = [i for i in range(a.ndim) if i not in (d0, d1)]
        s = xp.linalg.svd(xp.transpose(a, rest + [d0, d1]), compute_uv=False)
        r = xp.sum(s, -1) if ord == "nuc" else xp.max(s, -1) if ord == 2 else xp.min(s, -1)
        if keepdim:
            r = xp.expand_dims(r, tuple(sorted((d0, d1))))
        return r
    return xp.linalg.norm(a, ord, axis=tuple(dim), keepdims=keepdim)


def _matrix_norm_errors():
    return [ErrorInput((_f(3),), ValueError, ("linalg.matrix_norm", "at least 2 dimensions")),
            ErrorInput((_f(3, 3), 3), ValueError, ("linalg.matrix_norm", "Order 3")),
            ErrorInput((_f(3, 3), "foo"), ValueError, ("linalg.matrix_norm", "Order foo")),
            ErrorInput((_f(3, 3, 2),), ValueError, ("linalg.matrix_norm", "different"),
                       {"dim": (0, 0)}),
            ErrorInput((np.ones((3, 3), np.int64),), TypeError, ("linalg.matrix_norm",
                                                                 "floating point"))]


NORM_CASES = [   # (shape, kwargs): how torch.linalg.norm picks a vector or a matrix norm
    ((2, 3, 2), {}), ((4,), {"ord": 1}), ((3, 4), {"ord": 2}), ((3, 4), {"ord": INF, "dim": 0}),
    ((2, 3, 4), {"ord": "nuc", "dim": (0, 2)}), ((2, 3), {"keepdim": True}),
]


def _norm_samples(rng, dtype):
    return [Sample((_with_singular_values(rng, s, dtype, np.linspace(2.0, 1.0, min(s[-2:])))
                    if len(s) >= 2 else uniform(rng, s, dtype),), kw) for s, kw in NORM_CASES]


def _norm_ref(xp, a, ord=None, dim=None, keepdim=False):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and a.ndim == 2):
        return _matrix_norm_ref(xp, a, "fro" if ord is None else ord, dim or (-2, -1), keepdim)
    return _safe_norm_ref(xp, a, 2 if ord is None else ord, dim, keepdim)


def _norm_errors():
    return [ErrorInput((_f(2, 2, 2), 2), ValueError, ("linalg.norm", "1D or 2D", "3D")),
            ErrorInput((_f(2, 2, 2),), ValueError, ("linalg.norm", "length 1 or 2", "[0, 1, 2]"),
                       {"dim": (0, 1, 2)}),
            ErrorInput((_f(3), "fro"), ValueError, ("linalg.matrix_norm", "2 dimensions"))]


NORM_OPS = [
    OpInfo("linalg.vector_norm", LA.vector_norm, _vector_norm_ref, _vector_norm_samples,
           error_inputs=_vector_norm_errors, covers=("linalg_vector_norm",),
           executor_samples=(0, 2), complex_samples=_vector_norm_complex,
           notes="0 where the norm is 0 (every ord); ord=±inf: tied extreme entries share it "
                 "evenly; ord=0: 0",
           point_checks=(
               Subgradient("vector_norm_zero", "linalg.vector_norm",
                           lambda x: tg.linalg.vector_norm(x), ([0.0, 0.0],), ([0.0, 0.0],),
                           "0 at the zero vector"),
               ComplexTorchGrad("vector_norm", lambda z: tg.linalg.vector_norm(z, 3).reshape(1), 1,
                                [[0.392551175775 + 0.785102351551j,
                                  -0.051182411386 + 0.030709446831j,
                                  0.160226291555 - 0.251784172443j]]),
               ComplexEdgeGrad("vector_norm_1_at_0", lambda z: tg.linalg.vector_norm(z, 1), Z00,
                               [0, 0]),
               ComplexEdgeGrad("vector_norm_inf_at_0",
                               lambda z: tg.linalg.vector_norm(z, float("inf")), Z00, [0, 0]),
               ComplexEdgeGrad("vector_norm_-1_at_0", lambda z: tg.linalg.vector_norm(z, -1), Z00,
                               [0, 0]),
               ComplexEdgeGrad("vector_norm_3_one_0", lambda z: tg.linalg.vector_norm(z, 3),
                               [0j, 3 + 4j], [0, 0.6 + 0.8j]),
               ComplexEdgeGrad("vector_norm_half_one_0", lambda z: tg.linalg.vector_norm(z, 0.5),
                               [0j, 3 + 4j], [0, 0.6 + 0.8j]),
               # split evenly
               ComplexEdgeGrad("vector_norm_inf_tie",
                               lambda z: tg.linalg.vector_norm(z, float("inf")),
                               [3 + 4j, 4 - 3j, 1j], [0.3 + 0.4j, 0.4 - 0.3j, 0]),
               # vector norms with a zero entry (the -1 norm is 0 there)
               LinalgTorchGrad("vector_norm_0.5", lambda x: LA.vector_norm(x, 0.5),
                               [3.0, 0.0, -4.0], [2.1547005384, 0.0, -1.8660254038]),
               LinalgTorchGrad("vector_norm_-1", lambda x: LA.vector_norm(x, -1), [3.0, 0.0, -4.0],
                               [0.0, 0.0, 0.0]),
               LinalgTorchGrad("vector_norm_3", lambda x: LA.vector_norm(x, 3), [3.0, 0.0, -4.0],
                               [0.4448513517, 0.0, -0.7908468475]),
               LinalgTorchGrad("vector_norm_1.5", lambda x: LA.vector_norm(x, 1.5),
                               [3.0, 0.0, -4.0], [0.7329564758, 0.0, -0.8463452372]),
               LinalgTorchGrad("vector_norm_inf_ties", lambda x: LA.vector_norm(x, math.inf),
                               [1.0, -2.0, 2.0, 0.0], [0.0, -0.5, 0.5, 0.0]),
               LinalgTorchGrad("vector_norm_2_zero", lambda x: LA.vector_norm(x), [0.0, 0.0],
                               [0.0, 0.0]),
           )),
    OpInfo("linalg.matrix_norm", LA.matrix_norm, _matrix_norm_ref, _matrix_norm_samples,
           error_inputs=_matrix_norm_errors, covers=("linalg_matrix_norm",), tols=LINALG_TOLS,
           complex_samples=_matrix_norm_complex,
           skips={"low_precision": "'nuc' and ±2 need svd (no float16/bfloat16 kernels)"},
           notes="ord=±2: tied singular values share the gradient evenly; ord=±1/±inf: tied "
                 "column/row sums share it evenly",
           point_checks=(
               ComplexTorchGrad("matrix_norm",
                                lambda a, b: tg.linalg.matrix_norm(tg.outer(a, b), 1).reshape(1), 2,
                                [[0.58137767415 + 1.1627553483j, -1.114740803426 + 0.668844482056j,
                                  0.697938139851 - 1.096759934052j],
                                 [0j, 3.805849521254 + 1.585770633856j, 0j]]),
               # U V^H of eye's SVD
               ComplexEdgeGrad("nuclear_norm_at_0",
                               lambda z: tg.linalg.matrix_norm(z.reshape(2, 2), "nuc"), [0j] * 4,
                               [1, 0, 0, 1]),
               ComplexEdgeGrad("fro_norm_at_0", lambda z: tg.linalg.matrix_norm(z.reshape(2, 2)),
                               [0j] * 4, [0] * 4),
               # matrix norms of the zero matrix: three tied singular values 0, U = V = I
               LinalgTorchGrad("matrix_norm_2_zero", lambda a: LA.matrix_norm(a, 2),
                               np.zeros((3, 3)), np.eye(3) / 3),
               LinalgTorchGrad("matrix_norm_nuc_zero", lambda a: LA.matrix_norm(a, "nuc"),
                               np.zeros((3, 3)), np.eye(3)),
               LinalgTorchGrad("matrix_norm_1_zero", lambda a: LA.matrix_norm(a, 1),
                               np.zeros((2, 2)), np.zeros((2, 2))),
           )),
    OpInfo("linalg.norm", LA.norm, _norm_ref, _norm_samples, error_inputs=_norm_errors,
           covers=("linalg_norm",), tols=LINALG_TOLS, complex_samples=_linalg_norm_complex),
]


OPS = PRODUCT_OPS + [TENSORDOT, EINSUM] + SOLVE_OPS + FACTOR_OPS + NORM_OPS
