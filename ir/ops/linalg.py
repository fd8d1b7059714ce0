"""Linear algebra: torch.linalg's solves and factorizations (inv, solve, det, slogdet,
cholesky, qr, eigh, svd, svdvals).
Matrix products live in products.py, vector/matrix norms in norms.py.  The torch.linalg ops are
primitives with a numpy.linalg kernel (a jax.numpy.linalg one where it differs) and a VJP
written in IR ops, itself differentiable; each rule names its source.  The ops behind
`tg.linalg.*` are named ``linalg_<name>`` and flagged INTERNAL so they stay out of
`tg.*` / Tensor methods; tracegrad/linalg.py is their user API.  Where gradients are
undefined (repeated eigenvalues or singular values, rank-deficient QR): docs/ops_linalg.md.
"""
from __future__ import annotations

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError, LinAlgError, ShapeError
from ..registry import AUTOCAST_FP32, COMPLEX, INTERNAL, REQUIRED, defcomposite, defop
from ._cost import FACTORIZATION
from ._common import mul_conj
# eigh/svd skip the terms of a cotangent the autodiff pass filled with zeros (an unused
# output): they would be 0 * inf at repeated eigenvalues / singular values, where torch
# leaves the term out (undefined gradient).
from .creation import is_zero
from ._matrix import (_ty, _fail, _need_tensors, _same_dtype, _mm, _eye_mask, _eye, _tril,
                      _diag_embed, _narrow, _as_matrix_batch, _mT, _mH, _require_matrix)


# ---- torch.linalg: type inference and kernels ----------------------------------------------

def _square_infer(name, out=lambda t: t):
    def infer(types, **_):
        _require_matrix(name, types[0], square=True)
        return out(types[0])
    return infer


def _batch_element(a: np.ndarray, probe) -> str:
    if a.ndim <= 2:
        return ""
    for i, m in enumerate(a.reshape((-1,) + a.shape[-2:])):
        try:
            probe(m)
        except np.linalg.LinAlgError:
            return f"(Batch element {i}): "
    return ""


def _array_type(a: np.ndarray) -> T.TensorType:
    return T.TensorType(a.shape, T.from_numpy(a.dtype))


def _inv_np(xp, a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.inv: {_batch_element(a, np.linalg.inv)}the inversion could not "
                          f"be completed because the input matrix is singular "
                          f"({_array_type(a)})") from None


def _broadcast_batch(xp, a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))


def _solve_np(xp, a, b):
    a, b = _broadcast_batch(np, a, b)
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.solve: {_batch_element(a, np.linalg.inv)}The solver failed "
                          f"because the input matrix is singular ({_array_type(a)})") from None


def _cholesky_np(xp, a, *, upper):
    try:
        return np.linalg.cholesky(a, upper=upper)
    except np.linalg.LinAlgError:
        where = _batch_element(a, lambda m: np.linalg.cholesky(m, upper=upper))
        raise LinAlgError(f"linalg.cholesky: {where}The factorization could not be completed "
                          f"because the input is not positive-definite ({_array_type(a)})"
                          ) from None


def _cholesky_jax(xp, a, *, upper):
    # jax reads the lower triangle only; torch/numpy with upper=True read the upper one
    if not upper:
        return xp.linalg.cholesky(a, symmetrize_input=False)
    return xp.swapaxes(xp.linalg.cholesky(xp.swapaxes(a, -1, -2), symmetrize_input=False), -1, -2)


def _svd_np(xp, a, **kw):
    try:
        return np.linalg.svd(a, **kw)
    except np.linalg.LinAlgError:
        raise LinAlgError(f"linalg.svd: the algorithm failed to converge ({_array_type(a)}; "
                          "does it hold NaN or Inf?)") from None


# ---- torch.linalg: VJP rules -------------------------------------------------------------------
# One rule per op for real and complex A: ^H is the conjugate transpose (`_mH`, the transpose
# for a real dtype, so real programs are unchanged), and a complex rule adds the terms torch's
# has for the phases of complex factors (torch's conjugate Wirtinger convention: the gradient
# of a real loss is dL/dRe A + i dL/dIm A; docs/autograd.md, "Complex numbers").
def _inv_vjp(b, ct, a, out):
    # d(A^-1) = -A^-1 dA A^-1, so gA = -A^-H ct A^-H (torch derivatives.yaml, linalg_inv_ex)
    t = _mH(b, out)
    return [b.neg(_mm(b, _mm(b, t, ct), t))]


def _solve_vjp(b, ct, a, rhs, x):
    # X = A^-1 B: gB = A^-H ct (a solve with the conjugate-transposed matrix), gA = -gB X^H
    # (torch linalg_solve_backward); the autodiff pass sums broadcast batch dims.
    g_rhs = b.batched_solve(_mH(b, a), ct)
    return [b.neg(_mm(b, g_rhs, _mH(b, x))), g_rhs]


def _det_vjp(b, ct, a, det):
    # Jacobi's formula: d det(A) = det(A) tr(A^-1 dA), so gA = ct conj(det(A)) A^-H.  At an
    # exactly singular A (det == 0) the inverse is taken of the identity instead, giving gA = 0
    # as torch does (the true gradient there is the cofactor matrix; see docs/ops_linalg.md).
    singular = _as_matrix_batch(b, b.eq(det, 0.0))
    safe = b.where(singular, _eye(b, a.shape[-1], a.dtype), a)
    return [b.mul(_as_matrix_batch(b, mul_conj(b, ct, det)), _mH(b, b.linalg_inv(safe)))]


def _slogdet_vjp(b, ct, a, sign, logabsdet):
    # d log|det A| = Re tr(A^-1 dA), so gA = g A^-H for the logabsdet cotangent g.  A real sign
    # is piecewise constant; a complex one, e^{i theta}, turns: d sign = i sign Im tr(A^-1 dA),
    # which puts -i Im(conj(g_sign) sign) into g (torch slogdet_backward).
    g_sign, g = ct
    if a.dtype.is_complex:
        if is_zero(g_sign):
            g = b.convert(g, a.dtype)
        else:
            g = b.complex(g, b.neg(b.imag(b.mul(b.conj(g_sign), sign))))
    return [b.mul(_as_matrix_batch(b, g), _mH(b, b.linalg_inv(a)))]


def _cholesky_vjp(b, ct, a, out, *, upper):
    # torch cholesky_backward (I. Murray 2016, "Differentiation of the Cholesky decomposition",
    # arXiv:1602.07527): P = tril(L^H gL), gA = L^-H (P + tril(P, -1)^H) L^-1 / 2.  Symmetric
    # for real A.  For complex A, as torch's, Hermitian but for i L^-H Im(diag P) L^-1 / 2: a
    # skew-Hermitian term that no Hermitian change of A sees (L's diagonal is real).
    l, gl = (_mH(b, out), _mH(b, ct)) if upper else (out, ct)
    p = _tril(b, _mm(b, _mH(b, l), gl))
    phi = b.mul(b.add(p, _mH(b, _tril(b, p, -1))), 0.5)
    linv = b.linalg_inv(l)
    return [_mm(b, _mm(b, _mH(b, linv), phi), linv)]


def _copyltu(b, m):
    """tril(M) + tril(M, -1)^H; for complex M with Re diag(M) on the diagonal: R's diagonal is
    real (LAPACK's QR, as torch's and jax's), which fixes the phases of Q's columns, so the
    imaginary part of diag(M) moves nothing."""
    if m.dtype.is_complex:
        m = b.where(_eye_mask(b, m.shape[-1]), b.real(m), m)
    return b.add(_tril(b, m), _mH(b, _tril(b, m, -1)))


def _qr_backward_tall(b, gq, gr, q, r):
    # m >= n (H.-J. Liao, J.-G. Liu, L. Wang, T. Xiang 2019, "Differentiable Programming Tensor
    # Networks", arXiv:1903.09650, eq. 10): M = R gR^H - gQ^H Q, gA = (gQ + Q copyltu(M)) R^-H.
    m = b.sub(_mm(b, r, _mH(b, gr)), _mm(b, _mH(b, gq), q))
    lhs = b.add(gq, _mm(b, q, _copyltu(b, m)))
    return _mH(b, b.batched_solve(r, _mH(b, lhs)))    # lhs R^-H = (R^-1 lhs^H)^H


def _qr_vjp(b, ct, a, q, r, *, mode):
    m, n = a.shape[-2:]
    if mode == "r":
        raise RuntimeError("linalg.qr: The derivative of linalg.qr depends on Q, which is not "
                           "computed when mode='r'. Please use linalg.qr(A, mode='reduced') if "
                           "you are going to differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("linalg.qr: The QR decomposition is not differentiable when "
                           "mode='complete' and nrows > ncols.")
    gq, gr = ct
    if m >= n:
        return [_qr_backward_tall(b, gq, gr, q, r)]
    # m < n (same paper): A = [X | Y], R = [U | V] with X = QU, Y = QV: X's cotangents are
    # (gQ + Y gV^H, gU) through the square QR, and gY = Q gV.
    y, gu, gv = _narrow(b, a, -1, m, n), _narrow(b, gr, -1, 0, m), _narrow(b, gr, -1, m, n)
    gx = _qr_backward_tall(b, b.add(gq, _mm(b, y, _mH(b, gv))), gu, q, _narrow(b, r, -1, 0, m))
    return [b.cat([gx, _mm(b, q, gv)], -1)]


def _gaps(b, w, square=False):
    """E_ij = w_j - w_i (w_j^2 - w_i^2 if square) off the diagonal, 1 on it (torch's E)."""
    wj, wi = b.unsqueeze(w, -2), b.unsqueeze(w, -1)
    e = b.sub(b.mul(wj, wj), b.mul(wi, wi)) if square else b.sub(wj, wi)
    return b.where(_eye_mask(b, w.shape[-1]), 1.0, e)


def _skew_over(b, x, e):
    """(X - X^H) / E.  For complex X without its diagonal, 2i Im diag(X): that part is how the
    loss changes with the phases of the eigen- / singular vectors (`gauge_check`, `_svd_phase`)."""
    d = b.div(b.sub(x, _mH(b, x)), e)
    if x.dtype.is_complex:
        d = b.where(_eye_mask(b, x.shape[-1]), 0.0, d)
    return d


def _im_diag(b, x):
    return b.imag(b.diagonal(x, 0, -2, -1))


def _eigh_vjp(b, ct, a, w, v, *, UPLO):
    # gA = V (diag(gw) + skew(V^H gV) / E) V^H with skew(X) = (X - X^H) / 2 (M. Giles 2008,
    # "An extended collection of matrix derivative results", sec. 3.1; torch
    # linalg_eig_backward for Hermitian input).  Symmetric (Hermitian), like torch's; inf/nan
    # at repeated eigenvalues unless the eigenvectors' cotangent is zero.  Complex
    # eigenvectors are defined up to a phase each, v_k e^{i phi_k}: a loss that depends on the
    # phases (Im diag(V^H gV) != 0) has no gradient, and the backward raises, as torch's.
    gw, gv = ct
    inner = _diag_embed(b, gw)
    if not is_zero(gv):
        vhg = _mm(b, _mH(b, v), gv)
        inner = b.add(inner, b.mul(_skew_over(b, vhg, _gaps(b, w)), 0.5))
        if v.dtype.is_complex:
            im = _im_diag(b, vhg)
            inner = b.gauge_check(inner, im, b.full(im.shape, 0, im.dtype), "linalg.eigh")
    if inner.dtype is not v.dtype:   # complex V, only the (real) eigenvalues used
        inner = b.convert(inner, v.dtype)
    return [_mm(b, _mm(b, v, inner), _mH(b, v))]


def _svd_vjp(b, ct, a, u, s, vh, *, full_matrices):
    # torch svd_backward (J. Townsend 2016, "Differentiating the Singular Value Decomposition";
    # C. Ionescu et al. 2015): with V = Vh^H, E_jk = s_k^2 - s_j^2, skew(X) = X - X^H,
    #   gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)] V^H
    #        + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H).
    # With full_matrices the extra columns of U / rows of Vh are an arbitrary basis: their
    # cotangents are ignored, as in torch.  Complex: see `_svd_phase`.
    gu, gs, gvh = ct
    m, n = a.shape[-2:]
    k = min(m, n)
    use_u, use_v = not is_zero(gu), not is_zero(gvh)
    if u.shape[-1] != k:
        u, gu = _narrow(b, u, -1, 0, k), _narrow(b, gu, -1, 0, k)
    if vh.shape[-2] != k:
        vh, gvh = _narrow(b, vh, -2, 0, k), _narrow(b, gvh, -2, 0, k)
    if not (use_u or use_v):
        return [_mm(b, b.mul(u, b.unsqueeze(gs, -2)), vh)]
    inner = _diag_embed(b, gs)
    e = _gaps(b, s, square=True)
    s_row, s_col = b.unsqueeze(s, -2), b.unsqueeze(s, -1)
    utg = vtg = None
    if use_u:
        utg = _mm(b, _mH(b, u), gu)
        inner = b.add(inner, b.mul(_skew_over(b, utg, e), s_row))
    if use_v:
        vtg = _mm(b, vh, _mH(b, gvh))
        inner = b.add(inner, b.mul(s_col, _skew_over(b, vtg, e)))
    if a.dtype.is_complex:
        inner = _svd_phase(b, inner, s, utg, vtg)
    ga = _mm(b, _mm(b, u, inner), vh)
    if use_u and m > k:
        gus = b.div(gu, s_row)
        ga = b.add(ga, _mm(b, b.sub(gus, _mm(b, u, _mm(b, _mH(b, u), gus))), vh))
    if use_v and n > k:
        gvs = b.div(gvh, s_col)
        ga = b.add(ga, _mm(b, u, b.sub(gvs, _mm(b, _mm(b, gvs, _mH(b, vh)), vh))))
    return [ga]


def _svd_phase(b, inner, s, utg, vtg):
    """The phase term of complex SVD's gradient.  (u_k, v_k) -> (u_k, v_k) e^{i phi_k} leaves A
    unchanged, so a loss with a gradient has Im diag(U^H gU) = -Im diag(V^H gV) (torch checks
    this and raises otherwise, as `gauge_check` does), and the imaginary part of diag(U^H dA V)
    reaches the loss through the phases: diag(inner) gains i (Im diag(U^H gU) - Im diag(V^H gV))
    / 2S, which is torch's i Im diag(U^H gU) / S when the check holds."""
    zeros = b.full(s.shape, 0, s.dtype)
    im_u = zeros if utg is None else _im_diag(b, utg)
    im_v = zeros if vtg is None else _im_diag(b, vtg)
    phase = b.div(b.sub(im_u, im_v), b.mul(s, 2.0))
    inner = b.add(inner, _diag_embed(b, b.complex(zeros, phase)))
    return b.gauge_check(inner, im_u, b.neg(im_v), "linalg.svd")


def _svdvals_vjp(b, ct, a, s):
    # gA = U diag(gS) V^H, from an SVD recomputed here; defined at repeated singular values.
    u, _, vh = b.linalg_svd(a, False)
    return [_mm(b, b.mul(u, b.unsqueeze(ct, -2)), vh)]


# ---- torch.linalg: the primitives --------------------------------------------------------------
def _solve_infer(types, **_):
    a, rhs = types
    _require_matrix("linalg.solve", a, square=True)
    if rhs.ndim < 2 or rhs.shape[-2] != a.shape[-1]:
        raise ShapeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B, "
                         f"got {a} and {rhs}")
    batch = T.broadcast_shapes(a.shape[:-2], rhs.shape[:-2])
    if batch is None:
        raise ShapeError(f"linalg.solve: batch dimensions of A and B do not broadcast, got {a} "
                         f"and {rhs}")
    if a.dtype is not rhs.dtype:
        raise DTypeError(f"linalg.solve: Expected A and B to have the same dtype, got {a} and "
                         f"{rhs}")
    return T.TensorType(batch + rhs.shape[-2:], a.dtype)


def _qr_infer(types, *, mode):
    a = types[0]
    _require_matrix("linalg.qr", a)
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    if mode == "r":
        return T.TensorType((0,), a.dtype), T.TensorType(batch + (k, n), a.dtype)
    kq = m if mode == "complete" else k
    return T.TensorType(batch + (m, kq), a.dtype), T.TensorType(batch + (kq, n), a.dtype)


def _canon_qr(types, *, mode):
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: received unrecognized mode '{mode}' but expected one of "
                         "'reduced' (default), 'r', or 'complete'")
    return {"mode": mode}


def _qr_kernel(xp, a, *, mode):
    if mode == "r":
        return xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r")
    q, r = xp.linalg.qr(a, mode=mode)
    return q, r


def _canon_uplo(types, *, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return {"UPLO": UPLO}


def _eigh_infer(types, *, UPLO):
    a = types[0]
    _require_matrix("linalg.eigh", a, square=True)
    return T.TensorType(a.shape[:-1], a.dtype.to_real()), a   # real eigenvalues


def _svd_infer(types, *, full_matrices):
    a = types[0]
    _require_matrix("linalg.svd", a)
    *batch, m, n = a.shape
    batch, k = tuple(batch), min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    return (T.TensorType(batch + (m, ku), a.dtype), T.TensorType(batch + (k,), a.dtype.to_real()),
            T.TensorType(batch + (kv, n), a.dtype))


def _svdvals_infer(types, **_):
    a = types[0]
    _require_matrix("linalg.svdvals", a)
    return T.TensorType(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype.to_real())


def _tuple(out):
    return tuple(out)   # jax returns named tuples; the executors expect plain ones


# float32/float64 and complex64/complex128 (as torch; results of a real kind are real: the
# eigenvalues, singular values and slogdet's logabsdet)
LINALG = INTERNAL | COMPLEX

defop("linalg_inv", "A", infer=_square_infer("linalg.inv"), flags=LINALG,
      kernel=_inv_np, kernels={"jax": lambda xp, a: xp.linalg.inv(a)}, vjp=_inv_vjp,
      ref="torch.linalg.inv",
      autocast={"cpu": AUTOCAST_FP32}, cost=FACTORIZATION)

# A X = B for B of shape (*, n, k), batch dims broadcasting; linalg_solve adds torch's
# vector right-hand sides and left=False on top.
defop("batched_solve", "A, B", infer=_solve_infer, flags=LINALG, kernel=_solve_np,
      kernels={"jax": lambda xp, a, b: xp.linalg.solve(*_broadcast_batch(xp, a, b))},
      vjp=_solve_vjp, ref="torch.linalg.solve (B a batch of matrices)",
      autocast={"cpu": AUTOCAST_FP32}, cost=FACTORIZATION)


def _batch_type(t):
    return T.TensorType(t.shape[:-2], t.dtype)


defop("linalg_det", "A", infer=_square_infer("linalg.det", _batch_type),
      kernel=lambda xp, a: xp.asarray(xp.linalg.det(a)), vjp=_det_vjp, flags=LINALG,
      ref="torch.linalg.det",
      cost=FACTORIZATION)


def _slogdet_types(t):
    """(sign, logabsdet): the sign in A's dtype (e^{i theta} for complex), logabsdet real."""
    sign = _batch_type(t)
    return sign, T.TensorType(sign.shape, t.dtype.to_real())


defop("linalg_slogdet", "A", infer=_square_infer("linalg.slogdet", _slogdet_types),
      kernel=lambda xp, a: _tuple(xp.asarray(v) for v in xp.linalg.slogdet(a)),
      vjp=_slogdet_vjp, flags=LINALG, ref="torch.linalg.slogdet",
      cost=FACTORIZATION)

defop("linalg_cholesky", "A", attrs=(("upper", False, K.BOOL),), infer=_square_infer("linalg.cholesky"),
      canon=lambda types, *, upper: {"upper": bool(upper)},
      kernel=_cholesky_np, kernels={"jax": _cholesky_jax}, vjp=_cholesky_vjp, flags=LINALG,
      ref="torch.linalg.cholesky",
      autocast={"cpu": AUTOCAST_FP32}, cost=FACTORIZATION)

defop("linalg_qr", "A", attrs=(("mode", "reduced", K.enum("reduced", "complete", "r")),), canon=_canon_qr, infer=_qr_infer,
      kernel=_qr_kernel, vjp=_qr_vjp, flags=LINALG, ref="torch.linalg.qr",
      cost=FACTORIZATION)

defop("linalg_eigh", "A", attrs=(("UPLO", "L", K.enum("L", "U")),), canon=_canon_uplo, infer=_eigh_infer,
      kernel=lambda xp, a, *, UPLO: _tuple(np.linalg.eigh(a, UPLO=UPLO)),
      kernels={"jax": lambda xp, a, *, UPLO: _tuple(
          xp.linalg.eigh(a, UPLO=UPLO, symmetrize_input=False))},
      vjp=_eigh_vjp, flags=LINALG, ref="torch.linalg.eigh (eigenvalues ascending)",
      cost=FACTORIZATION)

defop("linalg_svd", "A", attrs=(("full_matrices", True, K.BOOL),), infer=_svd_infer,
      canon=lambda types, *, full_matrices: {"full_matrices": bool(full_matrices)},
      kernel=lambda xp, a, *, full_matrices: _tuple(_svd_np(xp, a, full_matrices=full_matrices)),
      kernels={"jax": lambda xp, a, *, full_matrices: _tuple(
          xp.linalg.svd(a, full_matrices=full_matrices))},
      vjp=_svd_vjp, flags=LINALG, ref="torch.linalg.svd",
      cost=FACTORIZATION)

defop("linalg_svdvals", "A", infer=_svdvals_infer, flags=LINALG,
      kernel=lambda xp, a: _svd_np(xp, a, compute_uv=False),
      kernels={"jax": lambda xp, a: xp.linalg.svd(a, compute_uv=False)},
      vjp=_svdvals_vjp, ref="torch.linalg.svdvals",
      cost=FACTORIZATION)


# ---- the phase check of complex eigh / svd backwards -------------------------------------------
PHASE_TOL = 1e-2   # torch's: allclose(got, want, rtol=1e-2, atol=1e-2)

_PHASE_HINT = {
    "linalg.eigh": ("eigenvectors are defined only up to a phase each, v_k -> v_k e^(i phi_k)",
                    "|V|^2 or V diag(w) V^H"),
    "linalg.svd": ("singular vector pairs are defined only up to a phase each, (u_k, v_k) -> "
                   "(u_k, v_k) e^(i phi_k)", "|U|^2, |Vh|^2 or U[:, k] * Vh[k, :]"),
}


def _check_phases(what: str, got, want) -> None:
    """Raise unless `got` is close to `want` (the rates at which the loss changes with the
    phases of complex eigen- / singular vectors; torch's tolerance)."""
    got, want = np.asarray(got), np.asarray(want)
    off = np.abs(got - want) - PHASE_TOL * np.abs(want)
    if off.size and not np.all(off <= PHASE_TOL):   # NaN fails too
        gauge, invariant = _PHASE_HINT[what]
        raise RuntimeError(
            f"{what} backward: complex {gauge}, and this loss depends on those phases (by up "
            f"to {float(np.max(np.abs(got - want))):.3g}, tolerance {PHASE_TOL}), so its "
            f"gradient is ill-defined (torch raises too). Use functions of the factors that the "
            f"phases do not change, such as {invariant}.")


def _gauge_check_np(xp, x, got, want, *, what):
    _check_phases(what, got, want)
    return x


def _gauge_check_infer(types, *, what):
    x, got, want = types
    if got != want or got.dtype.is_complex:
        raise DTypeError(f"gauge_check: got and want must be real and of one type, got {got} "
                         f"and {want}")
    return x


# gauge_check(x, got, want) is x, after checking got ~ want (an identity for gradients): the
# backward of complex eigh / svd passes its result through it, so pruning keeps the check
defop("gauge_check", "input, got, want", attrs=(("what", REQUIRED, K.STRING),), infer=_gauge_check_infer,
      kernel=_gauge_check_np, flags=INTERNAL | COMPLEX,   # jax: backends/jax_host_checks.py
      vjp=lambda b, ct, x, got, want, out, *, what: [ct, None, None],
      jvp=lambda b, t, x, got, want, out, *, what: t[0],
      ref="torch's phase check in linalg_eig_backward / svd_backward (complex)")


# ---- linalg.solve: vector right-hand sides and left=False ------------------------------------
def _solve(ops, A, B, left=True):
    _need_tensors(ops, "linalg.solve", A=A, B=B)
    ta, tb = _ty(A), _ty(B)
    try:
        _require_matrix("linalg.solve", ta, square=True)
    except (ShapeError, DTypeError) as e:
        raise _fail(ops, e) from None
    _same_dtype(ops, "linalg.solve", A, B, "Expected A and B to have the same dtype")
    n = ta.shape[-1]
    vector = tb.ndim == 1 or (tb.ndim == ta.ndim - 1 and tb.shape == ta.shape[:-1])
    eq = "AX = B" if left else "XA = B"
    rhs = ops.unsqueeze(B, -1) if vector else B
    rows = rhs.shape[-2] if left else rhs.shape[-1]
    if len(rhs.shape) < 2 or rows != n or (vector and not left):
        k = "x".join(map(str, tuple(rhs.shape[-2:])))
        raise _fail(ops, ShapeError(f"linalg.solve: Incompatible shapes of A and B for the "
                                    f"equation {eq} ({n}x{n} and {k}), got {ta} and {tb}"))
    if T.broadcast_shapes(ta.shape[:-2], tuple(rhs.shape[:-2])) is None:
        raise _fail(ops, ShapeError(f"linalg.solve: batch dimensions of A and B do not "
                                    f"broadcast, got {ta} and {tb}"))
    if not left:   # X A = B  <=>  A^T X^T = B^T
        return _mT(ops, ops.batched_solve(_mT(ops, A), _mT(ops, rhs)))
    x = ops.batched_solve(A, rhs)
    return ops.squeeze(x, -1) if vector else x


defcomposite("linalg_solve", "A: Tensor, B: Tensor, left=True", _solve, flags=LINALG,
             ref="torch.linalg.solve", node_name="LinalgSolveExBackward0",
             autocast={"cpu": AUTOCAST_FP32}, cost=FACTORIZATION, node_inputs=("A", "B"))
