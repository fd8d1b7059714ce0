"""`tg.linalg`: torch.linalg's functions, with torch's names, signatures and errors.

Each function runs one op of the registry (ir/ops/linalg.py), so it works eagerly, under
`tg.compile`, and inside VJP rules alike; its gradient is that op's VJP (the literature
each rule follows is cited there).  Real inputs only (float32/float64; vector norms also
take float16/bfloat16).  Where a gradient is undefined, as in torch:

- `eigh`: repeated eigenvalues, when the eigenvectors are used (the gradient has
  1 / (lambda_i - lambda_j)); `svd`: repeated singular values when U or Vh are used, and
  zero singular values of a non-square matrix; `qr`: rank-deficient inputs (R singular).
- Eigenvectors and singular vectors are defined up to sign (a "gauge"); a loss must not
  depend on that sign, or its gradient is meaningless.

docs/ops_linalg.md lists these cases with the values returned.
"""
from __future__ import annotations

from typing import NamedTuple

from tracegrad.ir import types as T
from tracegrad.ir.errors import DTypeError, LinAlgError

from ._dispatch import EAGER
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
    if x.dtype.is_floating_point and dtype.is_floating_point and dtype.itemsize < x.dtype.itemsize:
        raise DTypeError(f"{name}: the dtype of the input ({x.dtype.name}) should be convertible "
                         f"without narrowing to the specified dtype ({dtype.name})")
    return x.to(dtype) if x.dtype.is_floating_point else x


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None) -> Tensor:
    """The `ord`-norm of `x` over `dim` (all dims if None), as a vector.

    Args:
        x: float tensor of any shape.
        ord: a number: 2 (default), 1, inf, -inf, 0 (count of nonzeros), or any other p.
        dim: int, sequence of ints or None; keepdim: keep reduced dims with size 1.
        dtype: convert `x` to this dtype first (no narrowing).
    Returns:
        `x`'s shape without `dim`, in `x`'s dtype.
    Raises:
        TypeError: integer input or a non-number `ord`; ValueError: inf or negative `ord`
        over an empty dim.
    Gradient: 0 where the norm is 0 (every `ord`); for `ord=±inf` split evenly among the
    entries of largest/smallest magnitude; 0 for `ord=0`. Follows `torch.linalg.vector_norm`.
    """
    return _call("linalg_vector_norm", _cast("linalg.vector_norm", x, dtype), ord, dim, keepdim)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None) -> Tensor:
    """Matrix norm over the two dims `dim` of `A`.

    Args:
        A: float tensor `(*, m, n)` (or the two dims named by `dim`).
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
    Gradient: -A^-T g A^-T. Follows `torch.linalg.inv`.
    """
    return _call("linalg_inv", A)


def solve(A, B, *, left=True) -> Tensor:
    """X with A X = B (`left=False`: X A = B).

    Args:
        A: `(*, n, n)`; B: `(*, n, k)` or a batch of vectors `(*, n)` (B 1-D, or B's shape is
            A's without the last dim); batch dims broadcast.
    Raises:
        LinAlgError: A singular; ValueError: incompatible shapes; TypeError: dtypes differ.
    Gradient: gB = solve(A^T, g), gA = -gB X^T. Follows `torch.linalg.solve`.
    """
    return _call("linalg_solve", A, B, left)


def det(A) -> Tensor:
    """Determinants of square matrices `A` `(*, n, n)` -> `(*)`.

    Gradient: g det(A) A^-T (Jacobi's formula); 0 at an exactly singular matrix, as torch
    gives. Follows `torch.linalg.det`.
    """
    return _call("linalg_det", A)


def slogdet(A) -> SlogdetResult:
    """(sign, log|det A|) of square matrices `A` `(*, n, n)`, each `(*)`.

    A singular matrix gives sign 0 and logabsdet -inf. Gradient: of logabsdet, g A^-T (its
    backward raises LinAlgError at a singular matrix, where torch gives inf); the sign has
    none. Follows `torch.linalg.slogdet`.
    """
    return SlogdetResult(*_call("linalg_slogdet", A))


def cholesky(A, *, upper=False) -> Tensor:
    """The Cholesky factor L (A = L L^T; `upper=True`: U with A = U^T U) of symmetric
    positive-definite matrices `A` `(*, n, n)`; only the lower (upper) triangle is read.

    Raises:
        LinAlgError: a matrix that is not positive-definite (naming the batch element).
    Gradient: symmetric (I. Murray 2016). Follows `torch.linalg.cholesky`.
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
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices `A`
    `(*, n, n)`, reading the lower (`UPLO='L'`) or upper ('U') triangle.

    Gradient: V (diag(g_w) + skew(V^T g_V) / E) V^T with E_ij = w_j - w_i (symmetric, as
    torch's). Undefined (inf/nan) at repeated eigenvalues when the eigenvectors are used;
    eigenvectors are defined up to sign, so a loss must not depend on their sign.
    Follows `torch.linalg.eigh`.
    """
    return EighResult(*_call("linalg_eigh", A, UPLO))


def svd(A, full_matrices=True) -> SVDResult:
    """Singular value decomposition A = U diag(S) Vh of `A` `(*, m, n)`, S descending.

    Args:
        full_matrices: U `(*, m, m)` and Vh `(*, n, n)` (default, as torch) or, if False,
            U `(*, m, k)` and Vh `(*, k, n)`, k = min(m, n).
    Gradient (J. Townsend 2016): undefined at repeated singular values when U or Vh are
    used, and at zero singular values of a non-square A; singular vectors are defined up to
    a joint sign (u_i, v_i) -> (-u_i, -v_i), so a loss must not depend on it. With
    full_matrices, the gradient of the extra columns of U / rows of Vh is ignored (as torch).
    Follows `torch.linalg.svd`.
    """
    return SVDResult(*_call("linalg_svd", A, full_matrices))


def svdvals(A) -> Tensor:
    """Singular values `(*, k)` of `A` `(*, m, n)`, descending.

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
