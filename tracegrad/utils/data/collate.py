"""Batch assembly (torch.utils.data._utils.collate): default_collate and default_convert.

default_collate stacks a list of samples into a batch the way torch does: tensors and
NumPy arrays are stacked along a new first dimension, Python floats become float64,
ints int64 and bools bool tensors, NumPy scalars keep their dtype, strings stay a
list, and dicts, namedtuples, tuples and lists are collated field by field (a tuple
comes back as a list, as torch).
"""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

from tracegrad.ir import types as T

from ... import _creation, _ops
from ...tensor import Tensor

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _string_array(a: np.ndarray) -> bool:
    return a.dtype.char in "SaUO"


def default_convert(data):
    """Each NumPy array or scalar in `data` as a tensor, the containers kept
    (torch.utils.data.default_convert; what DataLoader does with ``batch_size=None``)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, (np.ndarray, np.generic)) and not isinstance(data, np.str_):
        return data if _string_array(np.asarray(data)) else _creation.as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            return type(data)({k: default_convert(v) for k, v in data.items()})
        except TypeError:
            return {k: default_convert(v) for k, v in data.items()}
    if _is_namedtuple(data):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def _stack_tensors(batch) -> Tensor:
    shapes = [t.shape for t in batch]
    for i, s in enumerate(shapes):
        if s != shapes[0]:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shapes[0])} at entry 0 and {list(s)} at entry {i}")
    if all(isinstance(t._data, (np.ndarray, np.generic)) and not t.requires_grad for t in batch):
        return Tensor(np.stack([t._data for t in batch]))   # one copy, no recorded ops
    return _ops.stack(list(batch), 0)


def default_collate(batch):
    """A list of samples as one batch (torch.utils.data.default_collate; see the module doc).

    Raises:
        RuntimeError: tensors or arrays of different shapes, sequences of different lengths
            (torch's words).
        TypeError: an element of another type (torch's words).
    """
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray):
        if _string_array(elem):
            raise TypeError(_ERROR.format(elem.dtype))
        shapes = [np.shape(b) for b in batch]
        for i, s in enumerate(shapes):
            if s != shapes[0]:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                                   f"{list(shapes[0])} at entry 0 and {list(s)} at entry {i}")
        return Tensor(np.ascontiguousarray(np.stack(batch)))
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        return Tensor(np.array(batch, dtype=elem.dtype))
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=T.float64)
    if isinstance(elem, (bool, int)):
        return _creation.tensor(batch)
    if isinstance(elem, numbers.Complex) and not isinstance(elem, numbers.Real):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        out = {k: default_collate([d[k] for d in batch]) for k in elem}
        try:
            return type(elem)(out)
        except TypeError:
            return out
    if _is_namedtuple(elem):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns   # torch's backward-compatible list
        try:
            return type(elem)(columns)
        except TypeError:
            return columns
    raise TypeError(_ERROR.format(type(elem)))


__all__ = ["default_collate", "default_convert"]
