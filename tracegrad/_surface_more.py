"""More of torch's top-level functions (issue 16): the eager-only ones whose output shape
depends on values (``unique``, ``unique_consecutive``, ``bincount``), the index creators ``tril_indices`` /
``triu_indices``, and the ``*tensors`` spellings of the registry composites ``meshgrid``,
``cartesian_prod`` and ``atleast_{1,2,3}d`` (ir/ops/combine.py), which take a list as every variadic registry op does; likewise ``block_diag``
(ir/ops/combine_more.py), ``tensor_split``'s keyword and tensor forms, and ``combinations``
(an index_select by constant indices).

``unique`` and ``bincount`` run in NumPy on concrete values, as `nonzero` does: inside
``tg.compile`` they raise TraceError (a graph break for a whole-function fallback), and
their results carry no gradient.
"""
from __future__ import annotations

import itertools
import operator
import warnings

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import DTypeError

from . import _ops, _state
from ._device import creates_on_device
from ._indexing import _is_traced, _value_error
from .tensor import Tensor, attach


def _tensors(name: str, tensors) -> list:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return list(tensors[0])
    return list(tensors)


def meshgrid(*tensors, indexing: str | None = None):
    """``meshgrid(a, b, ...)`` or ``meshgrid([a, b, ...])``: the registry composite (torch.
    meshgrid; omitting `indexing` means "ij" with torch's UserWarning)."""
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    return _ops.meshgrid(_tensors("meshgrid", tensors), indexing=indexing)


def cartesian_prod(*tensors):
    """``cartesian_prod(a, b, ...)`` of 1-D tensors: the registry composite
    (torch.cartesian_prod)."""
    return _ops.cartesian_prod(_tensors("cartesian_prod", tensors))


_STATIC = {"unique": "a fixed-size form (sort, or one_hot(x, n) for n known values)",
           "unique_consecutive": "a fixed-size form (x[1:] != x[:-1] as a mask)",
           "bincount": "one_hot(x, n).sum(0), or scatter_add into tg.zeros(n), for a known n"}


def _at_least(nd: int):
    op = getattr(_ops, f"atleast_{nd}d")

    def atleast(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return op(tensors[0])
        return tuple(op(t) for t in _tensors(f"atleast_{nd}d", tensors))
    atleast.__name__ = atleast.__qualname__ = f"atleast_{nd}d"
    atleast.__doc__ = (f"`input` viewed with at least {nd} dims (torch.atleast_{nd}d: the "
                       f"registry composite); several tensors, or a list, give a tuple.")
    return atleast


atleast_1d, atleast_2d, atleast_3d = _at_least(1), _at_least(2), _at_least(3)


def _concrete(name: str, input) -> np.ndarray:
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' must be a Tensor, got "
                        f"{type(input).__name__}")
    if _is_traced(input):
        raise _value_error(name, input, _STATIC[name])
    return np.asarray(input._data)


@_state.located
def unique(input, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None):
    """The distinct elements of `input`, in ascending order (torch.unique; `sorted` is
    accepted, the result is sorted either way, as torch's CPU kernel does), or the distinct
    slices along `dim`.

    Returns:
        The values (flattened when `dim` is None), then with `return_inverse` the int64 index
        of each element (slice) in them, shaped as `input` (as its `dim`), and with
        `return_counts` their int64 counts.  Eager only, no gradient.
    Raises:
        TraceError: inside `tg.compile` (the count of distinct values is not known).
        IndexError: `dim` out of range.
    """
    a = _concrete("unique", input)
    if dim is None:
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(a.shape)
    else:
        d = dim + a.ndim if dim < 0 else dim
        if not 0 <= d < max(1, a.ndim):
            raise IndexError(f"unique: Dimension out of range (expected to be in range of "
                             f"[{-a.ndim}, {a.ndim - 1}], but got {dim})")
        values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True, axis=d)
        inverse = inverse.reshape(-1)
    out = [Tensor(np.ascontiguousarray(values).astype(a.dtype, copy=False))]
    if return_inverse:
        out.append(Tensor(inverse.astype(np.int64)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@_state.located
def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None):
    """`input` with each run of equal consecutive elements (slices along `dim`) kept once
    (torch.unique_consecutive); returns as `unique`.  Eager only, no gradient.

    Raises:
        TraceError: inside `tg.compile`.  IndexError: `dim` out of range.
    """
    a = _concrete("unique_consecutive", input)
    if dim is None:
        rows, shape = a.reshape(-1, 1), a.shape
    else:
        d = dim + a.ndim if dim < 0 else dim
        if not 0 <= d < max(1, a.ndim):
            raise IndexError(f"unique_consecutive: Dimension out of range (expected to be in "
                             f"range of [{-a.ndim}, {a.ndim - 1}], but got {dim})")
        moved = np.moveaxis(a, d, 0)
        rows, shape = moved.reshape(moved.shape[0], -1), (moved.shape[0],)
    starts = np.ones(rows.shape[0], bool)
    starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = np.flatnonzero(starts)
    values = a.reshape(-1)[first] if dim is None else np.moveaxis(np.moveaxis(a, d, 0)[first],
                                                                  0, d)
    out = [Tensor(np.ascontiguousarray(values))]
    if return_inverse:
        out.append(Tensor((np.cumsum(starts) - 1).reshape(shape).astype(np.int64)))
    if return_counts:
        out.append(Tensor(np.diff(np.append(first, rows.shape[0])).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


@_state.located
def bincount(input, weights=None, minlength: int = 0):
    """How often each value 0, 1, ..., max(input) occurs in a 1-D non-negative integer tensor
    (torch.bincount); at least `minlength` bins.  With `weights` (one per element) the bins
    sum the weights instead.

    Returns:
        int64 counts, or `weights`' dtype (float32 and float64 stay, other dtypes give
        float64, as torch); eager only, no gradient.
    Raises:
        RuntimeError: an input that is not 1-D, negative values, weights of another length
        (torch's messages).  DTypeError: a floating-point input.  TraceError: in tg.compile.
    """
    a = _concrete("bincount", input)
    if input.dtype.category not in (T.INT, T.BOOL):
        raise DTypeError(f"bincount: expects an integer input, got {input._type} (torch: "
                         f"\"bincount_cpu\" not implemented for '{input.dtype.name}')")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got "
                           f"{input._type}")
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}")
    if weights is None:
        return Tensor(np.bincount(a, minlength=minlength).astype(np.int64))
    w = _concrete("bincount", weights)
    if w.shape != a.shape:
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as "
                           f"input, got {weights._type} for {input._type}")
    dtype = w.dtype if w.dtype in (np.float32, np.float64) else np.float64
    return Tensor(np.bincount(a, weights=w, minlength=minlength).astype(dtype))


def _tri_indices(name: str, lower: bool, row: int, col: int, offset: int, dtype):
    for arg, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name}: {arg} must be non-negative, got {v}")
    dtype = T.int64 if dtype is None else T.as_dtype(dtype)
    if dtype.category != T.INT:
        raise DTypeError(f"{name}: dtype must be an integer dtype (int32 or int64), got "
                         f"{dtype.name}")
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return Tensor(np.stack([rows, cols]).astype(dtype.numpy))


@_state.located
@creates_on_device
def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None):
    """The (2, N) row and column indices of the lower triangle of a row x col matrix, row by
    row (torch.tril_indices); `offset` > 0 takes diagonals above the main one too.  int64
    unless `dtype` says otherwise.  A constant: it traces into tg.compile as one."""
    return _tri_indices("tril_indices", True, row, col, offset, dtype)


@_state.located
@creates_on_device
def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None):
    """The (2, N) indices of the upper triangle, row by row (torch.triu_indices); see
    `tril_indices`."""
    return _tri_indices("triu_indices", False, row, col, offset, dtype)


def block_diag(*tensors):
    """``block_diag(a, b, ...)``: the tensors along the diagonal of one matrix (the registry
    composite, torch.block_diag); no tensors give torch's empty (1, 0) float32 matrix."""
    if not tensors:
        return Tensor(np.zeros((1, 0), np.float32))
    return _ops.block_diag(list(tensors))


_SPLIT_FORMS = ("sections", "indices", "tensor_indices_or_sections")


@_state.located
def tensor_split(input, indices_or_sections=None, dim: int = 0, **kwargs):  # noqa: A002
    """Views of `input` split along `dim` (torch.tensor_split): `indices_or_sections` an int
    (that many pieces, the first ``size % n`` one longer), a list of indices to cut before,
    or a 0-d / 1-d int64 tensor of either; torch's keyword spellings ``sections=``,
    ``indices=`` and ``tensor_indices_or_sections=`` are accepted too.

    Raises:
        RuntimeError: a 0-d input, sections < 1, an index tensor of the wrong rank or dtype
        (torch's messages).  TypeError: anything else as the split.
    """
    given = [kwargs.pop(k) for k in _SPLIT_FORMS if k in kwargs]
    if kwargs:
        raise TypeError(f"tensor_split() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if indices_or_sections is not None:
        given.insert(0, indices_or_sections)
    if len(given) != 1:
        raise TypeError("tensor_split() takes one of indices_or_sections, sections, indices or "
                        "tensor_indices_or_sections")
    s = given[0]
    if isinstance(s, Tensor):
        if s.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {s.ndim} dims")
        if s.dtype is not T.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {s.dtype.name}")
        if _is_traced(s):
            raise _value_error("tensor_split", s, "a Python int or list of ints")
        v = np.asarray(s._data)
        s = int(v) if v.ndim == 0 else tuple(int(i) for i in v)
    elif isinstance(s, (list, tuple)):
        s = tuple(operator.index(i) for i in s)
    elif isinstance(s, bool) or not isinstance(s, int):
        raise TypeError(f"tensor_split(): argument 'indices_or_sections' must be an int, a "
                        f"tuple of ints or a tensor, not {type(s).__name__}")
    return _ops.tensor_split(input, s, dim)


@_state.located
def combinations(input, r: int = 2, with_replacement: bool = False):  # noqa: A002
    """The length-`r` combinations of a 1-D tensor's elements as rows, in itertools' order
    (torch.combinations; `with_replacement` as itertools.combinations_with_replacement).
    r 0 gives an empty 1-D tensor, r above the length an empty (0, r) one, as torch.  The
    rows are an index_select of `input` by constant indices, so gradients flow to it and it
    traces into tg.compile.

    Raises:
        RuntimeError: an input that is not 1-D, a negative r (torch's messages).
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"combinations(): argument 'input' must be a Tensor, got "
                        f"{type(input).__name__}")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input[:0]
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1, r)
    index = Tensor(rows.reshape(-1))
    return _ops.index_select(input, 0, index).reshape(rows.shape)


def gcd_(input, other):  # noqa: A002
    """torch.gcd_: `input` becomes gcd(input, other) in place (integer tensors)."""
    return input.gcd_(other)


def lcm_(input, other):  # noqa: A002
    """torch.lcm_: `input` becomes lcm(input, other) in place (integer tensors)."""
    return input.lcm_(other)


__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "bincount", "block_diag", "cartesian_prod",
           "combinations", "gcd_", "lcm_", "meshgrid", "tensor_split", "tril_indices", "triu_indices", "unique",
           "unique_consecutive"]


@attach
class _MoreMethods:
    def unique(self, sorted=True, return_inverse=False, return_counts=False,  # noqa: A002
               dim=None):
        return unique(self, sorted, return_inverse, return_counts, dim)

    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return unique_consecutive(self, return_inverse, return_counts, dim)

    def bincount(self, weights=None, minlength=0):
        return bincount(self, weights, minlength)

    def tensor_split(self, indices_or_sections=None, dim=0, **kwargs):
        return tensor_split(self, indices_or_sections, dim, **kwargs)

    def combinations(self, r=2, with_replacement=False):
        return combinations(self, r, with_replacement)

    # torch's in-place gcd_ / lcm_ (integer tensors, as the ops)
    def gcd_(self, other):
        return self._inplace_apply("gcd_", lambda: _ops.gcd(self, other))

    def lcm_(self, other):
        return self._inplace_apply("lcm_", lambda: _ops.lcm(self, other))
