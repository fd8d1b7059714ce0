"""Shape ops: reshape, view, permute, transpose, expand, squeeze/unsqueeze/flatten, cat, stack,
slice (basic indexing) and its scatter, narrow/split/chunk/unbind/movedim/unflatten/t, and the
identity-like checkpoint_name, stop_gradient and clone.  Flip/roll/repeat/tile: rearrange.py; triangles and
diagonals: diagonal.py; pad: pad.py; full/arange: creation.py."""
from __future__ import annotations

import math
import operator

from .. import attr_kinds as K
from .. import types as T
from ..errors import ShapeError
from ..registry import (AUTOCAST_PROMOTE, CHEAP, COMPLEX, INTERNAL, LINEAR, MULTI_VIEW, NONDIFF,
                        PROMOTE, VIEW, Fusion, defcomposite, defop)
from ._common import as_shape, fmt_types, norm_dim
from ._rewrites import first_of, same_type_identity
from .index import located, write_at

SHAPE = VIEW | CHEAP | COMPLEX   # every shape op also moves complex64/complex128 values


# ---- writes through views (`OpDef.view_inverse`): the parent's new value --------------------
def _reshape_inverse(ops, parent, child, *, shape):
    return ops.reshape(child, ops.type_of(parent).shape)


def _permute_inverse(ops, parent, child, *, dims):
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return ops.permute(child, tuple(inverse))


def _slice_inverse(ops, parent, child, *, starts, stops, steps):
    shape = ops.type_of(parent).shape
    placed = ops.slice_backward(child, shape, starts, stops, steps)
    mask = ops.slice_backward(ops.full(ops.type_of(child).shape, True, T.bool_), shape,
                              starts, stops, steps)
    return ops.where(mask, placed, parent)


def _expand_inverse(ops, parent, child, *, size):
    raise RuntimeError("unsupported operation: more than one element of the written-to "
                       "tensor refers to a single memory location (an expanded view). "
                       "Please clone() the tensor before performing the operation.")


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


def _reshape_twice(b, n, ins):
    """``reshape(reshape(x))`` -> one reshape."""
    src = ins[0].node
    if src is not None and src.op == "reshape":
        return b.reshape(src.inputs[0], n.attrs["shape"])
    return None


defop("reshape", "input", attrs=(("shape", None, K.SHAPE),), canon=_canon_reshape, flags=SHAPE,
      infer=lambda types, *, shape: T.TensorType(shape, types[0].dtype), ref="torch.reshape",
      kernel=lambda xp, x, *, shape: xp.reshape(x, shape),
      vjp=lambda b, ct, x, out, *, shape: [b.reshape(ct, x.shape)], jvp=LINEAR,
      view_inverse=_reshape_inverse, simplify=first_of(same_type_identity, _reshape_twice),
      node_name="ViewBackward0")   # torch's name for a reshape that views (Tensor.reshape
                                  # names a copying one UnsafeViewBackward0)

defcomposite("view", "input: Tensor, shape=None", lambda ops, x, shape: ops.reshape(x, shape),
             ref="torch.Tensor.view", flags=COMPLEX | VIEW)


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


def _simplify_permute(b, n, ins):
    """The identity permutation -> x; ``permute(permute(x))`` -> one permute."""
    dims = n.attrs["dims"]
    if dims == tuple(range(len(dims))):
        return ins[0]
    src = ins[0].node
    if src is not None and src.op == "permute":
        inner = src.attrs["dims"]
        return b.permute(src.inputs[0], tuple(inner[d] for d in dims))
    return None


defop("permute", "input", attrs=(("dims", None, K.DIMS_OPT),), canon=_canon_permute, flags=SHAPE,
      infer=lambda types, *, dims: T.TensorType(tuple(types[0].shape[d] for d in dims),
                                                types[0].dtype),
      kernel=lambda xp, x, *, dims: xp.transpose(x, dims), vjp=_permute_vjp, ref="torch.permute",
      jvp=LINEAR,
      view_inverse=_permute_inverse, simplify=_simplify_permute)


def _transpose(ops, x, dim0, dim1):
    nd = len(x.shape)
    perm = list(range(nd))
    d0, d1 = norm_dim("transpose", dim0, nd), norm_dim("transpose", dim1, nd)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return ops.permute(x, tuple(perm))


defcomposite("transpose", "input: Tensor, dim0=0, dim1=1", _transpose, ref="torch.transpose",
             flags=COMPLEX | VIEW)


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


defop("expand", "input", attrs=(("size", None, K.SHAPE),), canon=_canon_expand, flags=SHAPE,
      infer=lambda types, *, size: T.TensorType(size, types[0].dtype), ref="torch.Tensor.expand",
      kernel=lambda xp, x, *, size: xp.broadcast_to(x, size),
      vjp=lambda b, ct, x, out, *, size: [b.sum_to_size(ct, x.shape)], jvp=LINEAR,
      fusion=Fusion.BROADCAST,
      view_inverse=_expand_inverse, simplify=same_type_identity)


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


defcomposite("squeeze", "input: Tensor, dim=None", _squeeze, ref="torch.squeeze", flags=COMPLEX | VIEW)
defcomposite("unsqueeze", "input: Tensor, dim=0", _unsqueeze, ref="torch.unsqueeze", flags=COMPLEX | VIEW)
defcomposite("flatten", "input: Tensor, start_dim=0, end_dim=-1", _flatten, ref="torch.flatten",
             flags=COMPLEX | VIEW, node_name="ViewBackward0")


# ---- cat -----------------------------------------------------------------
def _canon_cat(types, *, dim):
    if not types:
        raise ValueError("cat: expected a non-empty list of tensors")
    for i, t in enumerate(types):
        if t.ndim == 0:   # torch 2.13's words (a RuntimeError there; a shape error here)
            raise ShapeError(f"cat: zero-dimensional tensor (at position {i}) cannot be "
                             f"concatenated; got {fmt_types(types)} (stack them instead)")
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


defop("cat", "*tensors", attrs=(("dim", 0, K.DIM),), canon=_canon_cat, infer=_cat_infer,
      flags=PROMOTE | COMPLEX,
      kernel=lambda xp, *xs, dim: xp.concatenate(xs, axis=dim), vjp=_cat_vjp, ref="torch.cat",
      jvp=LINEAR,
      autocast={"cpu": AUTOCAST_PROMOTE, "cuda": AUTOCAST_PROMOTE})


# ---- slice (basic indexing) -------------------------------------------------
def _slice_infer(types, *, starts, stops, steps):
    t = types[0]
    if not len(starts) == len(stops) == len(steps) == t.ndim:
        raise ShapeError(f"slice: starts/stops/steps must have one entry per dim of {t}")
    if any(st <= 0 for st in steps):
        raise ValueError(f"slice: steps must be positive, got {tuple(steps)} for {t}")
    # the length the kernel's x[start:stop:step] gives (bounds clipped as Python clips them)
    shape = tuple(len(range(*slice(s, e, st).indices(n)))
                  for s, e, st, n in zip(starts, stops, steps, t.shape))
    return T.TensorType(shape, t.dtype)


def _slices(starts, stops, steps):
    return tuple(slice(s, e, st) for s, e, st in zip(starts, stops, steps))


defop("slice", "input", attrs=(("starts", None, K.INTS), ("stops", None, K.INTS), ("steps", None, K.INTS)),
      infer=_slice_infer, flags=SHAPE | INTERNAL, ref="torch.Tensor.__getitem__ (slices)",
      kernel=lambda xp, x, *, starts, stops, steps: x[_slices(starts, stops, steps)],
      vjp=lambda b, ct, x, out, **a: [b.slice_backward(ct, x.shape, **a)], jvp=LINEAR,
      view_inverse=_slice_inverse, simplify=same_type_identity)


def _slice_backward_np(xp, ct, *, shape, starts, stops, steps):
    out = xp.zeros(shape, dtype=ct.dtype)
    out[_slices(starts, stops, steps)] = ct
    return out


def _slice_backward_jax(xp, ct, *, shape, starts, stops, steps):
    return xp.zeros(shape, dtype=ct.dtype).at[_slices(starts, stops, steps)].set(ct)


def _slice_backward_infer(types, *, shape, starts, stops, steps):
    out = T.TensorType(tuple(shape), types[0].dtype)
    want = _slice_infer([out], starts=starts, stops=stops, steps=steps)
    if types[0] != want:
        raise ShapeError(f"slice_backward: grad must be {want}, the slice of {out}, "
                         f"got {types[0]}")
    return out


# The adjoint of slice: place the cotangent in a zero tensor of the input's shape.
defop("slice_backward", "grad", attrs=(("shape", None, K.SHAPE), ("starts", None, K.INTS), ("stops", None, K.INTS),
                                       ("steps", None, K.INTS)),
      infer=_slice_backward_infer, kernel=_slice_backward_np, kernels={"jax": _slice_backward_jax},
      flags=CHEAP | INTERNAL | COMPLEX,
      ref="torch slice_backward",
      vjp=lambda b, ct, g, out, *, shape, starts, stops, steps: [b.slice(ct, starts, stops, steps)],
      jvp=LINEAR)


# ---- slice_scatter (setitem, constant pad) -------------------------------------------------
def _slice_scatter_infer(types, *, starts, stops, steps):
    x, src = types
    want = _slice_infer([x], starts=starts, stops=stops, steps=steps)
    if src != want:
        raise ShapeError(f"slice_scatter: src must be {want} to fill the slice of {x}, got {src}")
    return x


def _slice_scatter_vjp(b, ct, x, src, out, **a):
    return [b.slice_scatter(ct, b.full(src.shape, 0, ct.dtype), **a), b.slice(ct, **a)]


# out = x; out[starts:stops:steps] = src, every dim at once
defop("slice_scatter", "input, src", attrs=(("starts", None, K.INTS), ("stops", None, K.INTS), ("steps", None, K.INTS)),
      infer=_slice_scatter_infer, flags=CHEAP | INTERNAL | COMPLEX, vjp=_slice_scatter_vjp,
      ref="torch.slice_scatter (all dims at once)",
      kernel=lambda xp, x, src, *, starts, stops, steps: write_at(
          xp, x, _slices(starts, stops, steps), src), jvp=LINEAR)


# ---- views: narrow, split, chunk, unbind, movedim, unflatten, t ------------------------------
def _dim_size(ops, name, x, dim):
    """(dim made non-negative, its size); torch's error for a 0-d tensor."""
    if not x.shape:
        raise located(ops, ShapeError(f"{name}: expects at least a 1-dimensional tensor, got "
                                      f"{ops.type_of(x)}"))
    d = norm_dim(name, dim, len(x.shape))
    return d, x.shape[d]


def _narrow_to(ops, x, d, start, stop):
    nd = len(x.shape)
    starts, stops = [0] * nd, list(x.shape)
    starts[d], stops[d] = start, stop
    return ops.slice(x, tuple(starts), tuple(stops), (1,) * nd)


def _pieces(ops, x, d, sizes, keepdim=True):
    return tuple(ops.split_pieces(x, d, tuple(sizes), keepdim))


# ---- split_pieces: the outputs of split / chunk / unbind, one node ---------------------------
# torch records one backward node for all of a split's outputs (SplitBackward0, output_nr
# 0, 1, ...; a hook of an output no op used is called with None); each output is a view
# whose chain (`view_pieces`) is the slice (unbind: and the reshape dropping the dim) that
# makes it alone, for replays and writes through it.
def _pieces_bounds(sizes):
    start = 0
    for s in sizes:
        yield start, start + s
        start += s


def _split_pieces_infer(types, *, dim, sizes, keepdim):
    t = types[0]
    if not 0 <= dim < t.ndim:
        raise ShapeError(f"split_pieces: dim {dim} out of range for {t}")
    if any(s < 0 for s in sizes) or sum(sizes) != t.shape[dim]:
        raise ShapeError(f"split_pieces: sizes {tuple(sizes)} must be non-negative and sum to "
                         f"the size of dim {dim} of {t}")
    if not keepdim and any(s != 1 for s in sizes):
        raise ShapeError(f"split_pieces: keepdim=False (unbind) takes pieces of size 1, got "
                         f"{tuple(sizes)}")
    rest = t.shape[:dim] + t.shape[dim + 1:]
    return tuple(T.TensorType(t.shape[:dim] + (s,) + t.shape[dim + 1:] if keepdim else rest,
                              t.dtype) for s in sizes)


def _split_pieces_kernel(xp, x, *, dim, sizes, keepdim):
    lead = (slice(None),) * dim
    return tuple(x[lead + ((slice(a, b),) if keepdim else (a,))] for a, b in _pieces_bounds(sizes))


def _split_pieces_vjp(b, ct, x, *outs, dim, sizes, keepdim):
    cts = ct if isinstance(ct, tuple) else (ct,)   # zeros where an output got no cotangent
    if not keepdim:
        shape = x.shape[:dim] + (1,) + x.shape[dim + 1:]
        cts = tuple(b.reshape(c, shape) for c in cts)
    return [cts[0] if len(cts) == 1 else b.cat(list(cts), dim=dim)]


def _split_pieces_view_pieces(shape, i, *, dim, sizes, keepdim):
    a, b = list(_pieces_bounds(sizes))[i]
    nd = len(shape)
    starts, stops = [0] * nd, list(shape)
    starts[dim], stops[dim] = a, b
    chain = (("slice", {"starts": tuple(starts), "stops": tuple(stops), "steps": (1,) * nd}),)
    if not keepdim:
        chain += (("reshape", {"shape": tuple(shape[:dim]) + tuple(shape[dim + 1:])}),)
    return chain


defop("split_pieces", "input", attrs=(("dim", None, K.DIM), ("sizes", None, K.INTS),
                                      ("keepdim", True, K.BOOL)),
      canon=lambda types, *, dim, sizes, keepdim: {
          "dim": norm_dim("split", dim, types[0].ndim), "sizes": tuple(sizes),
          "keepdim": bool(keepdim)},
      infer=_split_pieces_infer, kernel=_split_pieces_kernel, vjp=_split_pieces_vjp,
      jvp=LINEAR, flags=SHAPE | INTERNAL, view_pieces=_split_pieces_view_pieces,
      ref="torch.split / torch.unbind (the outputs)", aten_name="aten::split_with_sizes")


def _narrow(ops, x, dim, start, length):
    d, n = _dim_size(ops, "narrow", x, dim)
    start, length = operator.index(start), operator.index(length)  # 0-d int tensors too (eager)
    if not -n <= start <= n:
        raise located(ops, IndexError(f"narrow: start out of range (expected to be in range of "
                                      f"[{-n}, {n}], but got {start})"))
    start += n if start < 0 else 0
    if length < 0 or start + length > n:
        raise located(ops, ValueError(f"narrow: start ({start}) + length ({length}) does not fit "
                                      f"dimension {d} of size {n} of {ops.type_of(x)}"))
    return _narrow_to(ops, x, d, start, start + length)


def _split(ops, x, split_size_or_sections, dim=0):
    d, n = _dim_size(ops, "split", x, dim)
    s = split_size_or_sections
    if isinstance(s, int):
        if s < 0 or (s == 0 and n):
            raise located(ops, ValueError(f"split: split_size must be positive (0 only for a "
                                          f"dimension of size 0), got {s} for size {n}"))
        sizes = ([s] * (n // s) + ([n % s] if n % s else [])) if s else []
        sizes = sizes or [0]
    else:   # torch's split with a list is split_with_sizes (its node: SplitWithSizes)
        return ops.split_with_sizes(x, s, d)
    return _pieces(ops, x, d, sizes)


def _split_with_sizes(ops, x, split_sizes, dim=0):
    d, n = _dim_size(ops, "split_with_sizes", x, dim)
    sizes = list(as_shape("split_with_sizes", split_sizes))
    if sum(sizes) != n or any(v < 0 for v in sizes):
        raise located(ops, ShapeError(
            f"split_with_sizes: split_sizes must sum exactly to {n} (the size of dimension {d} "
            f"of {ops.type_of(x)}), got split_sizes={sizes}"))
    return _pieces(ops, x, d, sizes)


def _chunk(ops, x, chunks, dim=0):
    if chunks <= 0:
        raise located(ops, ValueError(f"chunk: expects `chunks` to be greater than 0, got: "
                                      f"{chunks}"))
    d, n = _dim_size(ops, "chunk", x, dim)
    if n == 0:
        return _pieces(ops, x, d, [0] * chunks)   # torch: `chunks` empty pieces
    return _split(ops, x, -(-n // chunks), d)


def _unbind(ops, x, dim=0):
    d, n = _dim_size(ops, "unbind", x, dim)
    return _pieces(ops, x, d, [1] * n, keepdim=False) if n else ()


def _movedim(ops, x, source, destination):
    nd = len(x.shape)
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise located(ops, ValueError(f"movedim: source {list(src)} and destination {list(dst)} "
                                      "must name the same number of dims"))
    src = tuple(norm_dim("movedim", d, nd) for d in src)
    dst = tuple(norm_dim("movedim", d, nd) for d in dst)
    for what, dims in (("source", src), ("destination", dst)):
        if len(set(dims)) != len(dims):
            raise located(ops, ValueError(f"movedim: repeated dim in `{what}` ({list(dims)})"))
    order = [None] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    return ops.permute(x, tuple(next(rest) if o is None else o for o in order))


def _unflatten(ops, x, dim, sizes):
    d, n = _dim_size(ops, "unflatten", x, dim)
    sizes = as_shape("unflatten", sizes)
    if not sizes:
        raise located(ops, ValueError("unflatten: sizes must be non-empty"))
    known = math.prod(s for s in sizes if s != -1)
    if sizes.count(-1) == 1 and known and n % known == 0:
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    if math.prod(sizes) != n or any(s < 0 for s in sizes):
        raise located(ops, ShapeError(f"unflatten: sizes {list(sizes)} don't multiply up to the "
                                      f"size of dim {d} ({n}) of {ops.type_of(x)}"))
    return ops.reshape(x, tuple(x.shape[:d]) + sizes + tuple(x.shape[d + 1:]))


def _t(ops, x):
    nd = len(x.shape)
    if nd > 2:
        raise located(ops, ShapeError(f"t: expects a tensor with <= 2 dimensions, but self is "
                                      f"{nd}D ({ops.type_of(x)})"))
    return ops.permute(x, (1, 0) if nd == 2 else tuple(range(nd)))   # 0-d/1-d: a view of x


defcomposite("narrow", "input: Tensor, dim, start, length", _narrow, ref="torch.narrow",
             flags=COMPLEX | VIEW, node_name="SliceBackward0")
defcomposite("split", "tensor: Tensor, split_size_or_sections, dim=0", _split, ref="torch.split",
             flags=COMPLEX | VIEW | MULTI_VIEW)
defcomposite("split_with_sizes", "input: Tensor, split_sizes, dim=0", _split_with_sizes,
             ref="torch.split_with_sizes", flags=COMPLEX | VIEW | MULTI_VIEW)
defcomposite("chunk", "input: Tensor, chunks, dim=0", _chunk, ref="torch.chunk",
             flags=COMPLEX | VIEW | MULTI_VIEW, node_name="SplitBackward0")
defcomposite("unbind", "input: Tensor, dim=0", _unbind, ref="torch.unbind",
             flags=COMPLEX | VIEW | MULTI_VIEW, node_inputs=("input",))
defcomposite("movedim", "input: Tensor, source, destination", _movedim, ref="torch.movedim",
             flags=COMPLEX | VIEW, node_name="PermuteBackward0")
defcomposite("unflatten", "input: Tensor, dim, sizes", _unflatten, ref="torch.unflatten",
             flags=COMPLEX | VIEW, node_name="ViewBackward0")
defcomposite("t", "input: Tensor", _t, ref="torch.t", flags=COMPLEX | VIEW)


# ---- stack ---------------------------------------------------------------------------------
def _stack(ops, *tensors, dim=0):
    if not tensors:
        raise located(ops, ValueError("stack: expects a non-empty list of tensors"))
    for i, t in enumerate(tensors):
        if not ops.is_operand(t):
            raise located(ops, TypeError(f"stack(): expected a list of tensors, got "
                                         f"{type(t).__name__} at entry {i}"))
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise located(ops, ShapeError(
                f"stack: expects each tensor to be equal size, but got "
                f"{ops.type_of(tensors[0])} at entry 0 and {ops.type_of(t)} at entry {i}"))
    d = norm_dim("stack", dim, len(tensors[0].shape) + 1)
    return ops.cat([ops.unsqueeze(t, d) for t in tensors], d)


defcomposite("stack", "*tensors: Tensor, dim=0", _stack, ref="torch.stack", flags=COMPLEX,
             autocast={"cpu": AUTOCAST_PROMOTE, "cuda": AUTOCAST_PROMOTE}, node_inputs=("tensors",))


# ---- naming for rematerialization policies ----------------------------------------
# the op passes/partition.py's save_names policy looks for (as HOST for host calls)
CHECKPOINT_NAME = "checkpoint_name"
defop(CHECKPOINT_NAME, "input", attrs=(("name", "", K.STRING),), flags=CHEAP | INTERNAL | COMPLEX,
      infer=lambda types, *, name: types[0], ref="jax.ad_checkpoint.checkpoint_name",
      kernel=lambda xp, x, *, name: x,
      vjp=lambda b, ct, x, out, *, name: [ct], jvp=LINEAR,
      fusion=None)


# ---- no gradient past this point (torch's detach as an op; jax.lax.stop_gradient) ------------
# what a composite with no gradient of its own (floor_divide, isclose) applies to its operands,
# so that eagerly no tape node is recorded and traced programs carry no gradient through it
defop("stop_gradient", "input", flags=CHEAP | INTERNAL | COMPLEX,
      infer=lambda types: types[0], kernel=lambda xp, x: x, vjp=NONDIFF,
      ref="jax.lax.stop_gradient (torch.Tensor.detach)")

# a traced in-place write autograd does not see (under no_grad, through .data or detach()):
# the tensor takes `new`'s value but keeps its history, so the gradient goes to `input`, the
# value before the write, as eagerly (torch's write into the buffer a grad_fn still owns)
def _untracked_write_infer(types):
    x, new = types
    if new != x:   # the tensor keeps its type: the new value must have it
        raise ShapeError(f"untracked_write: the new value {new} must have the type of the "
                         f"tensor written, {x}")
    return x


defop("untracked_write", "input, new", flags=CHEAP | INTERNAL | COMPLEX,
      infer=_untracked_write_infer, kernel=lambda xp, x, new: new,
      vjp=lambda b, ct, x, new, out: [ct, None], jvp=lambda b, t, x, new, out: t[0],
      ref="x + jax.lax.stop_gradient(new - x), exactly new (torch: an untracked in-place write)")


# ---- copies ----------------------------------------------------------------------------
defop("clone", "input", attrs=(("memory_format", None, K.LITERAL),), flags=CHEAP | COMPLEX,
      infer=lambda types, **_: types[0], ref="torch.clone",
      kernel=lambda xp, x, *, memory_format: xp.array(x, copy=True),
      vjp=lambda b, ct, x, out, **_: [ct], jvp=LINEAR)
