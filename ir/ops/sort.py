"""Ops that pick elements and return (values, indices): sort, argsort, topk, cummax, cummin,
kthvalue.

Each is a multi-output primitive (INTERNAL, ``*_with_indices``) behind a
torch-named decomposition that returns torch's named tuple (``.values``,
``.indices``, unpackable as a tuple). The VJP scatter-adds each value's
cotangent onto the element it was taken from (`put_along_axis`, in
scatter.py), so the whole gradient goes to the index returned; the integer
output never gets one. Sorting is always stable (torch leaves the order of
ties to the implementation unless ``stable=True``): ties keep their input order.
"""
from __future__ import annotations

from collections import namedtuple

from .. import attr_kinds as K
from .. import types as T
from ..builder import with_location
from ..errors import DTypeError
from ..registry import INTERNAL, REQUIRED, defcomposite, defop
from . import scatter as _scatter  # noqa: F401  (registers put_along_axis, used by the VJPs)
from ._common import norm_dim, reduce_shape
from ._cost import SCAN

# torch.return_types: (values, indices) named tuples.
RETURN_TYPES = {name: namedtuple(name, ("values", "indices"))
                for name in ("max", "min", "sort", "topk", "cummax", "cummin", "kthvalue")}


def _canon_dim(name):
    return lambda types, *, dim, **rest: {"dim": norm_dim(name, dim, types[0].ndim), **rest}


def scatter_values(b, ct, x, indices, dim: int, keepdim: bool = True):
    """Cotangent of values taken from `x` at `indices` along `dim`, placed back in x's shape."""
    if not x.shape:
        return ct
    if not keepdim:
        shape = reduce_shape(x.shape, (dim,), True)
        ct, indices = b.reshape(ct, shape), b.reshape(indices, shape)
    return b.put_along_axis(b.full(x.shape, 0, ct.dtype), indices, ct, dim, True)


def _values_vjp(b, ct, x, values, indices, *, dim, **_):
    return [scatter_values(b, ct[0], x, indices, dim)]


def _with_indices_infer(types, **_):
    t = types[0]
    return t, T.TensorType(t.shape, T.int64)


# ---- sort / argsort / topk --------------------------------------------------
def _sort_kernel(xp, x, *, dim, descending):
    if x.ndim == 0:
        return x, xp.zeros((), dtype=xp.int64)
    if descending:   # stable descending: sort the reversed input, reverse back (ties in order)
        rev = xp.argsort(xp.flip(x, dim), axis=dim, stable=True)
        idx = x.shape[dim] - 1 - xp.flip(rev, dim)
    else:
        idx = xp.argsort(x, axis=dim, stable=True)
    idx = idx.astype(xp.int64)
    return xp.take_along_axis(x, idx, axis=dim), idx


# NaN sorts as the largest value, as in torch.
defop("sort_with_indices", "input", attrs=(("dim", -1, K.DIM), ("descending", False, K.BOOL)),
      canon=lambda types, *, dim, descending: {
          "dim": norm_dim("sort", dim, types[0].ndim), "descending": bool(descending)},
      infer=_with_indices_infer, kernel=_sort_kernel, vjp=_values_vjp, flags=INTERNAL,
      ref="torch.sort (stable=True)", aten_name="aten::sort")


def _sort(ops, x, dim=-1, descending=False, stable=False):
    return RETURN_TYPES["sort"](*ops.sort_with_indices(x, dim, descending))


def _argsort(ops, x, dim=-1, descending=False, stable=False):
    try:
        dim = norm_dim("argsort", dim, len(x.shape))
    except (IndexError, TypeError) as e:
        raise with_location(e, ops.location()) from None
    return ops.sort_with_indices(x, dim, descending)[1]


def _topk(ops, x, k, dim=-1, largest=True, sorted=True):
    shape = tuple(x.shape)
    try:
        d = norm_dim("topk", dim, len(shape))
        n = shape[d] if shape else 1
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k <= n:
            raise ValueError(f"topk: selected index k out of range: k={k!r} for dimension {d} of "
                             f"size {n} ({T.TensorType(shape, x.dtype)})")
    except (IndexError, TypeError, ValueError) as e:
        raise with_location(e, ops.location()) from None
    values, indices = ops.sort_with_indices(x, d, largest)   # sorted=False: any order is torch's
    if shape and k < n:
        stops = shape[:d] + (k,) + shape[d + 1:]
        window = ((0,) * len(shape), stops, (1,) * len(shape))
        values, indices = ops.slice(values, *window), ops.slice(indices, *window)
    return RETURN_TYPES["topk"](values, indices)


defcomposite("sort", "input: Tensor, dim=-1, descending=False, stable=False", _sort,
             ref="torch.sort (always stable)")
defcomposite("argsort", "input: Tensor, dim=-1, descending=False, stable=False", _argsort,
             ref="torch.argsort (always stable)")
defcomposite("topk", "input: Tensor, k, dim=-1, largest=True, sorted=True", _topk,
             ref="torch.topk (ties: lowest index first; always sorted)", node_inputs=("input",))


# ---- cummax / cummin --------------------------------------------------------
def _cum_kernel(accumulate):
    """values = running extreme; indices = last position where it was reached (or a NaN)."""
    def kernel(xp, x, *, dim):
        if x.ndim == 0:
            return x, xp.zeros((), dtype=xp.int64)
        values = accumulate(xp, x, dim, False)
        n = x.shape[dim]
        pos = xp.arange(n, dtype=xp.int64).reshape((n,) + (1,) * (x.ndim - 1 - dim))
        hit = (x == values) | (x != x)          # torch: a tie moves the index; so does a NaN
        return values, accumulate(xp, xp.where(hit, pos, 0), dim, True)
    return kernel


def _np_accumulate(ufunc):
    return lambda xp, a, dim, is_index: getattr(xp, "maximum" if is_index else ufunc).accumulate(
        a, axis=dim)


def _jax_accumulate(name):
    def acc(xp, a, dim, is_index):
        from jax import lax  # jax loads on first use (start-up time)
        if is_index:
            return lax.cummax(a, axis=dim)      # positions only grow
        if a.dtype == xp.bool_:                 # lax.cummax/cummin take numbers
            return getattr(lax, name)(a.astype(xp.uint8), axis=dim).astype(xp.bool_)
        return getattr(lax, name)(a, axis=dim)
    return acc


def _cum(name):
    return lambda ops, x, dim: RETURN_TYPES[name](*getattr(ops, f"{name}_with_indices")(x, dim))


for _name, _ufunc in (("cummax", "maximum"), ("cummin", "minimum")):
    defop(f"{_name}_with_indices", "input", attrs=(("dim", 0, K.DIM),), canon=_canon_dim(_name),
          infer=_with_indices_infer, kernel=_cum_kernel(_np_accumulate(_ufunc)),
          kernels={"jax": _cum_kernel(_jax_accumulate(_name))}, vjp=_values_vjp, flags=INTERNAL,
          ref=f"torch.{_name}", aten_name=f"aten::{_name}", cost=SCAN)
    defcomposite(_name, "input: Tensor, dim", _cum(_name), ref=f"torch.{_name}")


# ---- kthvalue ---------------------------------------------------------------
def _kthvalue_canon(types, *, k, dim, keepdim):
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"kthvalue(): argument 'k' must be int, not {type(k).__name__}")
    return {"k": k, "dim": norm_dim("kthvalue", dim, types[0].ndim), "keepdim": bool(keepdim)}


def _kthvalue_infer(types, *, k, dim, keepdim):
    t = types[0]
    if t.dtype is T.bool_:
        raise DTypeError(f'kthvalue: "kthvalue_out_cpu" not implemented for \'Bool\' ({t})')
    n = t.shape[dim] if t.ndim else 1
    if not 1 <= k <= n:   # torch 2.13's RuntimeError text
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    shape = reduce_shape(t.shape, (dim,), keepdim) if t.ndim else ()
    return T.TensorType(shape, t.dtype), T.TensorType(shape, T.int64)


def _kthvalue_kernel(xp, x, *, k, dim, keepdim):
    if x.ndim == 0:
        return x, xp.zeros((), dtype=xp.int64)
    order = xp.argsort(x, axis=dim, stable=True)   # NaN sorts last, as torch's largest
    idx = xp.take(order, xp.asarray([k - 1]), axis=dim).astype(xp.int64)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = xp.squeeze(values, axis=dim), xp.squeeze(idx, axis=dim)
    return values, idx


defop("kthvalue_with_indices", "input",
      attrs=(("k", REQUIRED, K.INT), ("dim", -1, K.DIM), ("keepdim", False, K.BOOL)),
      canon=_kthvalue_canon, infer=_kthvalue_infer, kernel=_kthvalue_kernel, flags=INTERNAL,
      vjp=lambda b, ct, x, values, indices, *, k, dim, keepdim: [
          scatter_values(b, ct[0], x, indices, dim, keepdim)],
      ref="torch.kthvalue", aten_name="aten::kthvalue", cost=SCAN)
defcomposite("kthvalue", "input: Tensor, k, dim=-1, keepdim=False",
             lambda ops, x, k, dim=-1, keepdim=False: RETURN_TYPES["kthvalue"](
                 *ops.kthvalue_with_indices(x, k, dim, keepdim)),
             ref="torch.kthvalue (the k-th smallest along dim: the k-th of a stable sort)",
             node_inputs=("input",))
