"""Tensor creation: tensor, zeros, ones, full, empty, eye, arange, linspace, randn, rand,
randint, randperm, the ``*_like`` forms, from_numpy ... (the random ones are defined in
_random_creation.py and re-exported here).

Defaults follow torch: Python floats -> float32, ints -> int64, bools -> bool;
NumPy arrays keep their dtype.  Every function takes torch's ``device=`` keyword:
None / "cpu" (the host), "xla" or "cuda" (a jax device: the tensor's storage is a jax
array there, `_device.creates_on_device`); the ``*_like`` forms default to their input's
device; any other device raises NotImplementedError (`_device.check_device`).
"""
from __future__ import annotations

import math
import operator
import sys
import warnings

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.builder import py_number
from tracegrad.ir.errors import with_location
from tracegrad.ir.scalars import check_array, check_scalar

from . import _generator, _ops, _state
from ._args import bool_arg, check_alloc, dtype_arg, leaf
from ._device import check_device, creates_on_device
from .tensor import Tensor

_INVALID = {   # torch 2.13's accepted forms, named in its "invalid combination" TypeError
    "size": "(tuple of ints size, *, torch.Generator generator, torch.dtype dtype = None, "
            "torch.device device = None, bool requires_grad = False)",
    "randint": "(int high, tuple of ints size, *, torch.Generator generator, ...)\n"
               " * (int low, int high, tuple of ints size, *, torch.Generator generator, ...)",
}


def _invalid(name: str, args, form: str) -> TypeError:
    got = ", ".join(type(a).__name__ for a in args)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n * {_INVALID[form]}")


def _dim(v) -> int | None:
    """`v` as a dimension (an int, a NumPy integer, an integer 0-d tensor), None if not one."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def parse_size(name: str, args: tuple, size=None, *, strict: bool = False) -> tuple:
    """torch's ``size`` of a creation function: ints (``zeros(2, 3)``), one tuple, list or
    `tg.Size` (``zeros((2, 3))``), or the ``size=`` keyword.

    Raises:
        TypeError: no size, a size given twice, a non-int entry, or a tuple followed by more
            arguments, in torch 2.13's words; `strict` (rand/randn) words the last as torch's
            "invalid combination".
        RuntimeError: a negative dimension.
    """
    if size is not None:
        if args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        args = (size,)
    if not args:
        if strict:
            raise _invalid(name, args, "size")
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    first = args[0]
    if isinstance(first, (tuple, list)):
        if len(args) > 1:
            if strict:
                raise _invalid(name, args, "size")
            raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
        items, packed = tuple(first), True
    else:
        items, packed = args, False
    out = []
    for pos, v in enumerate(items):
        d = _dim(v)
        if d is None:
            kind = type(v).__name__
            if pos == 0 and not packed and len(items) == 1:
                msg = f"(position 1) must be tuple of ints, not {kind}"
            elif pos == 0:
                msg = f"(position 1) must be tuple of ints, but found element of type {kind} at pos 0"
            else:
                msg = (f"failed to unpack the object at pos {pos + 1} with error \"type must be "
                       f"tuple of ints,but got {kind}\"")
            raise TypeError(f"{name}(): argument 'size' {msg}")
        if not -(1 << 63) <= d < 1 << 63:   # torch 2.13 unpacks each entry as an int64
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{pos + 1} with error \"Overflow when unpacking long long\"")
        out.append(d)
    if any(d < 0 for d in out):
        if name == "zeros":   # torch 2.13 words zeros' own check so
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
    return tuple(out)


# what the generator module kept the names of (tg.manual_seed & co. are defined there); _key is
# the default generator's key tensor itself (advanced in place, so the alias stays current)
manual_seed, get_rng_state, set_rng_state = (_generator.manual_seed, _generator.get_rng_state,
                                             _generator.set_rng_state)
_key = _generator.default_generator._key


def _python_dtype(arr: np.ndarray) -> T.DType:
    kind = arr.dtype.kind
    if kind == "b":
        return T.bool_
    if kind in "iu":
        return T.int64
    if kind == "f":
        return T.DEFAULT_FLOAT
    if kind == "c":   # Python complex numbers: the default float's complex dtype (complex64)
        return T.DEFAULT_FLOAT.to_complex()
    raise TypeError(f"tensor(): cannot build a tensor from data of NumPy dtype {arr.dtype}")


def _wide_ints(arr: np.ndarray, dtype) -> np.ndarray:
    """The numbers of object array `arr` (Python data holding an int beyond 64 bits) as
    floats when they become a floating or complex tensor (`dtype`, else the type the data
    infers), else torch 2.13's ValueError ("Overflow when unpacking long long").

    Raises:
        TypeError: an item that is not a number.
        OverflowError: an int too large even for a float (Python's own words, as torch).
    """
    items = arr.ravel().tolist()
    if not all(isinstance(v, (bool, int, float, complex)) for v in items):
        raise TypeError("not numbers")
    if dtype is None:
        cplx, flt = (any(isinstance(v, k) for v in items) for k in (complex, float))
        dtype = (T.DEFAULT_FLOAT.to_complex() if cplx else T.DEFAULT_FLOAT if flt else
                 T.int64)
    if dtype.category == T.COMPLEX:
        return np.array([complex(v) for v in items]).reshape(arr.shape)
    if dtype.category == T.FLOAT:
        return np.array([float(v) for v in items]).reshape(arr.shape)
    raise ValueError("tensor: Overflow when unpacking long long")


COPY_CONSTRUCT_WARNING = (
    "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
    "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).")


def _copy_construct_warning() -> None:
    """torch 2.13's UserWarning for ``tensor(a_tensor)`` (``Tensor.new_tensor`` names itself),
    at the user's line."""
    f, level, msg = sys._getframe(0), 1, COPY_CONSTRUCT_WARNING
    while f is not None:
        name = f.f_globals.get("__name__", "")
        if name != "tracegrad" and not name.startswith("tracegrad."):
            break
        if f.f_code.co_name == "new_tensor":
            msg = COPY_CONSTRUCT_WARNING.replace("torch.tensor(", "tensor.new_tensor(")
        f, level = f.f_back, level + 1
    warnings.warn(msg, UserWarning, stacklevel=level)


@creates_on_device
def tensor(data, dtype=None, requires_grad: bool = False, device=None) -> Tensor:
    """A new leaf tensor holding a copy of `data` (torch.tensor).

    Args:
        data: Python number, nested lists, NumPy array or Tensor.
        dtype: result dtype; default float32 for Python floats, complex64 for Python
            complex numbers, int64 for ints, bool for bools, the array's dtype for NumPy
            arrays (complex128 stays complex128).
    Raises:
        TypeError: data of an unsupported type (strings, objects, ragged lists).
        RuntimeError: requires_grad on a dtype that is neither floating nor complex.
        NotImplementedError: a device other than "cpu".
    """
    check_device("tensor", device)
    dtype = dtype_arg("tensor", dtype)
    requires_grad = bool_arg("tensor", "requires_grad", requires_grad)
    if isinstance(data, Tensor):
        _copy_construct_warning()
        data = data._concrete("tensor(tensor)")
        arr = np.array(data)
        dt = T.from_numpy(arr.dtype)
    elif isinstance(data, np.ndarray) or isinstance(data, np.generic):
        arr = np.array(data)
        dt = T.from_numpy(arr.dtype)
    else:
        try:
            arr = np.array(data)
        except ValueError as e:
            raise TypeError(f"tensor(): data is not a rectangular nested list of numbers ({e})") from None
        if arr.dtype == object:   # ints beyond 64 bits (NumPy keeps them as objects)
            try:
                arr = _wide_ints(arr, dtype)
            except TypeError:
                raise TypeError(f"tensor(): could not infer a dtype from {type(data).__name__} "
                                "data") from None
            except (ValueError, OverflowError) as e:
                raise with_location(e, _state.user_location()) from None
        if arr.dtype.kind in "USO":
            raise TypeError(f"tensor(): could not infer a dtype from {type(data).__name__} data")
        dt = _python_dtype(arr)
        try:   # Python numbers: torch's checked conversion (tensor([300], dtype=uint8) raises)
            check_array("tensor", arr, dtype or dt)
        except (RuntimeError, ValueError) as e:
            raise with_location(e, _state.user_location()) from None
    if dtype is not None:
        dt = dtype
    check_alloc("tensor", arr.shape, dt)
    t = Tensor(np.array(arr, dtype=dt.numpy, order="C"))
    if requires_grad:
        t.requires_grad = True
    return t


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with `arr`, dtype kept (torch.from_numpy).

    Raises:
        TypeError: `arr` not a NumPy array, or of a dtype tracegrad has not.
        ValueError: a negative stride (``arr[::-1]``), as torch 2.13: copy the array first.
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(arr).__name__}")
    T.from_numpy(arr.dtype)
    if any(st < 0 for st in arr.strides):   # torch 2.13's words
        raise ValueError("from_numpy: At least one stride in the given numpy array is negative, "
                         "and tensors with negative strides are not currently supported. (You "
                         "can probably work around this by making a copy of your array  with "
                         f"array.copy().) (strides {arr.strides}, shape {list(arr.shape)})")
    return Tensor(arr)


@creates_on_device
def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` itself when it is a tensor and no dtype is asked for, else `tensor(data, dtype)`
    (torch.as_tensor; a NumPy array is copied here, torch shares it); a tensor of another
    dtype is converted, keeping its history, as torch."""
    check_device("as_tensor", device)
    if isinstance(data, Tensor):   # torch: the tensor itself, or its .to(dtype) (with history)
        return data if dtype is None else data.to(dtype_arg("as_tensor", dtype))
    return tensor(data, dtype)


@creates_on_device
def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
         generator=None) -> Tensor:
    """`fill_value` everywhere, shape `size` (torch.full); dtype inferred from the value
    (float32 for a Python float, int64 for an int, bool, complex64) unless given.

    Raises:
        TypeError: `size` not a tuple, list or `tg.Size` of ints (torch's message).
    """
    check_device("full", device)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    size = parse_size("full", (size,))
    dt = dtype_arg("full", dtype) or T.result_type([], [], [fill_value])
    if isinstance(fill_value, (int, float, np.number)):   # a Scalar argument: overflow check
        try:
            fill_value = check_scalar("full", py_number(fill_value), dt)
        except (RuntimeError, OverflowError) as e:
            raise with_location(e, _state.user_location()) from None
    bool_arg("full", "requires_grad", requires_grad)
    check_alloc("full", size, dt)
    return leaf("full", _ops.full(size, fill_value, dt), requires_grad)


def _filled(name: str, value, args, size, dtype, requires_grad) -> Tensor:
    size = parse_size(name, args, size)
    dt = dtype_arg(name, dtype, T.DEFAULT_FLOAT)
    bool_arg(name, "requires_grad", requires_grad)
    check_alloc(name, size, dt)
    return leaf(name, _ops.full(size, value, dt), requires_grad)


@creates_on_device
def zeros(*args, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of shape `size` (torch.zeros), float32 unless `dtype` is given.  The size is
    ints (``zeros(2, 3)``), one tuple/list/`tg.Size`, or ``size=``; errors as `parse_size`."""
    check_device("zeros", device)
    return _filled("zeros", 0, args, size, dtype, requires_grad)


@creates_on_device
def ones(*args, size=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of shape `size` (torch.ones), float32 unless `dtype` is given; size forms and
    errors as `zeros`."""
    check_device("ones", device)
    return _filled("ones", 1, args, size, dtype, requires_grad)


@creates_on_device
def empty(*args, size=None, dtype=None, device=None, requires_grad: bool = False,
          memory_format=None) -> Tensor:
    """A tensor of shape `size` whose values are unspecified (torch.empty); here they are
    zeros, since a NumPy/XLA buffer is not cheaper left uninitialized.  float32 by default;
    size forms and errors as `zeros`."""
    check_device("empty", device)
    return _filled("empty", 0, args, size, dtype, requires_grad)


def _like(make, name: str, doc: str):
    """torch's ``<make>_like(t, dtype=None, *, device=None, requires_grad=False)``: `make` of
    `t`'s shape, in `t`'s dtype unless `dtype` is given."""
    def like(t: Tensor, dtype=None, *, device=None, requires_grad: bool = False,
             memory_format=None) -> Tensor:
        check_device(name, device)
        return make(t.shape, dtype=dtype_arg(name, dtype, t.dtype), requires_grad=requires_grad)
    like.__name__ = like.__qualname__ = name
    like.__doc__ = doc
    return creates_on_device(like)   # on `t`'s device unless `device` says otherwise


zeros_like = _like(zeros, "zeros_like", "torch.zeros_like: zeros of `t`'s shape, in `t`'s "
                   "dtype unless `dtype` is given.")
ones_like = _like(ones, "ones_like", "torch.ones_like: ones of `t`'s shape, in `t`'s dtype "
                  "unless `dtype` is given.")


@creates_on_device
def full_like(t: Tensor, fill_value, dtype=None, *, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    """torch.full_like: `fill_value` in `t`'s shape and dtype (unless `dtype` is given; a
    float value in an integer dtype is truncated, as torch)."""
    check_device("full_like", device)
    return full(t.shape, fill_value, dtype=dtype_arg("full_like", dtype, t.dtype),
                requires_grad=requires_grad)


empty_like = _like(zeros, "empty_like", "torch.empty_like; zeros here, as `empty`.")


@creates_on_device
def eye(n: int, m: int | None = None, *, dtype=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """The `n` x `m` identity matrix (m defaults to n): ones on the diagonal (torch.eye).

    Returns: shape ``(n, m)``, float32 unless `dtype` is given.
    Raises:
        RuntimeError: a negative `n` or `m` (torch's message).
        NotImplementedError: a device other than "cpu".
    """
    check_device("eye", device)
    m = n if m is None else m
    for arg, v in (("n", n), ("m", m)):
        if _dim(v) is None:
            raise TypeError(f"eye(): argument '{arg}' must be int, not {type(v).__name__}")
        if v < 0:
            raise RuntimeError(f"eye: {arg} must be greater or equal to 0, got {v}")
    dt = dtype_arg("eye", dtype, T.DEFAULT_FLOAT)
    bool_arg("eye", "requires_grad", requires_grad)
    check_alloc("eye", (n, m), dt, copies=2)   # the bool comparison, then the result
    rows = _ops.reshape(_ops.arange(0, n, 1, T.int64), (n, 1))
    t = _ops.convert(_ops.eq(rows, _ops.arange(0, m, 1, T.int64)), dt)
    return leaf("eye", t, requires_grad)


@creates_on_device
def linspace(start, end, steps: int, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """`steps` values evenly spaced from `start` to `end`, both included (torch.linspace).

    Computed as torch's CPU kernel does, so float32 results match it bit for bit: the step
    ``(end - start) / (steps - 1)`` in the result dtype, the first half counted up from
    `start` and the second half down from `end` (so the last value is exactly `end`).
    Integer dtypes truncate start and end, step in float64, and truncate each value.

    Args:
        start, end: Python numbers.
        steps: number of values, >= 0.
        dtype: float32 (the default, whatever the type of start and end), another float or
            an integer dtype.
    Returns: shape ``(steps,)``.
    Raises:
        RuntimeError: negative `steps` (torch's message).
        NotImplementedError: a complex dtype, or a device other than "cpu".
    """
    check_device("linspace", device)
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("linspace: number of steps must be non-negative")
    dt = dtype_arg("linspace", dtype, T.DEFAULT_FLOAT)
    bool_arg("linspace", "requires_grad", requires_grad)
    if dt.is_complex:
        raise NotImplementedError(f"linspace: complex dtype {dt.name} is not supported yet")
    check_alloc("linspace", (steps,), dt if dt.is_floating_point else T.float64, copies=4)
    floating = dt.is_floating_point
    if steps <= 1:   # torch: [start] (no step is computed), or empty
        t = full((steps,), start if floating else int(start), dtype=dt)
        return leaf("linspace", t, requires_grad)
    if floating:   # start, end and step in the result dtype, as torch's scalar_t
        s, e = dt.numpy.type(start), dt.numpy.type(end)
        step = float((e - s) / dt.numpy.type(steps - 1))
        work = dt
    else:          # torch: integral start/end, double step
        s, e = int(start), int(end)
        step = (e - s) / (steps - 1)
        work = T.float64
    idx = _ops.arange(0, steps, 1, work)
    up = _ops.add(_ops.mul(idx, step), float(s))
    down = _ops.sub(float(e), _ops.mul(_ops.sub(float(steps - 1), idx), step))
    t = _ops.where(_ops.lt(idx, float(steps // 2)), up, down)
    t = t if floating else _ops.convert(t, dt)
    return leaf("linspace", t, requires_grad)


def _range_scalar(v):
    """A bound of arange as torch 2.13 reads a Python number (an int64, else a uint64
    Scalar): ints outside [-2**63, 2**64) raise its OverflowError."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)):
        v = int(v)
        if v >= 1 << 64:
            raise OverflowError("arange: int too big to convert")
        if v < -(1 << 63):
            raise OverflowError("arange: can't convert negative int to unsigned")
    return v


@creates_on_device
def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values in [start, end) by step (torch.arange); int64 unless a bound is a float.

    Raises:
        TypeError: a bound that is not a number, a bad dtype or requires_grad.
        OverflowError: an int bound outside [-2**63, 2**64) (torch's words).
        RuntimeError: a zero step, bounds the step's sign cannot reach, an infinite or NaN
            bound, an int bound of 2**63 or more for an integer dtype, 2**63 values or
            more (torch's words).
        AllocationError: more values than memory holds (`check_alloc`).
    """
    check_device("arange", device)
    if end is None:
        start, end = 0, start
    for arg, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, Tensor):
            v = v.item()
        if not isinstance(v, (int, float, np.integer, np.floating)) or isinstance(v, complex):
            raise TypeError(f"arange(): argument '{arg}' must be Number, not {type(v).__name__}")
    start, end, step = (_range_scalar(v.item() if isinstance(v, Tensor) else v)
                        for v in (start, end, step))
    if dtype is None:
        dt = T.result_type([], [], [start, end, step])
        if dt is T.bool_:
            dt = T.int64
    else:
        dt = dtype_arg("arange", dtype)
    bool_arg("arange", "requires_grad", requires_grad)
    if dt.category in (T.INT, T.BOOL) and any(isinstance(v, int) and v >= 1 << 63
                                             for v in (start, end, step)):
        # torch 2.13: such a number is a uint64 Scalar, then converted to int64
        raise RuntimeError("arange: value cannot be converted to type int64_t without overflow")
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):   # torch 2.13's words
        raise RuntimeError(f"arange: unsupported range: {start:g} -> {end:g}")
    if (end - start) * step < 0:   # torch 2.13's words
        raise RuntimeError(f"arange: upper bound and lower bound inconsistent with step sign "
                           f"(start={start}, end={end}, step={step})")
    n = math.ceil((end - start) / step)
    if n >= 1 << 63:   # torch 2.13's words
        raise RuntimeError(f"arange: invalid size, possible overflow? ({n} values from "
                           f"start={start}, end={end}, step={step})")
    check_alloc("arange", (n,), dt)
    return leaf("arange", _ops.arange(start, end, step, dt), requires_grad)


# the public functions, each raising its argument errors at the user's line
# (the random ones are wrapped in _random_creation.py)
for _name in ("tensor", "from_numpy", "as_tensor", "full", "zeros", "ones", "empty",
              "zeros_like", "ones_like", "full_like", "empty_like", "eye", "linspace", "arange"):
    globals()[_name] = _state.located(globals()[_name])


# randn, rand, randint, randperm and their *_like forms live in _random_creation.py (imported
# last: it builds on parse_size and _like); re-exported, so `_creation.randn` keeps working
from ._random_creation import (  # noqa: E402,F401
    rand, rand_like, randint, randint_like, randn, randn_like, randperm)
