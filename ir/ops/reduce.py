"""Reductions over dims (with keepdim) and their composites."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError
from ..registry import CHEAP, REDUCTION, defop
from ._common import canon_reduce, reduce_shape


def _sum_infer(types, *, dim, keepdim):
    t = types[0]
    dtype = t.dtype if t.dtype.is_floating_point else T.int64  # torch.sum: bool/int -> int64
    return T.TensorType(reduce_shape(t.shape, dim, keepdim), dtype)


def _unreduce(b, ct, x, dim, keepdim):
    """Bring a reduced cotangent back to x's shape (reshape to keepdim, then expand)."""
    if not keepdim:
        ct = b.reshape(ct, reduce_shape(x.shape, dim, True))
    return b.expand(ct, x.shape)


def _sum_kernel(xp, x, *, dim, keepdim):
    dtype = x.dtype if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else "int64"
    return xp.sum(x, axis=dim, keepdims=keepdim, dtype=dtype)


defop("sum", "input", attrs=(("dim", None), ("keepdim", False)), canon=canon_reduce("sum"),
      infer=_sum_infer, kernel=_sum_kernel, flags=REDUCTION | CHEAP, ref="torch.sum",
      vjp=lambda b, ct, x, out, *, dim, keepdim: [_unreduce(b, ct, x, dim, keepdim)])


def _amax_infer(types, *, dim, keepdim):
    t = types[0]
    for d in dim:
        if t.shape[d] == 0:
            raise ValueError(f"amax: cannot reduce over dimension {d} of size 0 in {t}")
    return T.TensorType(reduce_shape(t.shape, dim, keepdim), t.dtype)


def _amax_vjp(b, ct, x, out, *, dim, keepdim):
    # torch.amax: the gradient is split evenly among all maximal elements.
    out_k = out if keepdim else b.reshape(out, reduce_shape(x.shape, dim, True))
    ct_k = ct if keepdim else b.reshape(ct, reduce_shape(x.shape, dim, True))
    mask = b.convert(b.eq(x, out_k), ct.dtype)
    count = b.sum(mask, dim, True)
    return [b.mul(b.div(ct_k, count), mask)]


defop("amax", "input", attrs=(("dim", None), ("keepdim", False)), canon=canon_reduce("amax"),
      infer=_amax_infer, flags=REDUCTION | CHEAP, ref="torch.amax",
      kernel=lambda xp, x, *, dim, keepdim: xp.max(x, axis=dim, keepdims=keepdim),
      vjp=_amax_vjp)


def _mean(ops, x, dim=None, keepdim=False):
    if not x.dtype.is_floating_point:
        raise DTypeError("mean(): could not infer output dtype. Input dtype must be a "
                         f"floating point dtype, got {x.dtype.name} (use .float() first)")
    dims = canon_reduce("mean")([T.TensorType(tuple(x.shape), x.dtype)], dim=dim)["dim"]
    n = 1
    for d in dims:
        n *= x.shape[d]
    return ops.div(ops.sum(x, dims, keepdim), float(n))


defop("mean", "input", attrs=(("dim", None), ("keepdim", False)), decomp=_mean,
      ref="torch.mean")


def _sum_to_size(ops, x, size):
    """Sum a broadcast value back down to `size` (torch.Tensor.sum_to_size)."""
    size = tuple(size)
    shape = tuple(x.shape)
    if shape == size:
        return x
    lead = len(shape) - len(size)
    dims = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size)
                                      if s == 1 and shape[i + lead] != 1)
    out = ops.sum(x, dims, True) if dims else x
    return ops.reshape(out, size)


defop("sum_to_size", "input", attrs=(("size", None),), decomp=_sum_to_size,
      ref="torch.Tensor.sum_to_size")
