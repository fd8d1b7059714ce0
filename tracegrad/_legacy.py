"""torch's legacy tensor-type names and constructor forms, without the Tensor class.

``Tensor.type()`` answers torch's type strings (``'torch.FloatTensor'``: the ``torch.``
prefix is torch's, kept so that ported scripts comparing with torch's strings keep
working; ``'tracegrad.FloatTensor'`` is accepted as input too), and the legacy
constructors ``tg.Tensor([...])``, ``tg.Tensor(2, 3)``, ``tg.LongTensor([...])`` build
their NumPy value here (tensor.py and _tensor_types.py wrap it).
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T

# torch's legacy type names, by dtype
TYPE_NAMES = {T.float32: "FloatTensor", T.float64: "DoubleTensor", T.float16: "HalfTensor",
              T.bfloat16: "BFloat16Tensor", T.int64: "LongTensor", T.int32: "IntTensor",
              T.int16: "ShortTensor", T.int8: "CharTensor", T.uint8: "ByteTensor",
              T.bool_: "BoolTensor", T.complex64: "ComplexFloatTensor",
              T.complex128: "ComplexDoubleTensor"}
DTYPE_OF_NAME = {name: dt for dt, name in TYPE_NAMES.items()}


def type_string(dtype: T.DType) -> str:
    """torch's ``Tensor.type()`` string for `dtype`, e.g. ``'torch.FloatTensor'``."""
    return f"torch.{TYPE_NAMES[dtype]}"


def dtype_of_type_name(name: str) -> T.DType:
    """The dtype a legacy type string names (``'torch.LongTensor'``, ``'tracegrad.LongTensor'``).

    Raises:
        ValueError: an unknown name (torch's ``invalid type: '...'``).
    """
    prefix, _, short = name.rpartition(".")
    dt = DTYPE_OF_NAME.get(short) if prefix in ("torch", "tracegrad") else None
    if dt is None:
        raise ValueError(f"invalid type: {name!r}")
    return dt


def legacy_array(ctor: str, dtype: T.DType, data, sizes: tuple) -> np.ndarray:
    """The value of torch's legacy constructor ``ctor(data)`` or ``ctor(*sizes)``.

    ``ctor()``: shape (0,); ``ctor(2, 3)`` / ``ctor(Size)``: zeros of that shape (torch leaves
    it uninitialized; NumPy zeros cost the same); ``ctor([...])`` / ``ctor(tensor)``: the data
    converted to `dtype` (floats truncated for integer types, as torch).

    Raises:
        TypeError: a string or other non-numeric data (torch's ``new(): invalid data type``).
    """
    if data is _MISSING:
        return np.zeros((0,), dtype=dtype.numpy)
    if isinstance(data, bool) or not isinstance(data, int):
        if sizes:
            raise TypeError(f"{ctor}(): expected sizes as ints, got "
                            f"({', '.join(type(a).__name__ for a in (data, *sizes))})")
        if isinstance(data, tuple) and all(isinstance(s, int) and not isinstance(s, bool)
                                           for s in data) and type(data).__name__ == "Size":
            return np.zeros(tuple(data), dtype=dtype.numpy)   # Tensor(torch.Size([2]))
        if isinstance(data, (str, bytes, dict, set)):
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        try:
            arr = np.asarray(data)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{ctor}(): could not build a tensor from {type(data).__name__} "
                            f"data ({e})") from None
        if arr.dtype.kind not in "biufc":
            raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
        if arr.ndim == 0:   # torch: ctor(2.5) is not a size -> TypeError in torch too
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        return arr.astype(dtype.numpy)
    for s in (data, *sizes):
        if isinstance(s, bool) or not isinstance(s, int):
            raise TypeError(f"{ctor}(): expected sizes as ints, got "
                            f"({', '.join(type(a).__name__ for a in (data, *sizes))})")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list((data, *sizes))}")
    return np.zeros((data, *sizes), dtype=dtype.numpy)


class _Missing:
    def __repr__(self) -> str:
        return "<no data>"


_MISSING = _Missing()
