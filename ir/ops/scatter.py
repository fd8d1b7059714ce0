"""gather / scatter / scatter_add / take_along_dim and the two primitives under them.

`take_along_axis(x, index, dim)` is torch.gather: ``out[i][j][k] =
x[i][index[i][j][k]][k]`` for dim 1, the index no larger than `x` in the
other dims.  `put_along_axis(x, index, src, dim, accumulate)` is its
adjoint family: torch.scatter (set) and scatter_add (accumulate), reading
`src` over the index's extent.  Indices are not wrapped: torch rejects
negative ones, and the torch ops check bounds (`checked_index`: eagerly, or by
an `index_check` node in a traced program).
"""
from __future__ import annotations

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_PROMOTE, COMPLEX, INTERNAL, LINEAR, REQUIRED, defcomposite, defop
from ._common import norm_dim
from .index import checked_index, located, require_index, write_at


def _key(xp, idx, dim):
    """The NumPy index that reads/writes x at `idx` along `dim` over the index's extent."""
    grids = list(xp.indices(idx.shape, sparse=True)) if idx.ndim else []
    grids[dim] = idx
    return tuple(grids)


def _region(x, shape, dim):
    """`x` cut to `shape` in every dim but `dim` (torch reads only the index's extent)."""
    return x[tuple(slice(None) if d == dim else slice(0, s) for d, s in enumerate(shape))]


def _check_index(name, x, idx, dim, src=None):
    if idx.dtype.category != T.INT:
        raise DTypeError(f"{name}: expected an int64 or int32 index, got {idx}")
    if idx.ndim != x.ndim:
        raise ShapeError(f"{name}: index {idx} must have the same number of dimensions as "
                         f"input {x}")
    if any(i > s for d, (i, s) in enumerate(zip(idx.shape, x.shape)) if d != dim):
        raise ShapeError(f"{name}: index {idx} must be no larger than input {x} apart from "
                         f"dimension {dim}")
    if src is not None:
        if src.ndim != idx.ndim or any(i > s for i, s in zip(idx.shape, src.shape)):
            raise ShapeError(f"{name}: index {idx} must be no larger than src {src}")
        if src.dtype is not x.dtype:
            raise DTypeError(f"{name}: src {src} must have the dtype of input {x}")


def _checked(ops, name, x, index, d, src=None):
    """The primitive's type checks under the torch op's name, with the user's line."""
    try:
        _check_index(name, ops.type_of(x), ops.type_of(index), d,
                     None if src is None else ops.type_of(src))
    except (ShapeError, DTypeError) as e:
        raise located(ops, e) from None


def _canon_dim(name):
    return lambda types, *, dim, **rest: {"dim": norm_dim(name, dim, types[0].ndim), **rest}


def _take_infer(types, *, dim):
    x, idx = types
    _check_index("take_along_axis", x, idx, dim)
    return T.TensorType(idx.shape, x.dtype)


def _take_vjp(b, ct, x, idx, out, *, dim):
    return [b.put_along_axis(b.full(x.shape, 0, ct.dtype), idx, ct, dim, True), None]


defop("take_along_axis", "input, index", attrs=(("dim", REQUIRED, K.DIM),),
      canon=_canon_dim("take_along_axis"), infer=_take_infer, flags=INTERNAL | COMPLEX,
      ref="torch.gather", vjp=_take_vjp,
      kernel=lambda xp, x, idx, *, dim: x[_key(xp, idx, dim)], jvp=LINEAR)


def _put_infer(types, *, dim, accumulate):
    x, idx, src = types
    _check_index("put_along_axis", x, idx, dim, src)
    return x


def _put_vjp(b, ct, x, idx, src, out, *, dim, accumulate):
    # torch: grad_self = grad (add) or grad.scatter(dim, index, 0); grad_src =
    # grad.gather(dim, index), every repeated write reading its target's cotangent back;
    # zero where src lies outside the index
    dx = ct if accumulate else b.put_along_axis(ct, idx, b.full(idx.shape, 0, ct.dtype), dim)
    dsrc = b.take_along_axis(ct, idx, dim)
    if dsrc.shape != src.shape:
        n = len(src.shape)
        dsrc = b.slice_backward(dsrc, src.shape, (0,) * n, idx.shape, (1,) * n)
    return [dx, None, dsrc]


defop("put_along_axis", "input, index, src", attrs=(("dim", REQUIRED, K.DIM), ("accumulate", False, K.BOOL)),
      canon=_canon_dim("put_along_axis"), infer=_put_infer, flags=INTERNAL | COMPLEX,
      vjp=_put_vjp,
      ref="torch.scatter / torch.scatter_add",
      kernel=lambda xp, x, idx, src, *, dim, accumulate: write_at(
          xp, x, _key(xp, idx, dim), _region(src, idx.shape, -1), accumulate), jvp=LINEAR)


# ---- the torch ops -----------------------------------------------------------------------
def _scalar_dims(ops, *xs):
    """torch lets gather/scatter take 0-d tensors (dim 0); they run as 1-element vectors."""
    return [ops.reshape(x, (1,)) if ops.is_operand(x) and not x.shape else x for x in xs]


def _gather(ops, x, dim, index, sparse_grad=False):
    if sparse_grad:
        raise located(ops, NotImplementedError("gather: sparse_grad=True is not supported"))
    require_index(ops, "gather", index)
    d = norm_dim("gather", dim, len(x.shape))
    index = checked_index(ops, "gather", index, x.shape[d] if x.shape else 1, d)
    if not x.shape and not index.shape:
        xs, idx = _scalar_dims(ops, x, index)
        return ops.reshape(ops.take_along_axis(xs, idx, 0), ())
    _checked(ops, "gather", x, index, d)
    return ops.take_along_axis(x, index, d)


defcomposite("gather", "input: Tensor, dim, index: Tensor, sparse_grad=False", _gather,
             ref="torch.gather", flags=COMPLEX)


def _scatter_common(ops, name, x, dim, index, src, accumulate):
    require_index(ops, name, index)
    d = norm_dim(name, dim, len(x.shape))
    index = checked_index(ops, name, index, x.shape[d] if x.shape else 1, d)
    if not ops.is_operand(src):
        src = ops.full(tuple(index.shape), src, x.dtype)   # scatter(..., value)
    if not x.shape:
        xs, idx, s = _scalar_dims(ops, x, index, src)
        return ops.reshape(ops.put_along_axis(xs, idx, s, 0, accumulate), ())
    _checked(ops, name, x, index, d, src)
    return ops.put_along_axis(x, index, src, d, accumulate)


def _scatter(ops, x, dim, index, src=None, value=None, reduce=None):
    if reduce is not None:
        raise located(ops, NotImplementedError(
            f"scatter: reduce={reduce!r} is not supported; use scatter_add"))
    if (src is None) == (value is None):
        raise located(ops, TypeError("scatter(): give exactly one of src (a tensor) and value "
                                     "(a number)"))
    src = value if src is None else src
    if not ops.is_operand(src) and not isinstance(src, (bool, int, float, complex, np.number)):
        raise located(ops, TypeError(f"scatter(): src must be a tensor or a number, got "
                                     f"{type(src).__name__}"))
    return _scatter_common(ops, "scatter", x, dim, index, src, False)


defcomposite("scatter",
             "input: Tensor, dim, index: Tensor, src: Tensor | Number | None = None, "
             "value: Tensor | Number | None = None, reduce=None",
             _scatter, ref="torch.scatter (src or value; no reduce)", flags=COMPLEX)


def _scatter_add(ops, x, dim, index, src):
    if not ops.is_operand(src):
        raise located(ops, TypeError(f"scatter_add(): src must be a tensor, got "
                                     f"{type(src).__name__}"))
    return _scatter_common(ops, "scatter_add", x, dim, index, src, True)


defcomposite("scatter_add", "input: Tensor, dim, index: Tensor, src: Tensor", _scatter_add,
             ref="torch.scatter_add", flags=COMPLEX,
             autocast={"cpu": AUTOCAST_PROMOTE, "cuda": AUTOCAST_PROMOTE})


def _take_along_dim(ops, x, indices, dim=None):
    require_index(ops, "take_along_dim", indices, "indices")
    if dim is None:   # torch: both flattened
        flat = ops.reshape(x, (-1,))
        indices = checked_index(ops, "take_along_dim", indices, flat.shape[0], 0)
        return ops.take_along_axis(flat, ops.reshape(indices, (-1,)), 0)
    nd = len(x.shape)
    d = norm_dim("take_along_dim", dim, nd)
    if len(indices.shape) != nd:
        raise located(ops, ShapeError(
            f"take_along_dim: input {ops.type_of(x)} and indices {ops.type_of(indices)} must "
            "have the same number of dimensions"))
    indices = checked_index(ops, "take_along_dim", indices, x.shape[d], d)
    # every dim but `dim` broadcasts between input and indices
    xs, ids = list(x.shape), list(indices.shape)
    xs[d] = ids[d] = 1
    common = T.broadcast_shapes(tuple(xs), tuple(ids))
    if common is None:
        raise located(ops, ShapeError(
            f"take_along_dim: input {ops.type_of(x)} and indices {ops.type_of(indices)} do not "
            f"broadcast apart from dimension {d}"))
    x_shape = common[:d] + (x.shape[d],) + common[d + 1:]
    i_shape = common[:d] + (indices.shape[d],) + common[d + 1:]
    if tuple(x.shape) != x_shape:
        x = ops.expand(x, x_shape)
    if tuple(indices.shape) != i_shape:
        indices = ops.expand(indices, i_shape)
    return ops.take_along_axis(x, indices, d)


defcomposite("take_along_dim", "input: Tensor, indices: Tensor, dim=None", _take_along_dim,
             ref="torch.take_along_dim", flags=COMPLEX, node_name="GatherBackward0")
