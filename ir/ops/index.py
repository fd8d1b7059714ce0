"""Integer-array indexing: `index_take` along one dim and its adjoint (a scatter-add)."""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError
from ..registry import INTERNAL, defop
from ._common import norm_dim


def _take_infer(types, *, dim):
    x, idx = types
    if idx.dtype.category != T.INT:
        raise DTypeError(f"index_take: indices must be an integer tensor, got {idx}")
    return T.TensorType(x.shape[:dim] + idx.shape + x.shape[dim + 1:], x.dtype)


def _take_vjp(b, ct, x, idx, out, *, dim):
    return [b.index_take_backward(ct, idx, x.shape, dim), None]


# x.take(idx, axis=dim) for an index tensor of any shape: the single-dim case of
# x[..., idx, ...]; getitem with several index arrays flattens them into one.
defop("index_take", "input, index", attrs=(("dim", 0),),
      canon=lambda types, *, dim: {"dim": norm_dim("index_take", dim, types[0].ndim)},
      infer=_take_infer, ref="torch.index_select / x[idx] (numpy.take)",
      kernel=lambda xp, x, idx, *, dim: xp.take(x, idx, axis=dim),
      vjp=_take_vjp, flags=INTERNAL)


def _take_backward_np(xp, ct, idx, *, shape, dim):
    out = xp.zeros(shape, dtype=ct.dtype)
    xp.add.at(out, (slice(None),) * dim + (idx,), ct)  # duplicate indices accumulate
    return out


def _take_backward_jax(xp, ct, idx, *, shape, dim):
    return xp.zeros(shape, dtype=ct.dtype).at[(slice(None),) * dim + (idx,)].add(ct)


defop("index_take_backward", "grad, index", attrs=(("shape", None), ("dim", 0)),
      infer=lambda types, *, shape, dim: T.TensorType(tuple(shape), types[0].dtype),
      kernel=_take_backward_np, kernels={"jax": _take_backward_jax}, flags=INTERNAL,
      ref="torch index_select_backward (index_add into zeros)",
      vjp=lambda b, ct, g, idx, out, *, shape, dim: [b.index_take(ct, idx, dim), None])
