"""Op database: as_strided (torch.as_strided on a tensor's row-major storage) and the two
primitives under its gradient and its writes, as_strided_backward (the cotangent added into
a zero storage) and as_strided_scatter (the strided positions set).

The samples are fresh tensors, whose storage is their value; views (whose storage is their
base's), writes through the result and torch 2.13's values and errors are in
tests/api/test_as_strided.py.  References index the flat input with the storage positions
computed on the host, so jax.vjp gives the scatter-add torch's backward gives (overlapping
strides accumulate).
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg
from tracegrad import _ops

from .core import C64, F64, I64, ErrorInput, OpInfo, Sample, cuniform, ints, uniform

OVERLAP = "overlapping strides: the cotangents of elements reading one storage element add up"


def _positions(size, stride, offset=0) -> np.ndarray:
    idx = np.full(tuple(size), offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n) * st).reshape(shape)
    return idx


def _onehot(idx, n, dtype) -> np.ndarray:
    """(len(idx), n) rows with a 1 at each position: a gather / scatter as a matmul."""
    return (idx.reshape(-1)[:, None] == np.arange(n)[None, :]).astype(dtype)


def _as_strided_ref(xp, x, size, stride, storage_offset=0):
    if 0 in size:
        return np.zeros(size, x.dtype)
    return xp.reshape(x, (-1,))[_positions(size, stride, storage_offset)]


def _as_strided_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(3, 4), (2, 2), (4, 1))),
            Sample((u(12), (3, 3), (1, 1))),                      # overlapping reads
            Sample((u(3, 4), (2, 3), (1, 4), 1)),                 # a transposed window
            Sample((u(2, 3), (2, 2, 3), (0, 3, 1))),              # a zero stride (broadcast)
            Sample((u(5), (), (), 3)),                            # 0-d
            Sample((u(2, 3), (0, 2), (1, 1), 6)),                 # empty, offset at the end
            Sample((ints(rng, (3, 4)), (2, 2), (1, 2), 2), dtype=I64)]


def _as_strided_errors():
    x = np.ones((3, 4), np.float32)
    return [
        ErrorInput((x, (4, 4), (4, 1)), RuntimeError, (
            "setStorage: sizes [4, 4], strides [4, 1], storage offset 0, and itemsize 4 "
            "requiring a storage size of 64 are out of bounds for storage of size 48",)),
        ErrorInput((x, (2, 2), (4, -1)), RuntimeError, (
            "as_strided: Negative strides are not supported at the moment, got strides: "
            "[4, -1]",)),
        ErrorInput((x, (2, 2), (4,)), RuntimeError, ("mismatch in length of strides and shape",)),
        ErrorInput((x, (2, 2), (4, 1), -1), RuntimeError, ("Tensor: invalid storage offset -1",)),
        ErrorInput((x, (2, 2), (4, 1), 1.5), TypeError, (
            "as_strided(): argument 'storage_offset' (position 4) must be int, not float",)),
        ErrorInput((x, [2.0, 2], (4, 1)), TypeError, (
            "as_strided(): argument 'size' (position 2) must be tuple of ints, but found "
            "element of type float at pos 0",)),
        ErrorInput(("abc", (2,), (1,)), TypeError, (
            "as_strided(): argument 'input' (position 1) must be Tensor, not str",)),
    ]


# ---- as_strided_backward: the adjoint ----------------------------------------------------------
def _backward_ref(xp, ct, *, shape, size, stride, storage_offset=0):
    n = math.prod(shape)
    if 0 in size:
        return np.zeros(shape, ct.dtype)
    m = _onehot(_positions(size, stride, storage_offset), n, ct.dtype)
    return xp.reshape(xp.reshape(ct, (-1,)) @ m, shape)


def _backward_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(2, 2),), {"shape": (3, 4), "size": (2, 2), "stride": (4, 1),
                                "storage_offset": 0}),
            Sample((u(3, 3),), {"shape": (12,), "size": (3, 3), "stride": (1, 1),
                                "storage_offset": 2}),          # overlap: cotangents add
            Sample((u(2, 2, 3),), {"shape": (2, 3), "size": (2, 2, 3), "stride": (0, 3, 1),
                                   "storage_offset": 0})]


# ---- as_strided_scatter: the write through a view ------------------------------------------
def _scatter_ref(xp, x, src, size, stride, storage_offset=0):
    n = x.size
    m = _onehot(_positions(size, stride, storage_offset), n, x.dtype)
    written = m.sum(axis=0)
    flat = xp.reshape(x, (-1,)) * (1 - written) + xp.reshape(src, (-1,)) @ m
    return xp.reshape(flat, x.shape)


def _scatter_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(3, 4), u(2, 2), (2, 2), (1, 4), 1)),
            Sample((u(6), u(3), (3,), (2,), 0)),
            Sample((u(2, 3), u(), (), (), 5))]


def _scatter_errors():
    return [ErrorInput((np.ones(6, np.float32), np.ones(2, np.float32), (3,), (1,), 0),
                       ValueError, ("as_strided_scatter", "src", "f32[3]", "f32[2]")),
            ErrorInput((np.ones(6, np.float32), np.ones(3, np.float32), (3,), (3,), 0),
                       ValueError, ("as_strided", "out of bounds for storage of size 24"))]


# ---- unfold: windows along one dim (torch 2.13's values and errors) ----------------------------
def _unfold_ref(xp, x, dimension, size, step):
    if x.ndim == 0:   # torch: one dim of size 1, no window dim added
        return xp.reshape(x, (1,))[:size]
    d = dimension % x.ndim
    windows = (x.shape[d] - size) // step + 1
    idx = np.arange(windows)[:, None] * step + np.arange(size)[None, :]
    return xp.moveaxis(xp.take(x, idx, axis=d), d + 1, -1)


def _unfold_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(2, 5), 1, 2, 1)),         # overlapping windows: their cotangents add
            Sample((u(10), 0, 3, 2)),
            Sample((u(10), 0, 3, 4)),           # a gap between windows: no gradient there
            Sample((u(3, 4, 2), -2, 2, 2)),
            Sample((u(4, 3), 0, 0, 1)),         # empty windows: torch's [5, 3, 0]
            Sample((u(), 0, 1, 1)),             # 0-d: one window of one element
            Sample((ints(rng, (2, 6)), 1, 3, 3), dtype=I64)]


def _unfold_errors():
    x = np.arange(10, dtype=np.float32)
    # torch 2.13's messages (it raises the same types)
    return [ErrorInput((x, 0, 11, 1), RuntimeError, (
                "unfold", "maximum size for tensor at dimension 0 is 10 but size is 11")),
            ErrorInput((x, 0, 3, 0), RuntimeError, ("unfold", "step is 0 but must be > 0")),
            ErrorInput((x, 0, -1, 1), RuntimeError, ("unfold", "size is -1 but must be >= 0")),
            ErrorInput((x, 2, 1, 1), IndexError, (
                "unfold", "expected to be in range of [-1, 0], but got 2")),
            ErrorInput((x, 0, 2, 1.5), TypeError, (
                "unfold(): argument 'step' (position 3) must be int, not float",))]


# ---- view_dtype: Tensor.view(dtype), the bytes reinterpreted (torch 2.13's shapes and texts) ------
def _view_dtype_ref(xp, x, dtype):
    want = tg.ir.types.as_dtype(dtype).numpy
    flat = np.ascontiguousarray(np.asarray(x)).reshape(-1)
    out = flat.view(np.uint8) != 0 if want == np.bool_ else flat.view(want)
    if not x.ndim:
        return out.reshape(())
    last = x.shape[-1] * x.dtype.itemsize // np.dtype(want).itemsize
    return out.reshape(x.shape[:-1] + (last,))


def _view_dtype_samples(rng, dtype):
    # float64 only: the sweep hands references float64 copies of float32 samples, whose bits
    # differ; other source dtypes come in as arrays of their own
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(3, 4), I64), dtype=I64),
            Sample((u(2, 3), tg.float32), dtype=tg.float32),    # the last dim doubles
            Sample((u(2, 2), tg.uint8), dtype=tg.uint8),
            Sample((u(), I64), dtype=I64),                      # 0-d: same element size only
            Sample((u(0, 3), I64), dtype=I64),
            Sample((u(2, 2), tg.complex128), dtype=tg.complex128),   # the last dim halves
            Sample((ints(rng, (2, 4), dtype=np.int32), I64), dtype=I64),
            Sample((np.array([0, 1, 2], np.uint8), tg.bool), dtype=tg.bool),   # 2 is True
            Sample((ints(rng, (2, 2), 0, 4, np.int16), tg.bfloat16), dtype=tg.bfloat16)]


def _view_dtype_complex(rng, dtype):
    # complex64 samples would reach the reference as complex128 (other bits): int64 words
    # viewed as complex64 there; complex128 views of and as other dtypes
    if dtype is C64:
        # small non-negative words: subnormal floats (negative ones would be NaNs)
        return [Sample((ints(rng, (2, 3), 0, 4), C64), dtype=C64),
                Sample((ints(rng, (2, 4), 0, 4, np.int32), C64), dtype=C64)]
    z = lambda *s: cuniform(rng, s, dtype)  # noqa: E731
    return [Sample((z(2, 3), F64), dtype=F64),                 # (real, imag) pairs
            Sample((z(3,), I64), dtype=I64),
            Sample((z(2, 2), tg.float32), dtype=tg.float32),   # four words each
            Sample((z(2,), dtype), dtype=dtype)]


def _view_dtype_errors():
    return [ErrorInput((np.ones((), np.float32), tg.int16), ValueError, (
                "view", "self.dim() cannot be 0 to view Float as Short (different element "
                "sizes)")),
            ErrorInput((np.ones(3, np.float32), tg.float64), ValueError, (
                "self.size(-1) must be divisible by 2 to view Float as Double (different "
                "element sizes), but got 3",))]


OPS = [
    OpInfo("view_dtype", _ops.view_dtype, _view_dtype_ref, _view_dtype_samples,
           differentiable=False, dtypes=(F64,), error_inputs=_view_dtype_errors,
           complex_samples=_view_dtype_complex),
    OpInfo("unfold", tg.Tensor.unfold, _unfold_ref, _unfold_samples, error_inputs=_unfold_errors, complex_samples=2),
    OpInfo("as_strided", tg.as_strided, _as_strided_ref, _as_strided_samples,
           error_inputs=_as_strided_errors, executor_samples=(0, 1, 3), note=OVERLAP,
           complex_samples=3),
    OpInfo("as_strided_backward", _ops.as_strided_backward, _backward_ref, _backward_samples,
           executor_samples=(1,), complex_samples=2),
    OpInfo("as_strided_scatter", _ops.as_strided_scatter, _scatter_ref, _scatter_samples,
           error_inputs=_scatter_errors, complex_samples=2,
           note="of overlapping writes the last in row-major order wins; every duplicate reads "
                "the written position's cotangent back"),
]
