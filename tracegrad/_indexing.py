"""Tensor.__getitem__ / __setitem__, and the ops whose output shape depends on values.

Follows torch's indexing (torch/csrc/autograd/python_variable_indexing.cpp):

- ints, slices (positive steps), None, Ellipsis and Python bools index basically:
  one `slice` op and a `reshape`, a view of the input;
- integer arrays (tensors, lists, NumPy arrays) are advanced indices and broadcast
  together; a k-dim boolean mask stands for its k `nonzero()` index arrays, so its
  result shape depends on its values (eager only: TraceError inside `tg.compile`).
  The advanced dims go where the first of them was when they are consecutive in
  the key (ints, being basic, do not separate them; None and slices do), else
  first, as in NumPy.  They are moved together, merged and read with one
  `index_take` of the row-major flat index (duplicates accumulate in backward).

`x[key] = value` builds x's new value functionally (`slice_scatter`, `index_put`;
a mask with a value for the trailing dims becomes a `where`, which also traces)
and hands it to `Tensor._inplace`.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import DTypeError, ShapeError, TraceError
from tracegrad.ir.graph import Value
from tracegrad.ir.ops.index import bounds_error, checked_index

from . import _ops, _state, _view_names
from .dispatch.frontend import EAGER
from .backends.device_arrays import host, placed_like
from .tensor import Tensor

ADV = "adv"    # an item of the result layout filled by the advanced indices
EMPTY = -1     # an item for a Python False: a new axis of size 0


# ---- the key as tokens ---------------------------------------------------------------------
def _is_traced(t: Tensor) -> bool:
    return isinstance(t._data, Value)


def _value_error(what: str, t: Tensor,
                 instead: str = "tg.where / masked_fill (shape-preserving)") -> TraceError:
    return TraceError(f"{what}: the result's shape depends on the values of {t._type}, which "
                      "tg.compile does not know while tracing; do this outside the compiled "
                      f"function, or use {instead}").add_location(_state.user_location(2))


def _token(k):
    """One entry of the key as (kind, payload); kinds: new, ellipsis, int, slice, index, mask."""
    if k is None:
        return ("new", True)
    if k is Ellipsis:
        return ("ellipsis", None)
    if isinstance(k, (bool, np.bool_)):
        return ("bool", bool(k))         # torch: True adds a dim of size 1, False of size 0
    if isinstance(k, (int, np.integer)):
        return ("int", int(k))
    if isinstance(k, slice):
        return ("slice", k)
    if isinstance(k, Tensor):
        if k.dtype is T.bool_:
            if k.ndim == 0:
                if _is_traced(k):
                    raise _value_error("indexing with a 0-d boolean tensor", k)
                return ("bool", bool(k._data))
            return ("mask", k)
        if k.dtype.category != T.INT:
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                             f"got a {k.dtype.name} tensor {k._type}")
        return ("index", k)
    if isinstance(k, (list, tuple, np.ndarray)):
        arr = np.asarray(k)
        if arr.dtype == np.bool_:
            return ("mask", Tensor(arr)) if arr.ndim else ("bool", bool(arr))
        if arr.size == 0:
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                             f"got an array of {arr.dtype}")
        return ("index", Tensor(arr.astype(np.int64)))
    if isinstance(k, (float, np.floating)):   # torch 2.13: an IndexError in these words
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         f"Variables are valid indices (got {type(k).__name__})")
    raise TypeError(f"tensor indices must be ints, slices, None, Ellipsis, bools or integer/bool "
                    f"tensors; got {type(k).__name__}")


def _tokens(key) -> list:
    if isinstance(key, list) and len(key) < 32 and any(
            isinstance(k, (Tensor, list, tuple, np.ndarray, slice)) or k is None or k is Ellipsis
            for k in key):
        # torch 2.13 still reads such a list as a tuple (deprecated there too)
        warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated "
                      "(as in torch); use x[tuple(seq)] instead of x[seq]", UserWarning,
                      stacklevel=3)
        key = tuple(key)
    return [_token(k) for k in (key if isinstance(key, tuple) else (key,))]


# ---- the layout: what the key does to each dim ---------------------------------------------
class _Layout:
    """Per source dim: the slice taken; the result's dims (`items`); the advanced indices."""

    def __init__(self, shape):
        self.shape = shape
        self.starts, self.stops, self.steps = [], [], []
        self.items: list = []          # result dims in order: size, ADV or EMPTY
        self.adv: list = []            # (source dim, int64 index tensor in [0, size))
        self.int_dims: list = []       # source dims an int selected (dropped)
        self.mask = None               # (source dim, first item, mask) for setitem's `where`

    def take(self, start, stop, step, item=None):
        """Slice the next source dim; `item` is its result dim (None: dropped, an int's)."""
        self.starts.append(start), self.stops.append(stop), self.steps.append(step)
        if item is not None:
            self.items.append(item)

    @property
    def sliced(self) -> tuple:
        """The shape after slicing, in source dims (an int's dim has size 1)."""
        return tuple(max(0, -(-(e - s) // st)) for s, e, st in
                     zip(self.starts, self.stops, self.steps))

    @property
    def trivial(self) -> bool:
        return (tuple(self.starts), tuple(self.stops), tuple(self.steps)) == (
            (0,) * len(self.shape), tuple(self.shape), (1,) * len(self.shape))


def _width(kind, k) -> int:
    if kind in ("int", "slice", "index"):
        return 1
    return k.ndim if kind in ("mask", "mask_where") else 0


def _layout(x: Tensor, tokens: list, what: str) -> _Layout:
    """The key's plan on x; `what` (getitem / setitem) names the op in bounds errors."""
    nd, shape = x.ndim, x.shape
    consumed = sum(_width(*t) for t in tokens)
    if sum(kind == "ellipsis" for kind, _ in tokens) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > nd and nd == 0 and what == "getitem":   # torch 2.13's words
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python to "
                         "convert a 0-dim tensor to a number")
    if consumed > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd} "
                         f"(got {consumed} indices for shape {list(shape)})")
    lay, d = _Layout(shape), 0
    for kind, k in tokens + [("ellipsis", None)] * (not any(t[0] == "ellipsis" for t in tokens)):
        if kind == "ellipsis":
            for _ in range(nd - consumed):
                lay.take(0, shape[d], 1, shape[d])
                d += 1
        elif kind == "new":
            lay.items.append(1)
        elif kind == "bool":
            lay.items.append(1 if k else EMPTY)
        elif kind == "int":
            if not -shape[d] <= k < shape[d]:
                raise bounds_error(what, k, shape[d], d)
            lay.take(k % shape[d], k % shape[d] + 1, 1)
            lay.int_dims.append(d)
            d += 1
        elif kind == "slice":
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero (negative or zero slice steps "
                                 "are not supported, as in torch)")
            start, stop, step = k.indices(shape[d])
            stop = max(stop, start)
            lay.take(start, stop, step, -(-(stop - start) // step))
            d += 1
        elif kind == "index":
            lay.take(0, shape[d], 1, ADV)
            lay.adv.append((d, _normalize_index(k, shape[d], d, what)))
            d += 1
        else:   # a boolean mask over dims d .. d + k.ndim - 1
            _check_mask(k, shape, d)
            if kind == "mask_where":
                lay.mask = (d, len(lay.items), k)
                for j in range(k.ndim):
                    lay.take(0, shape[d + j], 1, shape[d + j])
            else:
                if _is_traced(k):
                    raise _value_error("indexing with a boolean mask", k)
                for j, idx in enumerate(np.nonzero(host(k._data))):
                    lay.take(0, shape[d + j], 1, ADV)
                    lay.adv.append((d + j, Tensor(placed_like(idx.astype(np.int64), k._data))))
            d += k.ndim
    if lay.adv and any(kind == "bool" for kind, _ in tokens):
        # torch reads the bool as an index array on its new dim, broadcast with the others
        raise NotImplementedError("indexing with a Python bool together with index arrays or "
                                  "masks is not supported; use None and index separately")
    return lay


def _check_mask(mask: Tensor, shape, d: int) -> None:
    for j, s in enumerate(mask.shape):
        if s != shape[d + j]:
            raise IndexError(f"the shape of the mask {list(mask.shape)} at index {j} does not "
                             f"match the shape of the indexed tensor {list(shape)} at index "
                             f"{d + j}")


def _normalize_index(idx: Tensor, size: int, dim: int, what: str) -> Tensor:
    """int64, in [-size, size) as torch requires (checked now, or by the traced program: one
    index array of several must be checked before they merge into one flat index), negative
    indices wrapped."""
    if idx.dtype is not T.int64:
        idx = _ops.convert(idx, T.int64)
    idx = checked_index(EAGER, what, idx, size, dim, negative=True)
    if not _is_traced(idx):
        a = host(idx._data)
        if a.size and a.min() < 0:
            return Tensor(placed_like(np.where(a < 0, a + size, a), idx._data))
        return idx
    return _ops.where(_ops.lt(idx, 0), _ops.add(idx, size), idx)


# ---- advanced indices: one flat index over the merged dims ---------------------------------
class _Plan:
    """How the advanced dims of the sliced tensor (shape `sliced`) are merged and indexed."""

    def __init__(self, lay: _Layout):
        sliced, items = lay.sliced, lay.items
        adv_dims = [d for d, _ in lay.adv]
        positions = [i for i, it in enumerate(items) if it is ADV]
        consecutive = positions == list(range(positions[0], positions[0] + len(positions)))
        basic = [d for d in range(len(sliced)) if d not in adv_dims and d not in lay.int_dims]
        pre = [d for d in basic if d < adv_dims[0]] if consecutive else []
        post = [d for d in basic if d not in pre]
        self.perm = tuple(pre + adv_dims + post + lay.int_dims)
        self.dim = len(pre)
        self.merged = (tuple(sliced[d] for d in pre) + (math.prod(sliced[d] for d in adv_dims),)
                       + tuple(sliced[d] for d in post))
        if T.broadcast_shapes(*(tuple(idx.shape) for _, idx in lay.adv)) is None:
            raise ShapeError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(str(list(idx.shape)) for _, idx in lay.adv))
        flat = None
        for d, idx in lay.adv:    # row-major over the merged dims; broadcasts the indices
            flat = idx if flat is None else _ops.add(_ops.mul(flat, sliced[d]), idx)
        self.flat = flat
        self.taken = (tuple(sliced[d] for d in pre) + tuple(flat.shape)
                      + tuple(sliced[d] for d in post))
        self.result = _result_shape(items, tuple(flat.shape), consecutive)

    def merge(self, region: Tensor) -> Tensor:
        if self.perm != tuple(range(len(self.perm))):
            region = _ops.permute(region, self.perm)
        return _reshape(region, self.merged)

    def unmerge(self, merged: Tensor, sliced: tuple) -> Tensor:
        permuted = tuple(sliced[d] for d in self.perm)
        out = _reshape(merged, permuted)
        if self.perm == tuple(range(len(self.perm))):
            return out
        inverse = [0] * len(self.perm)
        for i, d in enumerate(self.perm):
            inverse[d] = i
        return _ops.permute(out, tuple(inverse))


def _result_shape(items: list, adv_shape: tuple, consecutive: bool) -> list:
    """The indexed shape (EMPTY kept as a marker): the advanced shape at the first advanced
    item when the advanced items are consecutive, else first."""
    out, placed = [], False
    for it in items:
        if it is ADV:
            if consecutive and not placed:
                out.extend(adv_shape)
                placed = True
        else:
            out.append(it)
    return out if consecutive else list(adv_shape) + out


def _reshape(x: Tensor, shape) -> Tensor:
    shape = tuple(shape)
    return x if x.shape == shape else _ops.reshape(x, shape)


def _sizes(shape) -> tuple:
    return tuple(1 if s == EMPTY else s for s in shape)


# ---- getitem -------------------------------------------------------------------------------
def getitem(x: Tensor, key) -> Tensor:
    lay = _layout(x, _tokens(key), "getitem")
    out = x if lay.trivial else _ops.slice(x, tuple(lay.starts), tuple(lay.stops),
                                           tuple(lay.steps))
    if not lay.adv:
        shape = lay.items
    else:
        plan = _Plan(lay)
        out = _ops.index_take(plan.merge(out), plan.flat, plan.dim)
        shape = plan.result
    out = _reshape(out, _sizes(shape))
    if out is x:
        out = _ops.reshape(x, x.shape)   # x[...] is a new view of x, as in torch
    if EMPTY in shape:                   # x[False]: the new axis has size 0
        stops = tuple(0 if s == EMPTY else n for s, n in zip(shape, out.shape))
        out = _ops.slice(out, (0,) * out.ndim, stops, (1,) * out.ndim)
    return _view_names.rename(out, _view_names.getitem_name(x.shape, key), x)


# ---- setitem -------------------------------------------------------------------------------
def _value(x: Tensor, value) -> Tensor:
    """The assigned value as a tensor of x's dtype (torch casts it: 2.7 -> 2 in an int tensor)."""
    if isinstance(value, Tensor):
        return value if value.dtype is x.dtype else _ops.convert(value, x.dtype)
    if isinstance(value, (bool, int, float, np.number, np.bool_)):
        return _ops.full((), value, x.dtype)
    if isinstance(value, complex):   # torch: into a real tensor only with imaginary part 0
        if not x.dtype.is_complex and value.imag != 0:
            raise RuntimeError(f"value {value} cannot be converted to type {x.dtype.name} "
                               "without overflow")
        return _ops.full((), value if x.dtype.is_complex else value.real, x.dtype)
    if isinstance(value, (list, tuple, np.ndarray)):
        return Tensor(np.asarray(value).astype(x.dtype.numpy))
    raise TypeError(f"can't assign a {type(value).__name__} to a tensor; use a number or a "
                    "tensor")


def _broadcast_to(v: Tensor, shape: tuple) -> Tensor:
    if T.broadcast_shapes(v.shape, shape) != shape:
        raise ShapeError(f"shape mismatch: value tensor of shape {list(v.shape)} cannot be "
                         f"broadcast to indexing result of shape {list(shape)}"
                         ).add_location(_state.user_location(2))
    return v if v.shape == shape else _ops.expand(v, shape)


def _place(x: Tensor, lay: _Layout, region: Tensor) -> Tensor:
    """x with its sliced region replaced by `region` (shape `lay.sliced`)."""
    if lay.trivial:
        return region
    return _ops.slice_scatter(x, region, tuple(lay.starts), tuple(lay.stops), tuple(lay.steps))


def _masked_setitem(x: Tensor, tokens: list, v: Tensor) -> Tensor | None:
    """x[..., mask, ...] = v with v broadcasting over the dims after the mask: a `where` on
    the indexed region, no nonzero() (so it traces).  None when v does not fit that form."""
    lay = _layout(x, [("mask_where", k) if kind == "mask" else (kind, k) for kind, k in tokens],
                  "setitem")
    d, first, mask = lay.mask
    after_items = tuple(lay.items[first + mask.ndim:])
    if v.ndim > len(after_items) or T.broadcast_shapes(v.shape, after_items) != after_items:
        return None
    after = lay.sliced[d + mask.ndim:]
    v = _reshape(_broadcast_to(v, after_items), after)
    mask = _reshape(mask, mask.shape + (1,) * len(after))
    region = x if lay.trivial else _ops.slice(x, tuple(lay.starts), tuple(lay.stops),
                                              tuple(lay.steps))
    return _place(x, lay, _ops.where(mask, v, region))


def setitem_value(x: Tensor, key, value, accumulate: bool = False) -> Tensor:
    """The value x has after ``x[key] = value`` (Tensor.__setitem__ takes it in place); with
    `accumulate`, after ``x[key] += value`` with repeated indices adding up (index_put_)."""
    tokens = _tokens(key)
    v = _value(x, value)
    if any(kind == "bool" and not k for kind, k in tokens):
        return x                      # x[False] = v selects nothing
    kinds = [kind for kind, _ in tokens]
    if kinds.count("mask") == 1 and "index" not in kinds and not accumulate:
        out = _masked_setitem(x, tokens, v)
        if out is not None:
            return out
    lay = _layout(x, tokens, "setitem")
    sliced = lay.sliced
    if not lay.adv:
        v = _reshape(_broadcast_to(v, tuple(lay.items)), sliced)
        if accumulate:
            v = _ops.add(v, x if lay.trivial else _ops.slice(
                x, tuple(lay.starts), tuple(lay.stops), tuple(lay.steps)))
        out = _place(x, lay, v)
        if out.grad_fn is not None:   # torch: a copy into a basic-indexing view of x
            out.grad_fn._extra().name = "torch::autograd::CopySlices"
        return out
    plan = _Plan(lay)
    v = _reshape(_broadcast_to(v, tuple(plan.result)), plan.taken)
    region = x if lay.trivial else _ops.slice(x, tuple(lay.starts), tuple(lay.stops),
                                              tuple(lay.steps))
    put = _ops.index_put(plan.merge(region), plan.flat, v, plan.dim, accumulate)
    return _place(x, lay, plan.unmerge(put, sliced))


# ---- ops whose output shape depends on values (eager only) ---------------------------------
def nonzero(input: Tensor, *, as_tuple: bool = False):
    """Indices of the nonzero elements (torch.nonzero).

    Returns:
        int64 ``(n, ndim)``; with `as_tuple`, `ndim` int64 vectors of length n (a 0-d
        input counts as 1-d, as torch).
    Raises:
        TraceError: inside `tg.compile` (n depends on the values).
    """
    if _is_traced(input):
        raise _value_error("nonzero", input)
    a = input._data   # a device tensor's indices are found on the host and put back there
    if as_tuple:
        return tuple(Tensor(placed_like(i.astype(np.int64), a))
                     for i in np.nonzero(np.atleast_1d(host(a))))
    return Tensor(placed_like(np.argwhere(host(a)).astype(np.int64), a))


def masked_select(input: Tensor, mask: Tensor) -> Tensor:
    """The elements of `input` where `mask` holds, as a vector (torch.masked_select).

    `input` and `mask` broadcast.  Differentiable in `input`.
    Raises:
        DTypeError: `mask` is not bool.  ShapeError: shapes do not broadcast.
        TraceError: a mask whose values tg.compile does not know.
    """
    if not isinstance(mask, Tensor) or mask.dtype is not T.bool_:
        what = mask._type if isinstance(mask, Tensor) else type(mask).__name__
        raise DTypeError(f"masked_select: expected a bool mask, got {what}"
                         ).add_location(_state.user_location(2))
    shape = T.broadcast_shapes(input.shape, mask.shape)
    if shape is None:
        raise ShapeError(f"masked_select: input {input._type} and mask {mask._type} do not "
                         "broadcast").add_location(_state.user_location(2))
    if _is_traced(mask):
        raise _value_error("masked_select", mask)
    flat = Tensor(placed_like(np.flatnonzero(np.broadcast_to(host(mask._data), shape))
                              .astype(np.int64), input._data))
    x = input if input.shape == shape else _ops.expand(input, shape)
    return _ops.index_take(_ops.reshape(x, (-1,)), flat, 0)


def where(condition, input=None, other=None):
    """torch.where: `input` where `condition` holds, else `other`; with the condition alone,
    ``nonzero(condition, as_tuple=True)`` (eager only)."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() takes the condition alone, or condition, input and other")
    return _ops.where(condition, input, other)
