"""Tensor.__getitem__: basic slicing (ints, slices, None, Ellipsis) and integer arrays.

Basic indexing becomes one `slice` op plus a `reshape`; integer-array
indices become one `index_take` (several arrays on consecutive dims are combined
into one flat index, broadcast as NumPy does).  Follows torch's indexing.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.graph import Value

from . import _ops
from .tensor import Tensor


def _as_index_tensor(k) -> Tensor | None:
    if isinstance(k, Tensor):
        if k.dtype is T.bool_:
            raise NotImplementedError("indexing with a boolean mask is not supported yet; "
                                      "use tg.where or integer indices")
        if k.dtype.category != T.INT:
            raise IndexError(f"tensors used as indices must be long, int or bool tensors, "
                             f"got {k.dtype.name}")
        return k
    if isinstance(k, (list, np.ndarray)):
        arr = np.asarray(k)
        if arr.dtype == np.bool_:
            raise NotImplementedError("indexing with a boolean mask is not supported yet")
        if arr.dtype.kind not in "iu":
            raise IndexError(f"index arrays must hold integers, got dtype {arr.dtype}")
        return Tensor(arr.astype(np.int64))
    return None


def _normalize_index(idx: Tensor, size: int, dim: int) -> Tensor:
    """Bounds-check (eagerly) and wrap negative indices, as torch does."""
    if not isinstance(idx._data, Value):
        a = idx._data
        if a.size and (a.max() >= size or a.min() < -size):
            bad = a.max() if a.max() >= size else a.min()
            raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
        if a.size and a.min() < 0:
            return Tensor(np.where(a < 0, a + size, a))
        return idx
    return _ops.where(_ops.lt(idx, 0), _ops.add(idx, size), idx)


def getitem(x: Tensor, key):
    if not isinstance(key, tuple):
        key = (key,)
    n_consumed = sum(0 if k is None or k is Ellipsis else 1 for k in key)
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} "
                         f"(got {n_consumed} indices for shape {list(x.shape)})")
    expanded = []
    for k in key:
        if k is Ellipsis:
            expanded.extend([slice(None)] * (x.ndim - n_consumed))
        else:
            expanded.append(k)
    expanded.extend([slice(None)] * (x.ndim - sum(k is not None for k in expanded)))

    shape = x.shape
    starts, stops, steps = [], [], []
    out_shape = []          # shape after slicing, ints dropped, None inserted
    advanced = []           # (position in out_shape, index tensor, size, source dim)
    dim = 0
    for k in expanded:
        if k is None:
            out_shape.append(1)
            continue
        size = shape[dim]
        idx_tensor = _as_index_tensor(k)
        if idx_tensor is not None:
            starts.append(0), stops.append(size), steps.append(1)
            advanced.append((len(out_shape), _normalize_index(idx_tensor, size, dim), size, dim))
            out_shape.append(size)
        elif isinstance(k, slice):
            start, stop, step = k.indices(size)
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero (negative slice steps are "
                                 "not supported, as in torch)")
            starts.append(start), stops.append(max(stop, start)), steps.append(step)
            out_shape.append(max(0, -(-(max(stop, start) - start) // step)))
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            i = int(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            i %= size
            starts.append(i), stops.append(i + 1), steps.append(1)
        else:
            raise TypeError(f"tensor indices must be ints, slices, None, Ellipsis or integer "
                            f"tensors; got {type(k).__name__}")
        dim += 1

    out = x
    if (tuple(starts), tuple(stops), tuple(steps)) != ((0,) * x.ndim, shape, (1,) * x.ndim):
        out = _ops.slice(out, tuple(starts), tuple(stops), tuple(steps))
    if tuple(out_shape) != out.shape:
        out = _ops.reshape(out, tuple(out_shape))
    if not advanced:
        return out
    positions = [p for p, *_ in advanced]
    if positions != list(range(positions[0], positions[0] + len(positions))):
        raise NotImplementedError("integer-array indices separated by slices are not supported "
                                  "yet; index consecutive dimensions")
    first = positions[0]
    if len(advanced) == 1:
        return _ops.index_take(out, advanced[0][1], first)
    # Several index arrays on consecutive dims: merge those dims and index with
    # the row-major flat index, which broadcasts the index arrays as NumPy does.
    flat = None
    for _, idx, size, _ in advanced:
        flat = idx if flat is None else _ops.add(_ops.mul(flat, size), idx)
    merged = out.shape[:first] + (-1,) + out.shape[first + len(advanced):]
    return _ops.index_take(_ops.reshape(out, merged), flat, first)
