"""Helpers shared by the linear-algebra ops (products.py, linalg.py, norms.py): errors raised
from decompositions, torch.linalg's input checks, and small matrices built from IR ops."""
from __future__ import annotations

from .. import types as T
from ..builder import with_location
from ..errors import DTypeError, ShapeError
from ._common import conj_if_complex


def _mT(b, x):
    nd = len(x.shape)
    return b.permute(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _mH(b, x):
    """The conjugate transpose of the last two dims (the transpose for a real dtype)."""
    return conj_if_complex(b, _mT(b, x))


# ---- helpers: errors in decompositions, and small matrices built from IR ops ----------------
def _ty(x) -> T.TensorType:
    return T.TensorType(tuple(x.shape), x.dtype)


def _fail(ops, err: Exception) -> Exception:
    """`err` with the user's line: decompositions raise outside Frontend.call's handler."""
    return with_location(err, ops.location())


def _need_tensors(ops, name, **named) -> None:
    for arg, x in named.items():
        if not ops.is_operand(x):
            raise _fail(ops, TypeError(f"{name}(): argument '{arg}' must be a tensor, got "
                                       f"{type(x).__name__}"))


def _same_dtype(ops, name, a, b, what="expected both operands to have the same dtype") -> None:
    if a.dtype is not b.dtype:
        raise _fail(ops, DTypeError(f"{name}: {what}, got {_ty(a)} and {_ty(b)} "
                                    "(cast one with .to(dtype), as torch requires)"))


def _mm(b, x, y):
    return b.batched_matmul(x, y)


def _index_grid(b, n, m, k=0):
    """(rows + k, cols) as int64 (n, 1) and (1, m) grids."""
    rows = b.reshape(b.arange(k, n + k, 1, T.int64), (n, 1))
    return rows, b.reshape(b.arange(0, m, 1, T.int64), (1, m))


def _eye_mask(b, n):
    return b.eq(*_index_grid(b, n, n))


def _eye(b, n, dtype):
    return b.convert(_eye_mask(b, n), dtype)


def _tril(b, x, k=0):
    """torch.tril on the last two dims: keep entries with col <= row + k."""
    rows, cols = _index_grid(b, x.shape[-2], x.shape[-1], k)
    return b.where(b.ge(rows, cols), x, 0.0)


def _diag_embed(b, v):
    return b.mul(b.unsqueeze(v, -1), _eye(b, v.shape[-1], v.dtype))


def _narrow(b, x, dim, start, stop):
    nd = len(x.shape)
    dim %= nd
    starts = tuple(start if i == dim else 0 for i in range(nd))
    stops = tuple(stop if i == dim else s for i, s in enumerate(x.shape))
    return b.slice(x, starts, stops, (1,) * nd)


def _as_matrix_batch(b, v):
    """(*) -> (*, 1, 1), to scale a batch of matrices."""
    return b.reshape(v, tuple(v.shape) + (1, 1))


def _require_float(name: str, t: T.TensorType, low_precision=False) -> None:
    if not t.dtype.is_floating_point:
        raise DTypeError(f"{name}: Expected a floating point tensor as input. Got {t}")
    if not low_precision and t.dtype not in (T.float32, T.float64):
        raise DTypeError(f"{name}: Low precision dtypes not supported. Got {t}")


def _require_matrix(name: str, t: T.TensorType, square=False) -> None:
    """At least 2-D (square if asked), float32/float64/complex64/complex128."""
    if t.ndim < 2:
        raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions, got {t}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{name}: A must be batches of square matrices, but they are "
                         f"{t.shape[-2]} by {t.shape[-1]} matrices ({t})")
    if not t.dtype.is_complex:   # complex64/complex128 are the only complex dtypes
        _require_float(name, t)
