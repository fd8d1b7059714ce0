"""Argument checks of the public functions, as torch checks them: a ``dtype=`` that is a
dtype, a flag that is a bool, and a size the memory can hold, refused before allocating.
"""
from __future__ import annotations

import math
import os

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import AllocationError

from .tensor import Tensor


def dtype_arg(name: str, dtype, default=None) -> T.DType | None:
    """The ``dtype=`` argument of creation function `name`: a tg dtype, or one of Python's
    float, int, bool, complex (as `T.as_dtype` maps them); `default` when None.

    Raises:
        TypeError: anything else (a string, a NumPy dtype), in torch 2.13's words.
    """
    if dtype is None:
        return default
    if isinstance(dtype, T.DType):
        return dtype
    if dtype in (float, int, bool, complex):
        return T.as_dtype(dtype)
    raise TypeError(f"{name}(): argument 'dtype' must be torch.dtype, not {type(dtype).__name__}")


def bool_arg(name: str, arg: str, value) -> bool:
    """torch checks a flag's type: ``requires_grad="yes"`` is a TypeError, not truthy."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type(value).__name__}")
    return bool(value)


def leaf(name: str, t: Tensor, requires_grad) -> Tensor:
    return t.requires_grad_(True) if bool_arg(name, "requires_grad", requires_grad) else t


# below this many bytes the machine's memory is not read (that costs a file read)
_CHECKED_FROM = 1 << 30


def _available_bytes() -> int:
    """The memory an allocation can still get: Linux's MemAvailable plus free swap, else the
    physical memory."""
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        kib = int(info["MemAvailable"].split()[0]) + int(info.get("SwapFree", "0 kB").split()[0])
        return kib * 1024
    except (OSError, KeyError, ValueError):
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return 1 << 62


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if n < 1024 or unit == "EiB":
            return f"{n:.2f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return f"{n} B"   # not reached


def check_alloc(name: str, shape: tuple, dt: T.DType, copies: int = 1) -> None:
    """Refuse, before allocating, a tensor of `shape` and `dt` that no array can hold or that
    is larger than the memory available (`copies`: how many such buffers the function
    needs at once).

    Raises:
        AllocationError (a MemoryError): naming `name`, the shape, the dtype and the bytes
            (torch 2.13 raises RuntimeError "... can't allocate memory: you tried to
            allocate N bytes", or "Storage size calculation overflowed" past 2**63).
    """
    numel = math.prod(shape)
    nbytes = numel * dt.itemsize
    if nbytes < _CHECKED_FROM:
        return
    what = f"{name}: a tensor of shape {list(shape)} and dtype {dt.name} needs {nbytes} bytes"
    if nbytes * copies >= 1 << 63:
        raise AllocationError(f"{what}, more than any array can hold (2**63 bytes)")
    avail = _available_bytes()
    if nbytes * copies > avail:
        raise AllocationError(f"{what} ({_human(nbytes * copies)}), more than the "
                              f"{_human(avail)} of memory available")

