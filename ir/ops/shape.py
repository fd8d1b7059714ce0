"""Shape ops (reshape, permute, expand, cat, slice) and creation ops (full, arange)."""
from __future__ import annotations

import math

from .. import types as T
from ..errors import ShapeError
from ..registry import CHEAP, CREATION, INTERNAL, PROMOTE, REQUIRED, VIEW, defop
from ._common import as_shape, fmt_types, norm_dim

SHAPE = VIEW | CHEAP


# ---- reshape -------------------------------------------------------------
def _canon_reshape(types, *, shape):
    shape = as_shape("reshape", shape)
    numel = types[0].numel
    if shape.count(-1) > 1:
        raise ShapeError(f"reshape: only one dimension can be inferred, got shape {list(shape)}")
    if any(s < -1 for s in shape):
        raise ShapeError(f"reshape: invalid shape dimension in {list(shape)}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise ShapeError(f"reshape: shape '{list(shape)}' is invalid for input {types[0]} "
                             f"of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise ShapeError(f"reshape: shape '{list(shape)}' is invalid for input {types[0]} "
                         f"of size {numel}")
    return {"shape": shape}


defop("reshape", "input", attrs=(("shape", None),), canon=_canon_reshape, flags=SHAPE,
      infer=lambda types, *, shape: T.TensorType(shape, types[0].dtype), ref="torch.reshape",
      kernel=lambda xp, x, *, shape: xp.reshape(x, shape),
      vjp=lambda b, ct, x, out, *, shape: [b.reshape(ct, x.shape)])

defop("view", "input", attrs=(("shape", None),), ref="torch.Tensor.view",
      decomp=lambda ops, x, shape: ops.reshape(x, shape))


# ---- permute -------------------------------------------------------------
def _canon_permute(types, *, dims):
    ndim = types[0].ndim
    dims = tuple(norm_dim("permute", d, ndim) for d in as_shape("permute", dims))
    if sorted(dims) != list(range(ndim)):
        raise ShapeError(f"permute: dims {dims} are not a permutation of the {ndim} dims of {types[0]}")
    return {"dims": dims}


def _permute_vjp(b, ct, x, out, *, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return [b.permute(ct, tuple(inverse))]


defop("permute", "input", attrs=(("dims", None),), canon=_canon_permute, flags=SHAPE,
      infer=lambda types, *, dims: T.TensorType(tuple(types[0].shape[d] for d in dims),
                                                types[0].dtype),
      kernel=lambda xp, x, *, dims: xp.transpose(x, dims), vjp=_permute_vjp, ref="torch.permute")


def _transpose(ops, x, dim0, dim1):
    nd = len(x.shape)
    perm = list(range(nd))
    d0, d1 = norm_dim("transpose", dim0, nd), norm_dim("transpose", dim1, nd)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ops.permute(x, tuple(perm))


defop("transpose", "input", attrs=(("dim0", 0), ("dim1", 1)), decomp=_transpose,
      ref="torch.transpose")


# ---- expand --------------------------------------------------------------
def _canon_expand(types, *, size):
    size = as_shape("expand", size)
    shape = types[0].shape
    lead = len(size) - len(shape)
    if lead < 0:
        raise ShapeError(f"expand: the number of sizes provided ({len(size)}) must be greater or "
                         f"equal to the number of dimensions in the tensor {types[0]}")
    out = []
    for i, s in enumerate(size):
        old = shape[i - lead] if i >= lead else None
        if s == -1:
            if old is None:
                raise ShapeError(f"expand: -1 is not allowed for a new leading dimension ({list(size)})")
            s = old
        if old is not None and old != 1 and old != s:
            raise ShapeError(f"expand: the expanded size of the tensor ({s}) must match the existing "
                             f"size ({old}) at non-singleton dimension {i}; tensor {types[0]}, "
                             f"size {list(size)}")
        out.append(s)
    return {"size": tuple(out)}


defop("expand", "input", attrs=(("size", None),), canon=_canon_expand, flags=SHAPE,
      infer=lambda types, *, size: T.TensorType(size, types[0].dtype), ref="torch.Tensor.expand",
      kernel=lambda xp, x, *, size: xp.broadcast_to(x, size),
      vjp=lambda b, ct, x, out, *, size: [b.sum_to_size(ct, x.shape)])


# ---- squeeze / unsqueeze / flatten (reshape composites) ---------------------
def _squeeze(ops, x, dim=None):
    shape = tuple(x.shape)
    if dim is None:
        dims = {i for i, s in enumerate(shape) if s == 1}
    else:
        dims = {norm_dim("squeeze", d, len(shape)) for d in ((dim,) if isinstance(dim, int) else dim)}
        dims = {d for d in dims if shape[d] == 1} if shape else set()
    return ops.reshape(x, tuple(s for i, s in enumerate(shape) if i not in dims))


def _unsqueeze(ops, x, dim):
    shape = list(x.shape)
    d = norm_dim("unsqueeze", dim, len(shape) + 1)
    shape.insert(d, 1)
    return ops.reshape(x, tuple(shape))


def _flatten(ops, x, start_dim=0, end_dim=-1):
    shape = tuple(x.shape)
    if not shape:
        return ops.reshape(x, (1,))
    s, e = norm_dim("flatten", start_dim, len(shape)), norm_dim("flatten", end_dim, len(shape))
    if s > e:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    return ops.reshape(x, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


defop("squeeze", "input", attrs=(("dim", None),), decomp=_squeeze, ref="torch.squeeze")
defop("unsqueeze", "input", attrs=(("dim", 0),), decomp=_unsqueeze, ref="torch.unsqueeze")
defop("flatten", "input", attrs=(("start_dim", 0), ("end_dim", -1)), decomp=_flatten,
      ref="torch.flatten")


# ---- cat -----------------------------------------------------------------
def _canon_cat(types, *, dim):
    if not types:
        raise ValueError("cat: expected a non-empty list of tensors")
    return {"dim": norm_dim("cat", dim, types[0].ndim)}


def _cat_infer(types, *, dim):
    first = types[0]
    for t in types[1:]:
        if t.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(t.shape, first.shape))
                                       if i != dim):
            raise ShapeError(f"cat: sizes of tensors must match except in dimension {dim}; "
                             f"got {fmt_types(types)}")
    shape = list(first.shape)
    shape[dim] = sum(t.shape[dim] for t in types)
    return T.TensorType(tuple(shape), first.dtype)


def _cat_vjp(b, ct, *args, dim):
    *xs, out = args
    grads, offset = [], 0
    for x in xs:
        starts = [0] * ct.type.ndim
        stops = list(ct.shape)
        starts[dim], stops[dim] = offset, offset + x.shape[dim]
        grads.append(b.slice(ct, tuple(starts), tuple(stops), (1,) * ct.type.ndim))
        offset += x.shape[dim]
    return grads


defop("cat", "*tensors", attrs=(("dim", 0),), canon=_canon_cat, infer=_cat_infer, flags=PROMOTE,
      kernel=lambda xp, *xs, dim: xp.concatenate(xs, axis=dim), vjp=_cat_vjp, ref="torch.cat")


# ---- slice (basic indexing) -------------------------------------------------
def _slice_infer(types, *, starts, stops, steps):
    t = types[0]
    if not len(starts) == len(stops) == len(steps) == t.ndim:
        raise ShapeError(f"slice: starts/stops/steps must have one entry per dim of {t}")
    shape = tuple(max(0, -(-(e - s) // st)) for s, e, st in zip(starts, stops, steps))
    return T.TensorType(shape, t.dtype)


def _slices(starts, stops, steps):
    return tuple(slice(s, e, st) for s, e, st in zip(starts, stops, steps))


defop("slice", "input", attrs=(("starts", None), ("stops", None), ("steps", None)),
      infer=_slice_infer, flags=SHAPE | INTERNAL, ref="torch.Tensor.__getitem__ (slices)",
      kernel=lambda xp, x, *, starts, stops, steps: x[_slices(starts, stops, steps)],
      vjp=lambda b, ct, x, out, **a: [b.slice_backward(ct, x.shape, **a)])


def _slice_backward_np(xp, ct, *, shape, starts, stops, steps):
    out = xp.zeros(shape, dtype=ct.dtype)
    out[_slices(starts, stops, steps)] = ct
    return out


def _slice_backward_jax(xp, ct, *, shape, starts, stops, steps):
    return xp.zeros(shape, dtype=ct.dtype).at[_slices(starts, stops, steps)].set(ct)


# The adjoint of slice: place the cotangent in a zero tensor of the input's shape.
defop("slice_backward", "grad", attrs=(("shape", None), ("starts", None), ("stops", None),
                                       ("steps", None)),
      infer=lambda types, *, shape, **_: T.TensorType(tuple(shape), types[0].dtype),
      kernel=_slice_backward_np, kernels={"jax": _slice_backward_jax}, flags=CHEAP | INTERNAL,
      ref="torch slice_backward",
      vjp=lambda b, ct, g, out, *, shape, starts, stops, steps: [b.slice(ct, starts, stops, steps)])


# ---- creation --------------------------------------------------------------
defop("full", (), attrs=(("size", ()), ("fill_value", 0.0), ("dtype", T.float32)),
      canon=lambda types, *, size, fill_value, dtype: {
          "size": as_shape("full", size), "fill_value": fill_value, "dtype": T.as_dtype(dtype)},
      infer=lambda types, *, size, fill_value, dtype: T.TensorType(size, dtype),
      kernel=lambda xp, *, size, fill_value, dtype: xp.full(size, fill_value, dtype=dtype.numpy),
      vjp=lambda b, ct, out, **_: [], flags=CREATION | CHEAP | INTERNAL, ref="torch.full")


def _arange_infer(types, *, start, end, step, dtype):
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    return T.TensorType((max(0, math.ceil((end - start) / step)),), dtype)


defop("arange", (), attrs=(("start", 0), ("end", REQUIRED), ("step", 1),
                           ("dtype", T.int64)),
      infer=_arange_infer, flags=CREATION | CHEAP | INTERNAL, ref="torch.arange",
      kernel=lambda xp, *, start, end, step, dtype: xp.arange(start, end, step, dtype=dtype.numpy),
      vjp=lambda b, ct, out, **_: [])
