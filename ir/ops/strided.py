"""as_strided: a view of a tensor's storage at given sizes, strides and storage offset, and the
two primitives under its gradient and its writes.

In the IR a tensor's storage is its row-major flattening, so ``as_strided(x, size, stride,
offset)`` reads ``x.reshape(-1)[offset + sum_k i_k * stride_k]`` at each index ``i`` of
`size`.  What torch reads is the storage of the *base* tensor a view aliases (and the
default offset is the input's own): tracegrad/_strided.py maps a view's call onto its base's
storage and records the gradient torch gives.  Strides may overlap (several output
elements reading one storage element):

- `as_strided_backward(grad, shape, size, stride, storage_offset)`: the adjoint, every
  cotangent added into a zero storage of `shape` (overlapping reads accumulate, as torch's
  as_strided backward scatters into the input's storage);
- `as_strided_scatter(input, src, size, stride, storage_offset)`: `input` with the strided
  positions set to `src` (a write through an as_strided view; of overlapping writes the
  last in row-major order wins).

`unfold` (torch.Tensor.unfold) is the one composite here: its windows are an as_strided view
of the input's own row-major value, so writes through it reach the input like any view.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import ShapeError
from ..registry import CHEAP, COMPLEX, INTERNAL, LINEAR, VIEW, defcomposite, defop
from ._common import norm_dim
from .index import located

GEOMETRY = (("size", None, K.SHAPE), ("stride", None, K.INTS), ("storage_offset", 0, K.SIZE))


def geometry_error(size, stride, storage_offset, numel: int, itemsize: int) -> str | None:
    """torch 2.13's message for a strided view that `numel` storage elements of `itemsize`
    bytes cannot hold (its checks in its order), or None when it fits."""
    size, stride = list(size), list(stride)
    if len(size) != len(stride):
        return "mismatch in length of strides and shape"
    if any(s < 0 for s in stride):
        return f"as_strided: Negative strides are not supported at the moment, got strides: {stride}"
    if storage_offset < 0:
        return f"Tensor: invalid storage offset {storage_offset}"
    if any(s < 0 for s in size):
        return f"Storage size calculation overflowed with sizes={size} and strides={stride}"
    need = 0 if 0 in size else storage_offset + 1 + sum((s - 1) * st for s, st in zip(size, stride))
    if need > numel:
        return (f"setStorage: sizes {size}, strides {stride}, storage offset {storage_offset}, "
                f"and itemsize {itemsize} requiring a storage size of {need * itemsize} are out "
                f"of bounds for storage of size {numel * itemsize}")
    return None


def _canon(types, *, size, stride, storage_offset):
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    storage = types[-1] if len(types) == 1 else types[0]
    why = geometry_error(size, stride, int(storage_offset), storage.numel,
                         storage.dtype.numpy.itemsize)
    if why is not None:
        raise ShapeError(f"as_strided: {why} (storage {storage})")
    return {"size": size, "stride": stride, "storage_offset": int(storage_offset)}


@functools.lru_cache(maxsize=256)
def storage_index(size: tuple, stride: tuple, storage_offset: int) -> tuple[np.ndarray, bool]:
    """The storage position of every element of the view (int64, shape `size`, read-only)
    and whether no position repeats."""
    idx = np.full(size, storage_offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * st).reshape(shape)
    idx.setflags(write=False)
    flat = idx.reshape(-1)
    return idx, len(np.unique(flat)) == flat.size


def _as_strided_np(xp, x, *, size, stride, storage_offset):
    flat = np.ascontiguousarray(x).reshape(-1)
    if 0 in size:
        return np.zeros(size, x.dtype)
    # a NumPy view with torch's strides (so is_contiguous / view read them), read-only
    return np.lib.stride_tricks.as_strided(flat[storage_offset:], size,
                                           tuple(s * flat.itemsize for s in stride),
                                           writeable=False)


def _as_strided_jax(xp, x, *, size, stride, storage_offset):
    if 0 in size:
        return xp.zeros(size, x.dtype)
    return xp.reshape(x, (-1,))[storage_index(size, stride, storage_offset)[0]]


def _as_strided_inverse(ops, parent, child, *, size, stride, storage_offset):
    if any(st == 0 and n > 1 for n, st in zip(size, stride)):   # torch's internal-overlap error
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    return ops.as_strided_scatter(parent, child, size, stride, storage_offset)


defop("as_strided", "input", attrs=GEOMETRY, canon=_canon, flags=VIEW | CHEAP | COMPLEX,
      infer=lambda types, *, size, stride, storage_offset: T.TensorType(size, types[0].dtype),
      kernel=_as_strided_np, kernels={"jax": _as_strided_jax},
      vjp=lambda b, ct, x, out, **g: [b.as_strided_backward(ct, x.shape, **g)], jvp=LINEAR,
      view_inverse=_as_strided_inverse,
      ref="torch.as_strided (on the input's row-major storage; views: tracegrad/_strided.py)")


# ---- the adjoint: scatter-add into a zero storage ----------------------------------------------
def _backward_infer(types, *, shape, size, stride, storage_offset):
    if types[0].shape != tuple(size):
        raise ShapeError(f"as_strided_backward: grad must have the view's size {list(size)}, "
                         f"got {types[0]}")
    return T.TensorType(tuple(shape), types[0].dtype)


def _backward_np(xp, ct, *, shape, size, stride, storage_offset):
    out = np.zeros(math.prod(shape), ct.dtype)
    if 0 not in size:
        idx, unique = storage_index(size, stride, storage_offset)
        if unique:
            out[idx.reshape(-1)] = ct.reshape(-1)
        else:
            np.add.at(out, idx.reshape(-1), ct.reshape(-1))
    return out.reshape(shape)


def _backward_jax(xp, ct, *, shape, size, stride, storage_offset):
    out = xp.zeros(math.prod(shape), ct.dtype)
    if 0 not in size:
        idx = storage_index(size, stride, storage_offset)[0].reshape(-1)
        out = out.at[idx].add(xp.reshape(ct, (-1,)))
    return xp.reshape(out, shape)


defop("as_strided_backward", "grad", attrs=(("shape", None, K.SHAPE),) + GEOMETRY,
      canon=lambda types, *, shape, **g: {"shape": tuple(shape), **_canon(
          [T.TensorType(tuple(shape), types[0].dtype)], **g)},
      infer=_backward_infer, kernel=_backward_np, kernels={"jax": _backward_jax},
      flags=CHEAP | INTERNAL | COMPLEX, ref="torch as_strided_backward (scatter-add)",
      vjp=lambda b, ct, g, out, *, shape, **geo: [b.as_strided(ct, **geo)], jvp=LINEAR)


# ---- writes through an as_strided view -----------------------------------------------------
def _scatter_infer(types, *, size, stride, storage_offset):
    x, src = types
    if src.shape != tuple(size) or src.dtype is not x.dtype:
        raise ShapeError(f"as_strided_scatter: src must be {T.TensorType(tuple(size), x.dtype)}, "
                         f"got {src}")
    return x


def _scatter_kernel(xp, x, src, *, size, stride, storage_offset):
    flat = xp.reshape(x, (-1,))
    if 0 not in size:
        idx = storage_index(size, stride, storage_offset)[0].reshape(-1)
        if xp is np:
            flat = flat.copy()
            flat[idx] = src.reshape(-1)
        else:
            flat = flat.at[idx].set(xp.reshape(src, (-1,)))
    return xp.reshape(flat, x.shape)


def _scatter_vjp(b, ct, x, src, out, **g):
    # torch's as_strided_scatter backward: the written positions' cotangent goes to src
    # (every repeated write reads it back), the rest to the input
    return [b.as_strided_scatter(ct, b.full(src.shape, 0, ct.dtype), **g), b.as_strided(ct, **g)]


defop("as_strided_scatter", "input, src", attrs=GEOMETRY, canon=_canon, infer=_scatter_infer,
      kernel=_scatter_kernel, flags=CHEAP | INTERNAL | COMPLEX, vjp=_scatter_vjp, jvp=LINEAR,
      ref="torch.as_strided_scatter (on the input's row-major storage)")


# ---- unfold: sliding windows along one dim -----------------------------------------------------
def _int_arg(ops, value, arg: str, position: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise located(ops, TypeError(f"unfold(): argument '{arg}' (position {position}) must be "
                                     f"int, not {type(value).__name__}"))
    return int(value)


def _unfold(ops, x, dimension, size, step):
    """Every window of `size` elements along `dimension`, `step` apart, as a new last dim of
    that size (torch.Tensor.unfold; the dim itself keeps the number of windows,
    ``(n - size) // step + 1``): a view of `x` (UnfoldBackward0).  A 0-d `x` is one dim of
    size 1.  Windows overlap when `step` < `size`; their gradient adds up.

    Raises:
        IndexError: `dimension` out of range; TypeError: a non-int argument;
        RuntimeError: `size` < 0, `size` larger than the dim, `step` <= 0 (torch's messages).
    """
    shape = tuple(x.shape)
    d = norm_dim("unfold", _int_arg(ops, dimension, "dimension", 1), len(shape))
    size, step = _int_arg(ops, size, "size", 2), _int_arg(ops, step, "step", 3)
    n = shape[d] if shape else 1
    if size < 0:
        raise located(ops, RuntimeError(f"unfold: size is {size} but must be >= 0"))
    if size > n:
        raise located(ops, RuntimeError(f"unfold: maximum size for tensor at dimension {d} is "
                                        f"{n} but size is {size}"))
    if step <= 0:
        raise located(ops, RuntimeError(f"unfold: step is {step} but must be > 0"))
    rows = [math.prod(shape[k + 1:]) for k in range(len(shape))] or [1]   # row-major strides
    windows = (n - size) // step + 1
    out_shape = shape[:d] + (windows,) + shape[d + 1:] + (size,) if shape else (size,)
    strides = rows[:d] + [rows[d] * step] + rows[d + 1:] + [rows[d]] if shape else [1]
    return ops.as_strided(x, out_shape, tuple(strides), 0)


defcomposite("unfold", "input: Tensor, dimension, size, step", _unfold, flags=COMPLEX | VIEW,
             ref="torch.Tensor.unfold", node_name="UnfoldBackward0")
