"""torch's legacy typed constructors: ``tg.FloatTensor([...])``, ``tg.LongTensor(2, 3)`` ...

Each is a class whose call builds a `Tensor` of its dtype (torch.FloatTensor's forms:
data, sizes, nothing) and against which ``isinstance`` checks the dtype, as torch's
(``isinstance(tg.ones(2), tg.FloatTensor)`` is True).  ``x.type(tg.LongTensor)`` converts.
"""
from __future__ import annotations

from tracegrad.ir import types as T

from ._device import check_host
from ._legacy import _MISSING, TYPE_NAMES, legacy_array
from .tensor import Tensor


class _LegacyTensorType(type):
    def __call__(cls, data=_MISSING, *sizes, device=None):
        check_host(cls.__name__, device)
        return Tensor(legacy_array(cls.__name__, cls._legacy_dtype, data, sizes))

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype


def _make(dtype: T.DType) -> type:
    name = TYPE_NAMES[dtype]
    doc = (f"torch.{name}: ``{name}([...])`` a {dtype.name} tensor of the data, "
           f"``{name}(2, 3)`` zeros of that shape, ``{name}()`` shape (0,).")
    return _LegacyTensorType(name, (), {"_legacy_dtype": dtype, "__doc__": doc,
                                        "__module__": "tracegrad"})


FloatTensor = _make(T.float32)
DoubleTensor = _make(T.float64)
HalfTensor = _make(T.float16)
BFloat16Tensor = _make(T.bfloat16)
LongTensor = _make(T.int64)
IntTensor = _make(T.int32)
ShortTensor = _make(T.int16)
CharTensor = _make(T.int8)
ByteTensor = _make(T.uint8)
BoolTensor = _make(T.bool_)

__all__ = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor",
           "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor"]
