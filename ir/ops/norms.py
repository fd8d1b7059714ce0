"""torch.linalg's norms: vector_norm (a primitive), matrix_norm and norm (decompositions)."""
from __future__ import annotations

import math

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import COMPLEX, INTERNAL, defcomposite, defop
from ._cost import NORM
from ._common import norm_dim, norm_dims, reduce_shape
from ._matrix import _ty, _fail, _need_tensors, _require_float


# ---- norms -------------------------------------------------------------------------------------
def _canon_vector_norm(types, *, ord, dim, keepdim):
    name = "linalg.vector_norm"
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{name}(): argument 'ord' must be a number, not {type(ord).__name__}")
    return {"ord": float(ord), "dim": norm_dims(name, dim, types[0].ndim),
            "keepdim": bool(keepdim)}


def _vector_norm_infer(types, *, ord, dim, keepdim):
    t = types[0]
    if not t.dtype.is_complex:
        _require_float("linalg.vector_norm", t, low_precision=True)
    if (ord < 0 or math.isinf(ord)) and any(t.shape[d] == 0 for d in (dim or range(t.ndim))):
        raise ShapeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty tensor "
                         f"because the operation does not have an identity ({t})")
    # the norm of a complex tensor is real (complex64 -> float32), as torch
    return T.TensorType(reduce_shape(t.shape, dim, keepdim), t.dtype.to_real())


def _vector_norm_kernel(xp, x, *, ord, dim, keepdim):
    dtype = np.finfo(x.dtype).dtype if x.dtype.kind == "c" else x.dtype   # complex -> real
    if dtype.itemsize < 4:                 # float16 / bfloat16 accumulate in float32, as torch
        x = x.astype(np.float32)
    a, kw = xp.abs(x), {"axis": dim, "keepdims": keepdim}
    if ord == math.inf:
        r = xp.max(a, **kw)
    elif ord == -math.inf:
        r = xp.min(a, **kw)
    elif ord == 0:
        r = xp.sum((a != 0).astype(a.dtype), **kw)
    elif ord == 1:
        r = xp.sum(a, **kw)
    elif ord == 2:
        r = xp.sqrt(xp.sum(a * a, **kw))
    else:
        r = xp.sum(a ** a.dtype.type(ord), **kw) ** a.dtype.type(1.0 / ord)
    return xp.asarray(r).astype(dtype)


def _vector_norm_vjp(b, ct, x, out, *, ord, dim, keepdim):
    # torch norm_backward: the gradient is 0 where the norm is 0; for ord = +-inf it is split
    # evenly among the entries of largest / smallest magnitude; ord = 0 has none (0).
    # Complex: sgn(x) = x / |x| (0 at 0) stands where real inputs have sign(x).
    if not keepdim:
        shape = reduce_shape(x.shape, dim, True)
        ct, out = b.reshape(ct, shape), b.reshape(out, shape)
    sign = b.sgn(x) if x.dtype.is_complex else b.sign(x)
    if ord == 0:
        return [b.mul(x, 0.0)]
    if ord == 1:
        return [b.mul(ct, sign)]
    if ord == 2:   # x / |x|, with x == 0 wherever the norm is 0
        return [b.mul(ct, b.div(x, b.where(b.eq(out, 0.0), 1.0, out)))]
    ax = b.abs(x)
    if math.isinf(ord):   # torch: the extremes or NaNs share it; sgn(NaN) is 0 there
        mask = b.logical_or(b.eq(ax, out), b.ne(ax, ax))
        count = b.sum(b.convert(mask, ax.dtype), dim, True)   # >= 1: the slice is not empty
        sign = b.where(b.ne(x, x), 0.0, sign)
        return [b.mul(sign, b.where(mask, b.div(ct, count), 0.0))]
    if ord < 1:    # sign(x) |x|^(p-1) (0 at x == 0) * norm^(1-p)
        scaled = b.mul(sign, b.pow(b.where(b.eq(x, 0.0), 1.0, ax), ord - 1))
        return [b.mul(b.mul(ct, scaled), b.pow(out, 1 - ord))]
    safe = b.where(b.eq(out, 0.0), 1.0, out)
    return [b.mul(b.div(ct, b.pow(safe, ord - 1)), b.mul(sign, b.pow(ax, ord - 1)))]


defop("linalg_vector_norm", "input", attrs=(("ord", 2, K.FLOAT), ("dim", None, K.DIMS_OPT), ("keepdim", False, K.BOOL)),
      canon=_canon_vector_norm, infer=_vector_norm_infer, kernel=_vector_norm_kernel,
      vjp=_vector_norm_vjp, flags=INTERNAL | COMPLEX, ref="torch.linalg.vector_norm",
      cost=NORM)


def _amin(ops, x, dims, keepdim):
    return ops.neg(ops.amax(ops.neg(x), dims, keepdim))


def _matrix_norm(ops, A, ord="fro", dim=(-2, -1), keepdim=False):
    name = "linalg.matrix_norm"
    _need_tensors(ops, name, A=A)
    t = _ty(A)
    try:
        if t.ndim < 2:
            raise ShapeError(f"{name}: The input tensor A must have at least 2 dimensions, got {t}")
        if not t.dtype.is_complex:   # complex64/complex128 too; the norm is real
            _require_float(name, t)
        if isinstance(dim, int) or len(dim) != 2:
            raise ValueError(f"{name}: dim must be a 2-tuple. Got {dim}")
        d0, d1 = (norm_dim(name, d, t.ndim) for d in dim)
        if d0 == d1:
            raise ValueError(f"{name}: dims must be different. Got ({d0}, {d1})")
    except (ShapeError, DTypeError, ValueError, IndexError, TypeError) as e:
        raise _fail(ops, e) from None
    kept = reduce_shape(t.shape, (d0, d1), True)
    if ord == "fro":
        return ops.linalg_vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        rest = [i for i in range(t.ndim) if i not in (d0, d1)]
        sv = ops.linalg_svdvals(ops.permute(A, tuple(rest) + (d0, d1)))
        r = (ops.sum(sv, (-1,)) if ord == "nuc" else
             ops.amax(sv, (-1,)) if ord == 2 else _amin(ops, sv, (-1,), False))
        return ops.reshape(r, kept) if keepdim else r
    if not isinstance(ord, str) and ord in (1, -1, math.inf, -math.inf):
        # 1: largest column sum of |A| (sum over rows d0, max over d1); inf: largest row sum
        summed, best = (d0, d1) if abs(ord) == 1 else (d1, d0)
        s = ops.sum(ops.abs(A), (summed,), True)
        r = ops.amax(s, (best,), True) if ord > 0 else _amin(ops, s, (best,), True)
        return r if keepdim else ops.reshape(r, reduce_shape(t.shape, (d0, d1), False))
    raise _fail(ops, ValueError(f"{name}: Order {ord} not supported."))


defcomposite("linalg_matrix_norm", "A: Tensor, ord='fro', dim=(-2, -1), keepdim=False",
             _matrix_norm, flags=INTERNAL | COMPLEX, ref="torch.linalg.matrix_norm",
             node_name="LinalgVectorNormBackward0",
             cost=NORM)


def _norm(ops, A, ord=None, dim=None, keepdim=False):
    name = "linalg.norm"
    _need_tensors(ops, name, A=A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            return ops.linalg_vector_norm(A, 2 if ord is None else ord, dims, keepdim)
        if len(dims) == 2:
            return ops.linalg_matrix_norm(A, "fro" if ord is None else ord, dims, keepdim)
        raise _fail(ops, ValueError(f"{name}: If dim is specified, it must be of length 1 or 2. "
                                    f"Got {list(dims)}"))
    if ord is None:
        return ops.linalg_vector_norm(A, 2, None, keepdim)
    nd = len(A.shape)
    if isinstance(ord, str) or nd == 2:
        return ops.linalg_matrix_norm(A, ord, (-2, -1), keepdim)
    if nd == 1:
        return ops.linalg_vector_norm(A, ord, None, keepdim)
    raise _fail(ops, ValueError(f"{name}: If dim is not specified but ord is, the input must be "
                                f"1D or 2D. Got {nd}D ({_ty(A)})."))


defcomposite("linalg_norm", "A: Tensor, ord=None, dim=None, keepdim=False", _norm,
             flags=INTERNAL | COMPLEX, ref="torch.linalg.norm",
             node_name="LinalgVectorNormBackward0",
             cost=NORM)


# ---- dist -------------------------------------------------------------------
def _dist(ops, input, other, p=2):  # noqa: A002
    """The p-norm of ``input - other`` (torch.dist; broadcast, promoted): ``p`` a number,
    ``inf`` or ``-inf``; 0 counts the non-zero differences.  The gradient is the norm's (0
    where the difference is 0, for p = 2, as torch)."""
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"dist(): argument 'p' must be a number, not {type(p).__name__}")
    for t in (input, other):
        if ops.is_operand(t) and not t.dtype.is_differentiable:   # torch 2.13's text
            raise DTypeError(f"dist: norm(): input dtype should be either floating point or "
                             f"complex. Got {t.dtype.name} instead")
    return ops.norm(ops.sub(input, other), float(p))


defcomposite("dist", "input: Tensor, other: Tensor, p=2", _dist,
             ref="torch.dist (real floating dtypes)", node_inputs=("input", "other"))
