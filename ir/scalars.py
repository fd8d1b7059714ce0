"""How a Python number becomes an element of a tensor dtype: torch's two rules.

torch turns a Python number into a C++ `Scalar` (a 64-bit int, a 64-bit unsigned int for
2**63 .. 2**64 - 1, or a double) and then into the dtype an op computes in, one of two ways:

* a *wrapped number*: the operand of arithmetic, comparison and bitwise ops (``x + 300``,
  ``x == 257``, ``300 - x``, ``x.add_(300)``) becomes a 0-d tensor that is cast like any
  tensor: an integer keeps its low bits (two's complement), so ``uint8 + 300`` adds 44 and
  ``uint8 + (-1)`` subtracts 1 (`wrap_number`);
* a *Scalar argument* (``full``/``fill_`` values, ``masked_fill`` and ``where`` values,
  ``clamp`` bounds, a ``pow`` exponent, ``alpha``) is converted with an overflow check that
  raises "value cannot be converted to type uint8_t without overflow"; only an unsigned
  dtype lets a negative value in its own range wrap (``fill_(-1)`` gives 255), as c10's
  `overflows` does (`check_scalar`).

Both follow torch 2.13 (recorded in tests/api/test_scalar_wrap.py).
"""
from __future__ import annotations

import math

import numpy as np

from . import types as T

# the C++ type c10's overflow message names (Scalar arguments)
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "float32": "float", "float64": "double", "bool": "bool"}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": math.inf}


def int_range(dtype: T.DType) -> tuple[int, int]:
    """The smallest and largest value of integer `dtype`."""
    bits = 8 * dtype.itemsize
    if dtype.name.startswith("uint"):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def scalar_int(value: int) -> int:
    """`value` as torch's Scalar holds it: an int64, or a uint64 for 2**63 .. 2**64 - 1.

    Raises:
        OverflowError: beyond both, with CPython's words torch passes on ("int too big to
            convert", "can't convert negative int to unsigned").
    """
    if value < -(1 << 63):
        raise OverflowError("can't convert negative int to unsigned")
    if value >= 1 << 64:
        raise OverflowError("int too big to convert")
    return value


def wrap_number(value, dtype: T.DType):
    """The Python number operand `value` as an element of `dtype`, cast as torch casts a
    wrapped-number tensor: integers keep their low bits; other values are unchanged (NumPy
    rounds floats to the dtype, overflowing to inf as torch does)."""
    if type(value) is bool or not isinstance(value, int):
        return value
    value = scalar_int(value)
    if dtype.category != T.INT:
        return value
    lo, hi = int_range(dtype)
    if lo <= value <= hi:
        return value
    return (value - lo) % (hi - lo + 1) + lo


def overflow_error(what: str, value, dtype: T.DType) -> RuntimeError:
    """torch's error for a Scalar argument `value` that `dtype` cannot hold, led by the op."""
    return RuntimeError(f"{what}: value cannot be converted to type "
                        f"{_C_NAMES.get(dtype.name, dtype.name)} without overflow "
                        f"(got {value!r} for {dtype.name})")


def check_scalar(what: str, value, dtype: T.DType):
    """The Scalar argument `value` converted to an element of `dtype` (c10's checked
    conversion): a float truncates toward zero for an integer dtype; a negative value within
    an unsigned dtype's range wraps; anything else out of range raises.

    Raises:
        RuntimeError: "<what>: value cannot be converted to type uint8_t without overflow"
            (torch's words after the op's name).
        OverflowError: an int beyond 64 bits (`scalar_int`).
    """
    if isinstance(value, complex) or type(value) is bool:
        return value
    if isinstance(value, int):
        value = scalar_int(value)
    if dtype.category == T.INT:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise overflow_error(what, value, dtype)
            as_int = math.trunc(value)
        else:
            as_int = value
        lo, hi = int_range(dtype)
        # c10 lets a negative value into an unsigned type when its magnitude fits (wraps);
        # a negative float does not get that leniency (torch 2.13: fill_(-1.5) raises)
        if lo <= as_int <= hi:
            return as_int
        if lo == 0 and isinstance(value, int) and -hi <= as_int < 0:
            return as_int + hi + 1
        raise overflow_error(what, value, dtype)
    if dtype.category == T.FLOAT:
        limit = _FLOAT_MAX.get(dtype.name, math.inf)
        if math.isfinite(value) and abs(value) > limit:
            raise overflow_error(what, value, dtype)
    return value


def check_array(what: str, arr, dtype: T.DType) -> None:
    """torch.tensor's checked conversion of Python data (`arr`: the int64/uint64/float64
    array NumPy made of it) to `dtype`, elementwise as `check_scalar`; torch names the dtype
    ("value cannot be converted to type uint8 without overflow").

    Raises:
        ValueError: an int beyond int64 for an integer dtype ("Overflow when unpacking long
            long", torch's words).
        RuntimeError: a value `dtype` cannot hold.
    """
    if arr.dtype.kind == "u" and dtype.category != T.FLOAT and dtype.category != T.COMPLEX:
        raise ValueError(f"{what}: Overflow when unpacking long long")
    if dtype.category != T.INT or arr.size == 0 or arr.dtype.kind not in "iuf":
        return
    lo, hi = int_range(dtype)
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (np.trunc(arr) < lo) | (np.trunc(arr) > hi)
    else:   # a negative int within an unsigned dtype's range wraps, as in `check_scalar`
        bad = (arr > hi) | (arr < (-hi if lo == 0 else lo))
    if bad.any():
        raise RuntimeError(f"{what}: value cannot be converted to type {dtype.name} without "
                           f"overflow (got {arr[bad].flat[0].item()!r})")
