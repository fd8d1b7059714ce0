"""Scalar operands as tensors: one shared read-only constant per (value, dtype).

``x * 0.5`` in a loop would otherwise make a new 0-d tensor per call.  A
shared constant has the version counter `SHARED_CONSTANT`, never bumped;
the tape records it as `SHARED_VERSION`, and a view of one is taken of a
copy (eager mode), so nothing ever writes into it.
"""
from __future__ import annotations

import weakref

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.scalars import wrap_number

from ..tensor import Tensor, _new_tensor

CONSTANTS: dict = {}          # (type, value, DType) -> shared constant tensor
_NUMPY_DTYPE: dict = {}       # DType -> np.dtype (DType.numpy builds a new one per call)
SHARED_CONSTANT = [0]         # the version counter of the shared constants (never bumped)
SHARED_VERSION = (SHARED_CONSTANT, 0)   # what a tape node records for one of them
_MAX = 1024                   # cleared when full: a loop of ever new values cannot grow it


def shared_constant(value, dtype: T.DType) -> Tensor:
    """The constant tensor of Python number `value` as `dtype`: shared per (value, dtype);
    complex numbers and floats whose equality is not identity (0.0 == -0.0, NaN != NaN)
    get a new tensor each time (whose ``_vc`` is not `SHARED_CONSTANT`)."""
    key = (type(value), value, dtype)
    t = CONSTANTS.get(key)
    if t is not None:
        return t
    np_dtype = _NUMPY_DTYPE.get(dtype)
    if np_dtype is None:
        np_dtype = _NUMPY_DTYPE[dtype] = dtype.numpy
    # a wrapped number: an int keeps its low bits (uint8 + 300 adds 44, as torch)
    with np.errstate(over="ignore"):   # 70000 into float16 is inf, silently as in torch
        data = np.asarray(wrap_number(value, dtype) if type(value) is int else value,
                          dtype=np_dtype)
    if type(value) is complex or value != value or (value == 0 and type(value) is float):
        return scalar_tensor(data, False)   # not shared (its own version counter)
    data.flags.writeable = False
    t = _new_tensor(data, False)
    t._vc = SHARED_CONSTANT
    if len(CONSTANTS) >= _MAX:
        CONSTANTS.clear()
    CONSTANTS[key] = t
    return t


# Unshared tensors made of Python numbers, by id (rare: complex/NaN/0.0 values, and every
# scalar while saved-tensor hooks are active); weak, so they go with their tensors
_SCALARS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def scalar_tensor(data, inference: bool) -> Tensor:
    """A new (unshared) tensor of a Python number operand, known as one to `is_scalar`."""
    t = _new_tensor(data, inference)
    _SCALARS[id(t)] = t
    return t


def is_scalar(t: Tensor) -> bool:
    """Was `t` made from a Python number operand (torch saves those as scalars, not tensors,
    and saved-tensor hooks never see them)?"""
    return t._vc is SHARED_CONSTANT or _SCALARS.get(id(t)) is t
