"""Ops that place values among sorted boundaries: searchsorted, bucketize, histc.

Registry composites of comparisons and sums, so their output shapes are static and they
trace into one program.  None has a gradient (torch's outputs are integer indices or, for
histc, counts torch does not differentiate).  searchsorted and bucketize compare every value
with every boundary: O(values x boundaries) memory, fine for the bucket counts they are used
with; histc scatters each element into its bin.
"""
from __future__ import annotations

from .. import types as T
from ..errors import DTypeError
from ..registry import defcomposite
from ._matrix import _fail, _need_tensors, _ty


def _count_below(ops, seq, values, right):
    """For each value, how many entries of the last dim of `seq` are below it (<= with
    `right`); `seq` (*B, N) with values (*B, M), or a 1-D `seq` with values of any shape."""
    if len(seq.shape) == 1:
        v = ops.unsqueeze(values, -1)           # (..., 1) against (N,)
        s = seq
    else:
        v = ops.unsqueeze(values, -1)           # (*B, M, 1) against (*B, 1, N)
        s = ops.unsqueeze(seq, -2)
    below = ops.le(s, v) if right else ops.lt(s, v)
    return ops.sum(below, (-1,))


def _searchsorted(ops, sorted_sequence, input, out_int32=False, right=False, side=None,
                  sorter=None):
    """Indices where `input`'s values would be inserted into `sorted_sequence`'s last dim to
    keep it sorted (torch.searchsorted): the first such index, the last with ``right=True``
    or ``side="right"``.  `sorted_sequence` is 1-D, or (*B, N) with `input` (*B, M); `sorter`
    gives the order that sorts an unsorted sequence.

    Returns:
        int64 (int32 with `out_int32`) of `input`'s shape; no gradient.
    Raises:
        RuntimeError: leading dims differ, `side` contradicts `right` (torch's messages).
    """
    _need_tensors(ops, "searchsorted", sorted_sequence=sorted_sequence)
    if not ops.is_operand(input):
        input = ops.full((), input, sorted_sequence.dtype)
    if side is not None:
        if side not in ("left", "right"):
            raise _fail(ops, RuntimeError(f"torch.searchsorted(): side can only be 'left' or "
                                          f"'right' but got {side}"))
        if right and side == "left":
            raise _fail(ops, RuntimeError("torch.searchsorted(): side and right can't be set "
                                          "to opposites, got side of left while right was True"))
        right = side == "right"
    nd = len(sorted_sequence.shape)
    if nd != 1 and tuple(sorted_sequence.shape[:-1]) != tuple(input.shape[:-1]):
        raise _fail(ops, RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
            f"{list(input.shape)} ({_ty(sorted_sequence)}, {_ty(input)})"))
    seq = ops.stop_gradient(sorted_sequence)
    if sorter is not None:
        seq = ops.gather(seq, -1, sorter)
    out = _count_below(ops, seq, ops.stop_gradient(input), right)
    return ops.convert(out, T.int32 if out_int32 else T.int64)


def _bucketize(ops, input, boundaries, out_int32=False, right=False):
    """The bucket of each value of `input` among 1-D increasing `boundaries`
    (torch.bucketize): i with ``boundaries[i-1] < x <= boundaries[i]``, or
    ``boundaries[i-1] <= x < boundaries[i]`` with ``right=True``.

    Returns:
        int64 (int32 with `out_int32`) of `input`'s shape; no gradient.
    Raises:
        RuntimeError: `boundaries` not 1-D (torch's message).
    """
    _need_tensors(ops, "bucketize", boundaries=boundaries)
    if len(boundaries.shape) != 1:
        raise _fail(ops, RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                                      f"{len(boundaries.shape)}) ({_ty(boundaries)})"))
    return _searchsorted(ops, boundaries, input, out_int32=out_int32, right=right)


def _histc(ops, input, bins=100, min=0, max=0):  # noqa: A002  (torch's parameter names)
    """A histogram of `bins` equal-width bins over [min, max] (torch.histc); min = max
    (the default 0, 0) takes the data's smallest and largest elements (widened by 1 each way
    when equal); with a NaN among them no element is counted, where torch raises ("range of
    [nan, nan] is not finite": a check on values a traced program cannot make).
    Elements outside the range, and NaNs, are not counted; the top edge belongs to the last
    bin.

    Returns:
        `input`'s dtype, shape (bins,); no gradient.
    Raises:
        DTypeError: an integer or bool input.  RuntimeError: bins < 1 or max < min.
    """
    _need_tensors(ops, "histc", input=input)
    if not input.dtype.is_floating_point:
        raise _fail(ops, DTypeError(f"histc: expects a floating-point input, got {_ty(input)} "
                                    f"(torch: \"histogram_cpu\" not implemented); convert it "
                                    f"with .float()"))
    if bins < 1:
        raise _fail(ops, RuntimeError(f"histc: bins must be > 0, but got {bins} (torch: "
                                      f"'torch.histogram(): bins must be > 0')"))
    if max < min:
        raise _fail(ops, RuntimeError("torch.histc: max must be larger than min"))
    x = ops.reshape(ops.stop_gradient(input), (-1,))
    if min == max:   # torch: any equal pair (not only 0, 0) takes the data's range
        lo, hi = ops.amin(x, (0,)), ops.amax(x, (0,))
        same = ops.eq(lo, hi)
        lo, hi = ops.where(same, ops.sub(lo, 1.0), lo), ops.where(same, ops.add(hi, 1.0), hi)
    else:
        lo, hi = ops.full((), float(min), x.dtype), ops.full((), float(max), x.dtype)
    inside = ops.logical_and(ops.ge(x, lo), ops.le(x, hi))   # False for NaN
    pos = ops.floor(ops.div(ops.mul(ops.sub(x, lo), float(bins)), ops.sub(hi, lo)))
    index = ops.clamp(ops.convert(ops.where(inside, pos, 0.0), T.int64), 0, bins - 1)
    return ops.scatter_add(ops.full((bins,), 0.0, x.dtype), 0, index,
                           ops.convert(inside, x.dtype))


defcomposite("searchsorted", "sorted_sequence: Tensor, input: Tensor | Number, *, "
             "out_int32=False, right=False, side=None, sorter: Tensor | None = None",
             _searchsorted, ref="torch.searchsorted")
defcomposite("bucketize", "input: Tensor | Number, boundaries: Tensor, *, out_int32=False, "
             "right=False", _bucketize, ref="torch.bucketize")
defcomposite("histc", "input: Tensor, bins=100, min=0, max=0", _histc, ref="torch.histc")
