"""`tg.linalg`: torch.linalg's functions, with torch's names, signatures and errors.

Each function runs one op of the registry (ir/ops/linalg.py), so it works eagerly, under
`tg.compile`, and inside VJP rules alike; its gradient is that op's VJP (the literature
each rule follows is cited there).  float32/float64 and complex64/complex128 (vector
norms also take float16/bfloat16); complex gradients follow torch's conjugate Wirtinger
convention, with torch 2.13's values.  Where a gradient is undefined, as in torch:

- `eigh`: repeated eigenvalues, when the eigenvectors are used (the gradient has
  1 / (lambda_i - lambda_j)); `svd`: repeated singular values when U or Vh are used, and
  zero singular values of a non-square matrix; `qr`: rank-deficient inputs (R singular).
- Eigenvectors and singular vectors are defined up to sign (a "gauge"); a loss must not
  depend on that sign, or its gradient is meaningless.  Complex ones are defined up to a
  phase each, e^(i phi): a loss that depends on it makes the backward raise RuntimeError,
  as torch's does.

docs/ops_linalg.md lists these cases with the values returned.
"""
from __future__ import annotations

from typing import NamedTuple

from tracegrad.ir import types as T
from tracegrad.ir.errors import DTypeError, LinAlgError

from .dispatch.frontend import EAGER
from .tensor import Tensor

__all__ = ["LinAlgError", "cholesky", "det", "eigh", "inv", "matrix_norm", "norm", "qr",
           "slogdet", "solve", "svd", "svdvals", "vector_norm"]


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


def _call(name, *args, **kwargs):
    return EAGER.call(name, *args, **kwargs)


def _cast(name: str, x, dtype):
    """torch's `dtype=` of the norms: the input is converted first, never narrowed."""
    if dtype is None or not isinstance(x, Tensor):
        return x
    dtype = T.as_dtype(dtype)
    if not x.dtype.is_differentiable:
        return x
    if x.dtype.is_complex != dtype.is_complex:   # a complex input takes a complex dtype (torch)
        kind = "complex" if x.dtype.is_complex else "real"
        raise DTypeError(f"{name}: dtype should be {kind} for {kind} inputs, but got "
                         f"{dtype.name} (input {x.dtype.name})")
    if dtype.is_differentiable and dtype.itemsize < x.dtype.itemsize:
        raise DTypeError(f"{name}: the dtype of the input ({x.dtype.name}) should be convertible "
                         f"without narrowing to the specified dtype ({dtype.name})")
    return x.to(dtype)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """The `ord`-norm of `x` over `dim` (all dims if None), as a vector.

    Args:
        x: float or complex tensor of any shape.
        ord: a number: 2 (default), 1, inf, -inf, 0 (count of nonzeros), or any other p.
        dim: int, sequence of ints or None; keepdim: keep reduced dims with size 1.
        dtype: convert `x` to this dtype first (no narrowing; complex for a complex `x`).
    Returns:
        `x`'s shape without `dim`, in `x`'s dtype (its real dtype for a complex `x`:
        complex64 -> float32).
    Raises:
        TypeError: integer input, a non-number `ord`, or a real `dtype` for a complex `x`
        (and the reverse); ValueError: inf or negative `ord` over an empty dim.
    Gradient: 0 where the norm is 0 (every `ord`); for `ord=±inf` split evenly among the
    entries of largest/smallest magnitude; 0 for `ord=0`; complex: sgn(x) = x / |x| where
    real inputs have sign(x). Follows `torch.linalg.vector_norm`.
    """
    return _call("linalg_vector_norm", _cast("linalg.vector_norm", x, dtype), ord, dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor:
    """Matrix norm over the two dims `dim` of `A`.

    Args:
        A: float32/float64 or complex tensor `(*, m, n)` (or the two dims named by `dim`);
            the norm of a complex `A` is real (complex64 -> float32).
        ord: 'fro' (default), 'nuc', 2, -2 (largest/smallest singular value), 1, -1
            (largest/smallest column sum of |A|), inf, -inf (row sums).
    Returns:
        `A`'s shape without `dim` (size 1 with `keepdim`).
    Raises:
        ValueError: an unsupported `ord`, equal or too many dims; TypeError: integer input.
    Gradient: ties (equal singular values for ord=2, equal sums for 1/inf) share it evenly;
    'nuc' and ±2 use U diag(g) Vh, defined also at repeated singular values.
    Follows `torch.linalg.matrix_norm`.
    """
    return _call("linalg_matrix_norm", _cast("linalg.matrix_norm", A, dtype), ord, dim, keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """A vector norm (int `dim`, 1-D input, or `ord=None`) or a matrix norm (2-tuple `dim`,
    2-D input with `ord` given, or a string `ord`), as `torch.linalg.norm` chooses.

    With `dim=None` and `ord=None` the input is flattened and its 2-norm returned.
    Raises ValueError when `ord` is given without `dim` for a tensor that is not 1-D or 2-D.
    """
    return _call("linalg_norm", _cast("linalg.norm", A, dtype), ord, dim, keepdim)


def inv(A) -> Tensor:
    """The inverse of square matrices `A` `(*, n, n)`.

    Raises:
        LinAlgError: a singular matrix (naming the batch element); ValueError: not square;
        TypeError: integer or float16 input.
    Gradient: -A^-H g A^-H (^H: conjugate transpose; ^T for real A). Follows
    `torch.linalg.inv`.
    """
    return _call("linalg_inv", A)


def solve(A, B, *, left=True) -> Tensor:
    """X with A X = B (`left=False`: X A = B).

    Args:
        A: `(*, n, n)`; B: `(*, n, k)` or a batch of vectors `(*, n)` (B 1-D, or B's shape is
            A's without the last dim); batch dims broadcast.
    Raises:
        LinAlgError: A singular; ValueError: incompatible shapes; TypeError: dtypes differ.
    Gradient: gB = solve(A^H, g), gA = -gB X^H. Follows `torch.linalg.solve`.
    """
    return _call("linalg_solve", A, B, left)


def det(A) -> Tensor:
    """Determinants of square matrices `A` `(*, n, n)` -> `(*)`, in A's dtype.

    Gradient: g conj(det(A)) A^-H (Jacobi's formula); 0 at an exactly singular matrix, as
    torch gives. Follows `torch.linalg.det`.
    """
    return _call("linalg_det", A)


def slogdet(A) -> SlogdetResult:
    """(sign, log|det A|) of square matrices `A` `(*, n, n)`, each `(*)`: sign in A's dtype
    (det / |det| for complex A), logabsdet real (float32 for complex64).

    A singular matrix gives sign 0 and logabsdet -inf. Gradient: of logabsdet, g A^-H (its
    backward raises LinAlgError at a singular matrix, where torch gives inf); a real sign has
    none, a complex one adds -i Im(conj(g_sign) sign) to g. Follows `torch.linalg.slogdet`.
    """
    return SlogdetResult(*_call("linalg_slogdet", A))


def cholesky(A, *, upper=False) -> Tensor:
    """The Cholesky factor L (A = L L^H; `upper=True`: U with A = U^H U) of symmetric
    (Hermitian) positive-definite matrices `A` `(*, n, n)`; only the lower (upper) triangle
    is read.

    Raises:
        LinAlgError: a matrix that is not positive-definite (naming the batch element).
    Gradient: symmetric (I. Murray 2016); for complex A torch's, Hermitian plus a
    skew-Hermitian term that Hermitian changes of A do not see (docs/ops_linalg.md).
    Follows `torch.linalg.cholesky`.
    """
    return _call("linalg_cholesky", A, upper)


def qr(A, mode="reduced") -> QRResult:
    """QR decomposition of `A` `(*, m, n)`, k = min(m, n).

    Args:
        mode: 'reduced' (Q `(*, m, k)`, R `(*, k, n)`), 'complete' (Q `(*, m, m)`, R
            `(*, m, n)`) or 'r' (Q empty, R only).
    Gradient: for 'reduced', and 'complete' when m <= n (torch raises otherwise, and for
    'r'); undefined when A does not have full rank (R singular). Follows `torch.linalg.qr`.
    """
    return QRResult(*_call("linalg_qr", A, mode))


def eigh(A, UPLO="L") -> EighResult:
    """Eigenvalues (ascending; real, float32 for complex64) and eigenvectors (columns, in A's
    dtype) of symmetric (Hermitian) matrices `A` `(*, n, n)`, reading the lower
    (`UPLO='L'`) or upper ('U') triangle.

    Gradient: V (diag(g_w) + skew(V^H g_V) / E) V^H with E_ij = w_j - w_i (Hermitian, as
    torch's). Undefined (inf/nan) at repeated eigenvalues when the eigenvectors are used;
    eigenvectors are defined up to sign (complex: a phase each), so a loss must not depend
    on it. Raises RuntimeError at backward when a loss of complex eigenvectors depends on
    their phases (as torch). Follows `torch.linalg.eigh`.
    """
    return EighResult(*_call("linalg_eigh", A, UPLO))


def svd(A, full_matrices=True) -> SVDResult:
    """Singular value decomposition A = U diag(S) Vh of `A` `(*, m, n)`, S descending.

    Args:
        full_matrices: U `(*, m, m)` and Vh `(*, n, n)` (default, as torch) or, if False,
            U `(*, m, k)` and Vh `(*, k, n)`, k = min(m, n).
    S is real (float32 for complex64); U and Vh are in A's dtype.
    Gradient (J. Townsend 2016): undefined at repeated singular values when U or Vh are
    used, and at zero singular values of a non-square A; singular vectors are defined up to
    a joint sign (u_i, v_i) -> (-u_i, -v_i) (complex: a joint phase e^(i phi)), so a loss
    must not depend on it: for complex A the backward raises RuntimeError when it does (as
    torch). With full_matrices, the gradient of the extra columns of U / rows of Vh is
    ignored (as torch). Follows `torch.linalg.svd`.
    """
    return SVDResult(*_call("linalg_svd", A, full_matrices))


def svdvals(A) -> Tensor:
    """Singular values `(*, k)` of `A` `(*, m, n)`, descending; real (float32 for complex64).

    Gradient: U diag(g) Vh, defined also at repeated singular values.
    Follows `torch.linalg.svdvals`.
    """
    return _call("linalg_svdvals", A)


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation, `torch.einsum(equation, *operands)` (or a list of operands).

    Supports '...', implicit output (letters used once, in ASCII order), repeated
    subscripts in one operand (diagonals) and size-1 broadcasting; contracts left to right
    with batched matmuls, so gradients are those of matmul. Exported as `tg.einsum`.
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _call("einsum", list(operands), equation)
