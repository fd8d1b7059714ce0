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
from ..errors import DTypeError, ShapeError, with_location
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
             ref="torch.gather", flags=COMPLEX, node_inputs=("input",))


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
             _scatter, ref="torch.scatter (src or value; no reduce)", flags=COMPLEX,
             node_inputs=("input", "src"))


def _scatter_add(ops, x, dim, index, src):
    if not ops.is_operand(src):
        raise located(ops, TypeError(f"scatter_add(): src must be a tensor, got "
                                     f"{type(src).__name__}"))
    return _scatter_common(ops, "scatter_add", x, dim, index, src, True)


defcomposite("scatter_add", "input: Tensor, dim, index: Tensor, src: Tensor", _scatter_add,
             ref="torch.scatter_add", flags=COMPLEX,
             autocast={"cpu": AUTOCAST_PROMOTE, "cuda": AUTOCAST_PROMOTE},
             node_inputs=("input", "src"))


# ---- scatter_reduce ------------------------------------------------------------------------
REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_ALIASES = {"max": "amax", "min": "amin"}   # torch's forward takes these too (its backward not)
_TORCH_NAME = {T.complex64: "ComplexFloat", T.complex128: "ComplexDouble", T.bool_: "Bool"}


def _reduce_infer(types, *, dim, reduce, include_self):
    x, idx, src = types
    _check_index("scatter_reduce", x, idx, dim, src)
    kind = _ALIASES.get(reduce, reduce)
    if (kind == "mean" and x.dtype is T.bool_
            or kind in ("amax", "amin") and x.dtype.is_complex):
        raise DTypeError(f'scatter_reduce: "scatter_gather_tensor_cpu_reduce_{kind}" not '
                         f"implemented for '{_TORCH_NAME[x.dtype]}' (got input {x})")
    return x


def _identity(dtype, kind):
    """The reduction's identity in `dtype` (what an excluded self starts from)."""
    if dtype == np.bool_:
        return kind in ("prod", "amin")
    if kind in ("sum", "mean"):
        return 0
    if kind == "prod":
        return 1
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if kind == "amax" else info.max
    return -np.inf if kind == "amax" else np.inf


def _reduce_kernel(xp, x, idx, src, *, dim, reduce, include_self):
    kind = _ALIASES.get(reduce, reduce)
    key = _key(xp, idx, dim)
    vals = _region(src, idx.shape, -1)
    out = x if include_self else write_at(xp, x, key, _identity(x.dtype, kind))
    boolean = x.dtype == np.bool_
    if kind == "mean":
        total = write_at(xp, out, key, vals, accumulate=True)
        count = write_at(xp, xp.full(x.shape, 1 if include_self else 0, np.int64), key,
                         np.int64(1), accumulate=True)
        count = xp.maximum(count, 1)
        if x.dtype.kind in "iu":   # torch: floor division for integers
            return (total // count).astype(x.dtype)
        return (total / count.astype(x.dtype)).astype(x.dtype)
    if boolean:   # or / and
        kind = "amax" if kind == "sum" else "amin" if kind == "prod" else kind
    if xp is np:
        out = out.copy() if out is x else out
        {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[kind].at(
            out, key, vals)
        return out
    at = out.at[key]
    return {"sum": at.add, "prod": at.multiply, "amax": at.max, "amin": at.min}[kind](vals)


def _reduce_vjp(b, ct, x, idx, src, out, *, dim, reduce, include_self):
    # torch 2.13's scatter_reduce_backward (FunctionsManual.cpp), formula by formula
    if x.dtype.is_complex:
        raise with_location(RuntimeError(
            "scatter_reduce does not support automatic differentiation for outputs with "
            f"complex dtype (got {x.type}), as torch; apply it under tg.no_grad() or to "
            ".detach()ed tensors"), b.location())
    if reduce not in REDUCTIONS:
        raise with_location(RuntimeError(
            f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got "
            f"{reduce}."), b.location())
    n = len(src.shape)
    src_r = src if src.shape == idx.shape else b.slice(src, (0,) * n, idx.shape, (1,) * n)

    def gather(t):
        return b.take_along_axis(t, idx, dim)

    def scatter_add(t, v):
        return b.put_along_axis(t, idx, v, dim, True)

    if reduce == "sum":
        gx, gs = ct, gather(ct)
    elif reduce == "prod":
        # exclusive products, the zeros of self and src counted apart
        masked_self = b.where(b.eq(x, 0.0), 1.0, x)
        masked_self_result = b.put_reduce_along_axis(masked_self, idx, src, dim, "prod",
                                                     include_self)
        gx = b.div(b.mul(ct, masked_self_result), masked_self)
        src_zero = b.eq(src_r, 0.0)
        zeros = b.full(x.shape, 0, x.dtype)
        num_zeros = gather(scatter_add(zeros, b.convert(src_zero, x.dtype)))
        single = b.logical_and(src_zero, b.eq(num_zeros, 1.0))
        masked_src = b.where(single, 1.0, src_r)
        masked_src_result = b.put_reduce_along_axis(x, idx, masked_src, dim, "prod",
                                                    include_self)
        gs = b.where(single, gather(b.mul(ct, masked_src_result)),
                     b.div(gather(b.mul(ct, out)), b.where(src_zero, 1.0, src_r)))
    elif reduce == "mean":
        count = scatter_add(b.full(x.shape, 1 if include_self else 0, x.dtype),
                            b.full(idx.shape, 1, x.dtype))
        count = b.where(b.eq(count, 0.0), 1.0, count)
        gx = b.div(ct, count)
        gs = b.div(gather(ct), gather(count))
    else:   # amax / amin: the gradient shared evenly among the ties (self counted always)
        value = gather(out)
        self_is_result = b.convert(b.eq(x, out), x.dtype)
        src_is_result = b.convert(b.eq(src_r, value), x.dtype)
        share = b.div(ct, scatter_add(self_is_result, src_is_result))
        gx = b.mul(self_is_result, share)
        gs = b.mul(src_is_result, gather(share))
    if not include_self:
        gx = b.put_along_axis(gx, idx, b.full(idx.shape, 0, gx.dtype), dim)
    if gs.shape != src.shape:   # src read over the index's extent only
        gs = b.slice_backward(gs, src.shape, (0,) * n, idx.shape, (1,) * n)
    return [gx, None, gs]


defop("put_reduce_along_axis", "input, index, src",
      attrs=(("dim", REQUIRED, K.DIM), ("reduce", REQUIRED, K.enum(*REDUCTIONS, *_ALIASES)),
             ("include_self", True, K.BOOL)),
      canon=_canon_dim("put_reduce_along_axis"), infer=_reduce_infer, flags=INTERNAL | COMPLEX,
      kernel=_reduce_kernel, vjp=_reduce_vjp, ref="torch.scatter_reduce")


def _scatter_reduce(ops, x, dim, index, src, reduce, include_self=True):
    if not ops.is_operand(src):
        raise located(ops, TypeError(f"scatter_reduce(): argument 'src' (position 4) must be "
                                     f"Tensor, not {type(src).__name__}"))
    if not isinstance(reduce, str):
        raise located(ops, TypeError(f"scatter_reduce(): argument 'reduce' (position 5) must be "
                                     f"str, not {type(reduce).__name__}"))
    if reduce not in REDUCTIONS and reduce not in _ALIASES:
        raise located(ops, RuntimeError(f"reduce argument must be either sum, prod, mean, amax "
                                        f"or amin, got {reduce}"))
    if not isinstance(include_self, bool):
        raise located(ops, TypeError(f"scatter_reduce(): argument 'include_self' must be bool, "
                                     f"not {type(include_self).__name__}"))
    name = "scatter_reduce"
    require_index(ops, name, index)
    d = norm_dim(name, dim, len(x.shape))
    index = checked_index(ops, name, index, x.shape[d] if x.shape else 1, d)
    if not x.shape:
        xs, idx, s = _scalar_dims(ops, x, index, src)
        return ops.reshape(ops.put_reduce_along_axis(xs, idx, s, 0, reduce, include_self), ())
    _checked(ops, name, x, index, d, src)
    return ops.put_reduce_along_axis(x, index, src, d, reduce, include_self)


defcomposite("scatter_reduce", "input: Tensor, dim, index: Tensor, src: Tensor, reduce, *, "
             "include_self=True", _scatter_reduce, flags=COMPLEX,
             ref="torch.scatter_reduce (sum, prod, mean, amax, amin; include_self)",
             node_inputs=("input", "src"))


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
