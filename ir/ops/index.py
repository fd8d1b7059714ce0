"""Integer-array indexing along one dim: `index_take` / `index_put` and the torch ops on them.

`index_take` (x.take(idx, axis=dim) for an index of any shape) is what
`x[idx]`, `index_select` and `diag` lower to; `index_put` (set or
accumulate at `(:,) * dim + (idx,)`) is what `x[idx] = v` and `index_add`
lower to.  Getitem and setitem with several index arrays merge the indexed
dims and use one flat index (tracegrad/_indexing.py).  These primitives take
indices already checked against their dims (`checked_index`: eagerly, or by an
`index_check` node in a traced program).
"""
from __future__ import annotations

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..builder import py_number, with_location
from ..scalars import check_scalar
from ..errors import DTypeError, ShapeError
from ..registry import (ALIAS, AUTOCAST_PROMOTE, COMPLEX, INTERNAL, LINEAR, NONDIFF, REQUIRED,
                        defcomposite, defop)
from ._common import norm_dim


def write_at(xp, x, key, values, accumulate=False):
    """A copy of `x` with `x[key]` set to `values` (or increased by them, duplicates adding up).

    The one place kernels write into arrays: in place on a NumPy copy, with
    ``.at[]`` on jax arrays.
    """
    if xp is np:
        out = x.copy()
        if accumulate:
            np.add.at(out, key, values)
        else:
            out[key] = values
        return out
    at = x.at[key]
    return at.add(values) if accumulate else at.set(values)


def located(ops, e: Exception) -> Exception:
    """`e` with the user's source line (decompositions raise outside Frontend.call's handler)."""
    return with_location(e, ops.location())


# ---- index bounds ----------------------------------------------------------------------
# One rule for every op that reads or writes at data-dependent integer indices, eager or in a
# program: NumPy raises on most out-of-range indices but wraps negative ones, and jax fills
# out-of-range gathers with NaN and drops out-of-range scatters, so neither kernel may see an
# unchecked index.  Eagerly the decomposition checks the values at once (`checked_index`);
# while tracing it routes the index through an `index_check` node, which raises the same
# error from the interpreter and from a jax program (a host check after the call).
def bounds_error(what: str, bad: int, size: int, dim: int | None) -> IndexError:
    """The error for index `bad` outside a dim of `size` (dim None: an nll_loss class target)."""
    if dim is None:
        return IndexError(f"{what}: Target {bad} is out of bounds for {size} classes")
    return IndexError(f"{what}: index {bad} is out of bounds for dimension {dim} with size "
                      f"{size}")


def check_range(what: str, lo, hi, size: int, dim: int | None, negative: bool) -> None:
    """Raise `bounds_error` unless the indices, of minimum `lo` and maximum `hi` (lo > hi: none),
    all lie in [0, size), or in [-size, size) when `negative` ones count from the end."""
    lo, hi = int(lo), int(hi)
    if lo > hi:
        return
    if lo < (-size if negative else 0):
        raise bounds_error(what, lo, size, dim)
    if hi >= size:
        raise bounds_error(what, hi, size, dim)


def live_range(xp, index, ignore):
    """(min, max) of the entries of a non-empty `index` other than `ignore` (min > max when
    every entry is `ignore`): two scalars, all a host check needs to read."""
    if ignore is None:
        return xp.min(index), xp.max(index)
    live = index != ignore
    info = np.iinfo(index.dtype)
    return xp.min(xp.where(live, index, info.max)), xp.max(xp.where(live, index, info.min))


def checked_index(ops, what: str, index, size: int, dim: int | None, negative: bool = False,
                  ignore: int | None = None):
    """`index`, its values checked against a dim of `size` for op `what` (see `check_range`;
    entries equal to `ignore` are exempt): now when they are known (eager), else by an
    `index_check` node in the traced program.  Raises IndexError (`bounds_error`)."""
    known = ops.known_value(index)
    if known is None:
        return ops.index_check(index, what, size, dim, negative, ignore)
    try:
        _index_check_np(np, known, what=what, size=size, dim=dim, negative=negative,
                        ignore=ignore)
    except IndexError as e:
        raise located(ops, e) from None
    return index


def _index_check_infer(types, *, what, size, dim, negative, ignore):
    if types[0].dtype.category != T.INT:
        raise DTypeError(f"index_check ({what}): indices must be an integer tensor, got "
                         f"{types[0]}")
    return types[0]


def _index_check_np(xp, index, *, what, size, dim, negative, ignore):
    if index.size:
        check_range(what, *live_range(np, index, ignore), size, dim, negative)
    return index


# index_check(index) is `index`, after checking it against a dim of `size` for op `what`:
# what a traced decomposition puts between a user's index and the kernel that uses it
defop("index_check", "index", attrs=(("what", REQUIRED, K.STRING), ("size", REQUIRED, K.SIZE), ("dim", 0, K.DIM_OPT),
                                     ("negative", False, K.BOOL), ("ignore", None, K.INT_OPT)),
      infer=_index_check_infer, kernel=_index_check_np,   # jax: backends/jax_host_checks.py
      vjp=NONDIFF, flags=INTERNAL | ALIAS, ref="torch's index bounds checks (IndexError)")


def require_index(ops, name: str, index, what: str = "index") -> None:
    if not ops.is_operand(index):
        raise located(ops, TypeError(f"{name}(): {what} must be a tensor, got "
                                     f"{type(index).__name__}"))
    if index.dtype.category != T.INT:
        raise located(ops, DTypeError(f"{name}(): expected an int64 or int32 {what}, got "
                                      f"{ops.type_of(index)}"))


# ---- index_take ------------------------------------------------------------------------
def _take_infer(types, *, dim):
    x, idx = types
    if idx.dtype.category != T.INT:
        raise DTypeError(f"index_take: indices must be an integer tensor, got {idx}")
    return T.TensorType(x.shape[:dim] + idx.shape + x.shape[dim + 1:], x.dtype)


def _take_vjp(b, ct, x, idx, out, *, dim):
    return [b.index_take_backward(ct, idx, x.shape, dim), None]


# x.take(idx, axis=dim) for an index tensor of any shape: the single-dim case of
# x[..., idx, ...]; getitem with several index arrays flattens them into one.
defop("index_take", "input, index", attrs=(("dim", 0, K.DIM),),
      canon=lambda types, *, dim: {"dim": norm_dim("index_take", dim, types[0].ndim)},
      infer=_take_infer, ref="torch.index_select / x[idx] (numpy.take)",
      kernel=lambda xp, x, idx, *, dim: xp.take(x, idx, axis=dim),
      vjp=_take_vjp, flags=INTERNAL | COMPLEX, jvp=LINEAR,
      aten_name="aten::index")


defop("index_take_backward", "grad, index", attrs=(("shape", None, K.SHAPE), ("dim", 0, K.DIM)),
      infer=lambda types, *, shape, dim: T.TensorType(tuple(shape), types[0].dtype),
      kernel=lambda xp, ct, idx, *, shape, dim: write_at(   # duplicate indices accumulate
          xp, xp.zeros(shape, dtype=ct.dtype), (slice(None),) * dim + (idx,), ct, True),
      flags=INTERNAL | COMPLEX, ref="torch index_select_backward (index_add into zeros)",
      vjp=lambda b, ct, g, idx, out, *, shape, dim: [b.index_take(ct, idx, dim), None], jvp=LINEAR)


# ---- index_put -------------------------------------------------------------------------
def _put_infer(types, *, dim, accumulate):
    x, idx, values = types
    if idx.dtype.category != T.INT:
        raise DTypeError(f"index_put: indices must be an integer tensor, got {idx}")
    want = x.shape[:dim] + idx.shape + x.shape[dim + 1:]
    if values.shape != want or values.dtype is not x.dtype:
        raise ShapeError(f"index_put: values must be {T.TensorType(want, x.dtype)} to put into "
                         f"{x} at an index {idx} along dim {dim}, got {values}")
    return x


def _put_vjp(b, ct, x, idx, values, out, *, dim, accumulate):
    # torch's index_put backward: every write (duplicates too) reads its cotangent back
    dx = ct if accumulate else b.index_put(ct, idx, b.full(values.shape, 0, ct.dtype), dim)
    return [dx, None, b.index_take(ct, idx, dim)]


# out = x; out[(:,) * dim + (index,)] = values  (+= when accumulating; duplicates add up)
defop("index_put", "input, index, values", attrs=(("dim", 0, K.DIM), ("accumulate", False, K.BOOL)),
      canon=lambda types, *, dim, accumulate: {"dim": norm_dim("index_put", dim, types[0].ndim),
                                               "accumulate": bool(accumulate)},
      infer=_put_infer, flags=INTERNAL | COMPLEX, vjp=_put_vjp,
      ref="torch.index_put (one index, one dim)",
      kernel=lambda xp, x, idx, v, *, dim, accumulate: write_at(
          xp, x, (slice(None),) * dim + (idx,), v, accumulate), jvp=LINEAR,
      autocast={"cpu": AUTOCAST_PROMOTE, "cuda": AUTOCAST_PROMOTE})


# ---- index_select / index_add ------------------------------------------------------------
def _vector_index(ops, name, x, dim, index):
    """index_select / index_add's index: 1-D (a 0-d index acts as one element), in bounds."""
    require_index(ops, name, index)
    if len(index.shape) > 1:
        raise located(ops, IndexError(f"{name}(): index is supposed to be a vector, got "
                                      f"{ops.type_of(index)}"))
    d = norm_dim(name, dim, len(x.shape))
    size = x.shape[d] if x.shape else 1
    index = checked_index(ops, name, index, size, d)   # [0, size), as torch
    if not index.shape:
        index = ops.reshape(index, (1,))
    return d, index


def _index_select(ops, x, dim, index):
    d, index = _vector_index(ops, "index_select", x, dim, index)
    if not x.shape:
        if index.shape[0] != 1:
            raise located(ops, IndexError(f"index_select(): index to a 0-d tensor can have only "
                                          f"one value, got {index.shape[0]}"))
        return ops.index_take(ops.reshape(x, (1,)), ops.reshape(index, ()), 0)
    return ops.index_take(x, index, d)


defcomposite("index_select", "input: Tensor, dim, index: Tensor", _index_select,
             ref="torch.index_select", flags=COMPLEX, node_inputs=("input",))


def _index_add(ops, x, dim, index, source, alpha=1):
    d, index = _vector_index(ops, "index_add", x, dim, index)
    if not ops.is_operand(source):
        raise located(ops, TypeError(f"index_add(): source must be a tensor, got "
                                     f"{type(source).__name__}"))
    xs, ss = tuple(x.shape) or (1,), tuple(source.shape) or (1,)
    want = xs[:d] + (index.shape[0],) + xs[d + 1:]
    if ss != want:
        raise located(ops, ShapeError(
            f"index_add(): source {ops.type_of(source)} must have the shape of input "
            f"{ops.type_of(x)} with dim {d} of size {index.shape[0]} (number of indices)"))
    if source.dtype is not x.dtype:
        raise located(ops, DTypeError(f"index_add(): input {ops.type_of(x)} and source "
                                      f"{ops.type_of(source)} must have the same dtype"))
    if alpha != 1:
        source = ops.mul(source, alpha)
    if not x.shape:
        return ops.reshape(ops.index_put(ops.reshape(x, (1,)), index,
                                         ops.reshape(source, (1,)), 0, True), ())
    return ops.index_put(x, index, source, d, True)


defcomposite("index_add", "input: Tensor, dim, index: Tensor, source: Tensor, alpha=1", _index_add,
             ref="torch.index_add", flags=COMPLEX, node_inputs=("input", "source"))


# ---- masked_fill -----------------------------------------------------------------------
def _masked_fill(ops, x, mask, value):
    if not ops.is_operand(mask) or mask.dtype is not T.bool_:
        what = ops.type_of(mask) if ops.is_operand(mask) else type(mask).__name__
        raise located(ops, DTypeError(f"masked_fill: only boolean masks are supported, got "
                                      f"mask {what}"))
    if ops.is_operand(value):
        if value.shape:
            raise located(ops, ShapeError(
                f"masked_fill: only a 0-dimensional value tensor is supported, got "
                f"{ops.type_of(value)}"))
        if value.dtype is not x.dtype:
            value = ops.convert(value, x.dtype)
    elif isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        try:   # a Scalar argument: torch's overflow check; 2.7 -> 2 for an int input
            value = check_scalar("masked_fill", py_number(value), x.dtype)
        except (RuntimeError, OverflowError) as e:
            raise located(ops, e) from None
        value = ops.full((), value, x.dtype)   # the input's dtype, as torch
    else:
        raise located(ops, TypeError(f"masked_fill(): value must be a number or a 0-d tensor, "
                                     f"got {type(value).__name__}"))
    if T.broadcast_shapes(tuple(x.shape), tuple(mask.shape)) is None:
        raise located(ops, ShapeError(f"masked_fill: mask {ops.type_of(mask)} does not "
                                      f"broadcast with input {ops.type_of(x)}"))
    return ops.where(mask, value, x)


defcomposite("masked_fill", "input: Tensor, mask: Tensor, value: Tensor | Number | None = None",
             _masked_fill, ref="torch.masked_fill", flags=COMPLEX, node_inputs=("input", "value"))


# ---- index_fill, masked_scatter ------------------------------------------------------------
def _index_fill(ops, x, dim, index, value):
    name = "index_fill"   # torch 2.13's error types: IndexError, RuntimeError
    if not ops.is_operand(index) or index.dtype is not T.int64:   # int64 only here
        what = ops.type_of(index) if ops.is_operand(index) else type(index).__name__
        raise located(ops, IndexError(f"{name}(): expected an int64 index, got {what}"))
    if len(index.shape) > 1:
        raise located(ops, RuntimeError(f"{name}(): index has to be a vector or a scalar, got "
                                      f"{ops.type_of(index)}"))
    if ops.is_operand(value) and value.shape:
        raise located(ops, RuntimeError(f"{name}: only a 0-dimensional value tensor is "
                                      f"supported, got {ops.type_of(value)}"))
    d = norm_dim(name, dim, max(len(x.shape), 1))
    size = x.shape[d] if x.shape else 1
    index = checked_index(ops, name, index, size, d, negative=True)   # [-size, size)
    if not index.shape:
        index = ops.reshape(index, (1,))
    # which positions along `dim` are filled (repeats fill once: value's gradient counts
    # each element once, as torch), broadcast over the other dims
    hit = ops.index_put(ops.full((size,), False, T.bool_), index,
                        ops.full(tuple(index.shape), True, T.bool_), 0, False)
    shape = [1] * len(x.shape)
    if shape:
        shape[d] = size
    return _masked_fill(ops, x, ops.reshape(hit, tuple(shape)), value)


defcomposite("index_fill", "input: Tensor, dim, index: Tensor, value: Tensor | Number | None = None",
             _index_fill, ref="torch.index_fill", flags=COMPLEX, node_inputs=("input", "value"))


def _masked_scatter(ops, x, mask, source):
    name = "masked_scatter"
    if not ops.is_operand(mask) or mask.dtype is not T.bool_:
        what = ops.type_of(mask) if ops.is_operand(mask) else type(mask).__name__
        raise located(ops, RuntimeError(f"{name}: only boolean masks are supported, got mask "
                                      f"{what}"))
    if not ops.is_operand(source):
        raise located(ops, TypeError(f"{name}(): source must be a tensor, got "
                                     f"{type(source).__name__}"))
    if source.dtype is not x.dtype:
        raise located(ops, RuntimeError(f"{name}: expected input {ops.type_of(x)} and source "
                                      f"{ops.type_of(source)} to have the same dtype"))
    shape = T.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    if shape is None:
        raise located(ops, ShapeError(f"{name}: mask {ops.type_of(mask)} does not broadcast "
                                      f"with input {ops.type_of(x)}"))
    n = int(np.prod(source.shape, dtype=np.int64))
    known = ops.known_value(mask)
    if known is not None and np.count_nonzero(np.broadcast_to(known, shape)) > n:
        raise located(ops, RuntimeError(f"{name}: number of elements of source {ops.type_of(source)} "
                                        "< number of ones in mask"))
    flat_mask = ops.reshape(ops.expand(mask, shape), (-1,))
    flat_x = ops.reshape(ops.expand(x, shape), (-1,))
    if n == 0:   # then the mask has no ones: x, with source kept in the graph (torch
        # gives an empty source a zero gradient of its shape, not None)
        none = ops.convert(ops.sum(source), x.dtype)
        return ops.reshape(ops.where(flat_mask, none, flat_x), shape)
    # the k-th True of the mask (row-major) takes source's k-th element
    pos = ops.sub(ops.cumsum(ops.convert(flat_mask, T.int64), dim=0), 1)
    pos = checked_index(ops, name, ops.where(flat_mask, pos, 0), n, 0)
    taken = ops.index_take(ops.reshape(source, (-1,)), pos, 0)
    return ops.reshape(ops.where(flat_mask, taken, flat_x), shape)


defcomposite("masked_scatter", "input: Tensor, mask: Tensor, source: Tensor", _masked_scatter,
             ref="torch.masked_scatter", flags=COMPLEX, node_inputs=("input", "source"))
