"""More of torch's indexing and splitting functions (issues 14 and 16, fourth batch):
index_copy and put (registry composites on `index_put`, so torch's gradients follow: the
overwritten entries of `input` get none, `source` reads its cotangent back), and hsplit /
vsplit / dsplit (tensor_split along dim 1 / 0 / 2 with torch's divisibility and rank checks).

torch's error messages name the in-place form (``index_copy_():``, ``put_():``) even when the
out-of-place function was called; here each names the function called, with torch's text.
"""
from __future__ import annotations

import math

from .. import types as T
from ..registry import COMPLEX, VIEW, defcomposite
from ._common import norm_dim
from ._matrix import _fail, _need_tensors
from .combine_more import _tensor_split, flat_storage_index
from .index import checked_index

_TORCH_NAME = {T.float32: "Float", T.float64: "Double", T.float16: "Half",
               T.bfloat16: "BFloat16", T.int64: "Long", T.int32: "Int", T.int16: "Short",
               T.int8: "Char", T.uint8: "Byte", T.bool_: "Bool", T.complex64: "ComplexFloat",
               T.complex128: "ComplexDouble"}


def torch_dtype_name(dtype: T.DType) -> str:
    """The name torch's messages give a dtype (Float, Long, ComplexDouble ...)."""
    return _TORCH_NAME.get(dtype, dtype.name)


def _long_index(ops, name, index):
    if index.dtype is not T.int64:   # torch 2.13: RuntimeError
        raise _fail(ops, RuntimeError(f"{name}(): Expected a long tensor for index, but got "
                                      f"{torch_dtype_name(index.dtype)}"))


def _index_copy(ops, input, dim, index, source):
    """`input` with the slices at `index` along `dim` replaced by `source`'s, in order
    (torch.index_copy); with repeated indices one of the writes wins (torch: unspecified).

    Raises:
        RuntimeError: a non-int64 index, dtypes that differ, slice shapes that differ.
        IndexError: an index of over 1 dim, an index count other than source's size along
        `dim`, an index out of [0, size), a bad dim (torch's messages).
    """
    name = "index_copy"
    _need_tensors(ops, name, input=input, index=index, source=source)
    _long_index(ops, name, index)
    if len(index.shape) > 1:
        raise _fail(ops, IndexError(f"{name}(): Index should have dimension 1 or 0 (got "
                                    f"{len(index.shape)})"))
    if source.dtype is not input.dtype:
        raise _fail(ops, RuntimeError(
            f"{name}(): self and source expected to have the same dtype, but got (self) "
            f"{torch_dtype_name(input.dtype)} and (source) {torch_dtype_name(source.dtype)}"))
    scalar = not input.shape
    x = ops.reshape(input, (1,)) if scalar else input
    src = ops.reshape(source, (1,)) if scalar and not source.shape else source
    d = norm_dim(name, dim, len(x.shape))
    count = index.shape[0] if index.shape else 1
    src_len = src.shape[d] if len(src.shape) == len(x.shape) else (1 if not src.shape else None)
    if src_len is not None and src_len != count:
        raise _fail(ops, IndexError(f"{name}(): Number of indices ({count}) should be equal to "
                                    f"source.size(dim) ({src_len})"))
    want = tuple(x.shape[:d]) + (count,) + tuple(x.shape[d + 1:])
    if tuple(src.shape) != want:
        bad = next((i for i in range(len(want)) if i != d and
                    (i >= len(src.shape) or src.shape[i] != want[i])), 0)
        raise _fail(ops, RuntimeError(
            f"{name}(): Source/destination tensor must have same slice shapes. Destination "
            f"slice shape: {x.shape[bad] if bad < len(x.shape) else '?'} at dimension {bad} "
            f"and source slice shape: {src.shape[bad] if bad < len(src.shape) else '?'} at "
            f"dimension {bad}."))
    idx = ops.reshape(index, (1,)) if not index.shape else index
    idx = checked_index(ops, name, idx, x.shape[d], d)
    out = ops.index_put(x, idx, src, d, False)
    return ops.reshape(out, ()) if scalar else out


def _put(ops, input, index, source, accumulate=False):
    """`input` with its row-major flat elements at `index` (negative counts from the end) set
    to `source`'s elements in order, or incremented by them with `accumulate` (torch.put).

    Raises:
        RuntimeError: a non-int64 index, dtypes that differ.  IndexError: source and index of
        different sizes, an index out of range (torch's messages).
    """
    name = "put"
    _need_tensors(ops, name, input=input, index=index, source=source)
    _long_index(ops, name, index)
    if source.dtype is not input.dtype:
        raise _fail(ops, RuntimeError(
            f"{name}(): self and source expected to have the same dtype, but got self.dtype = "
            f"{torch_dtype_name(input.dtype)} and source.dtype = "
            f"{torch_dtype_name(source.dtype)}"))
    n_src, n_idx, n = (math.prod(t.shape) for t in (source, index, input))
    if n_src != n_idx:
        raise _fail(ops, IndexError(f"{name}(): Expected source and index to have the same "
                                    f"number of elements, but got source.numel() = {n_src}, "
                                    f"index.numel() = {n_idx}"))
    out = ops.index_put(ops.reshape(input, (n,)), flat_storage_index(ops, name, index, n),
                        ops.reshape(source, (n_idx,)), 0, bool(accumulate))
    return ops.reshape(out, tuple(input.shape))


def _directional_split(name: str, dim: int, min_dims: int):
    def decomp(ops, input, indices_or_sections):
        _need_tensors(ops, name, input=input)
        nd = len(input.shape)
        if nd < min_dims:
            raise _fail(ops, RuntimeError(
                f"torch.{name} requires a tensor with at least {min_dims} dimension, but got a "
                f"tensor with {nd} dimensions!"))
        d = 0 if name == "hsplit" and nd == 1 else dim
        s = indices_or_sections
        if isinstance(s, bool) or not isinstance(s, (int, list, tuple)) or (
                not isinstance(s, int) and not all(isinstance(i, int) and
                                                   not isinstance(i, bool) for i in s)):
            raise _fail(ops, TypeError(f"{name}(): argument 'indices_or_sections' must be an "
                                       f"int or a list of ints, not {type(s).__name__}"))
        if isinstance(s, int) and (s == 0 or input.shape[d] % s):
            raise _fail(ops, RuntimeError(
                f"torch.{name} attempted to split along dimension {d}, but the size of the "
                f"dimension {input.shape[d]} is not divisible by the split_size {s}!"))
        return _tensor_split(ops, input, s if isinstance(s, int) else tuple(s), d)
    axis = {"hsplit": "1 (0 for a 1-D input)", "vsplit": "0", "dsplit": "2"}[name]
    decomp.__doc__ = (f"Views of `input` split along dim {axis} (torch.{name}): an int n "
                      f"gives n equal pieces (the size must divide), a list of indices cuts "
                      f"before each, as tensor_split.  Raises RuntimeError for an input of "
                      f"fewer than {min_dims} dims or sections that do not divide (torch's "
                      f"messages).")
    return decomp


defcomposite("index_copy", "input: Tensor, dim, index: Tensor, source: Tensor", _index_copy,
             ref="torch.index_copy", flags=COMPLEX, node_inputs=("input", "source"))
defcomposite("put", "input: Tensor, index: Tensor, source: Tensor, accumulate=False", _put,
             ref="torch.put", flags=COMPLEX, node_inputs=("input", "source"))
for _name, _dim, _min in (("hsplit", 1, 1), ("vsplit", 0, 2), ("dsplit", 2, 3)):
    defcomposite(_name, "input: Tensor, indices_or_sections", _directional_split(_name, _dim, _min),
                 ref=f"torch.{_name}", flags=COMPLEX | VIEW)
