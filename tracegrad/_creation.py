"""Tensor creation: tensor, zeros, ones, full, randn, rand, arange, from_numpy ...

Defaults follow torch: Python floats -> float32, ints -> int64, bools -> bool;
NumPy arrays keep their dtype.
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T

from . import _ops, _state
from .tensor import Tensor, _varargs

# The global PRNG key (torch's default generator). A u32[2] tensor advanced in place by
# every draw, so `tg.compile` lifts it like any other state: compiled and eager runs with
# the same seed draw the same numbers (see ir/ops/random.py).
_key = Tensor(np.array([0, 0x5EED], dtype=np.uint32))


def manual_seed(seed: int) -> None:
    """Seed the generator behind rand/randn/randint/dropout (torch.manual_seed).

    The stream is Threefry-2x32, identical on the interpreter and on jax, but
    not torch's Philox/MT19937 stream: the same seed gives other numbers than torch.
    """
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    from .autograd.grad_mode import no_grad
    with no_grad():
        _key.copy_(Tensor(np.array([seed >> 32, seed & 0xFFFFFFFF], dtype=np.uint32)))


def get_rng_state() -> Tensor:
    """The generator's state as a new uint32 tensor of shape (2,) (torch.get_rng_state; torch's
    is a uint8 byte tensor of its own generator). Save it with `tg.save` to resume a stream."""
    return Tensor(_key._data.copy())


def set_rng_state(new_state: Tensor) -> None:
    """Restore a state `get_rng_state` returned (torch.set_rng_state).

    Raises:
        TypeError: `new_state` is not a uint32 tensor of shape (2,).
    """
    if not isinstance(new_state, Tensor) or new_state.shape != (2,) or \
            new_state._data.dtype != np.uint32:
        what = new_state._type if isinstance(new_state, Tensor) else type(new_state).__name__
        raise TypeError(f"set_rng_state: expected the uint32[2] tensor get_rng_state returns, "
                        f"got {what}")
    from .autograd.grad_mode import no_grad
    with no_grad():
        _key.copy_(new_state)


def _draw(size, dtype, distribution: str) -> Tensor:
    """Values from the global stream; advances the key in place (traced under tg.compile)."""
    from .autograd.grad_mode import no_grad
    with no_grad():
        out = _ops.random(_key, size, dtype, distribution)
        _key.copy_(_ops.rng_next_key(_key))
    return out


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
    """
    if isinstance(data, Tensor):
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
        if arr.dtype == object or arr.dtype.kind in "USO":
            raise TypeError(f"tensor(): could not infer a dtype from {type(data).__name__} data")
        dt = _python_dtype(arr)
    if dtype is not None:
        dt = T.as_dtype(dtype)
    t = Tensor(np.array(arr, dtype=dt.numpy, order="C"))
    if requires_grad:
        t.requires_grad = True
    return t


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing memory with `arr`, dtype kept (torch.from_numpy)."""
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy expects a numpy.ndarray, got {type(arr).__name__}")
    T.from_numpy(arr.dtype)
    return Tensor(arr)


def as_tensor(data, dtype=None) -> Tensor:
    return data if isinstance(data, Tensor) and dtype is None else tensor(data, dtype)


def full(size, fill_value, *, dtype=None, requires_grad: bool = False) -> Tensor:
    if dtype is None:
        dtype = T.result_type([], [], [fill_value])
    t = _ops.full(tuple(_varargs((size,)) if isinstance(size, int) else size), fill_value,
                  T.as_dtype(dtype))
    return t.requires_grad_(True) if requires_grad else t


def zeros(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return full(_varargs(size), 0, dtype=dtype or T.DEFAULT_FLOAT, requires_grad=requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return full(_varargs(size), 1, dtype=dtype or T.DEFAULT_FLOAT, requires_grad=requires_grad)


def zeros_like(t: Tensor, dtype=None) -> Tensor:
    return zeros(t.shape, dtype=dtype or t.dtype)


def ones_like(t: Tensor, dtype=None) -> Tensor:
    return ones(t.shape, dtype=dtype or t.dtype)


def _random(size, dtype, distribution, requires_grad) -> Tensor:
    dt = T.as_dtype(dtype or T.DEFAULT_FLOAT)
    size = _varargs(size)
    if dt.is_complex:   # real and imaginary parts drawn as the last dim of a real draw
        from .autograd.grad_mode import no_grad
        parts = _draw(size + (2,), dt.to_real(), distribution)
        with no_grad():
            if distribution == "normal":   # torch: each part N(0, 1/2), so E|z|^2 = 1
                parts = _ops.mul(parts, 0.5 ** 0.5)
            # cloned: a fresh tensor, not a view of the temporary parts (as torch.randn)
            t = _ops.view_as_complex(parts).clone()
    else:
        t = _draw(size, dt, distribution)
    return t.requires_grad_(True) if requires_grad else t


def randn(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples of shape `size` (torch.randn); seeded by manual_seed.

    A complex dtype draws the real and imaginary parts each from N(0, 1/2), as torch.
    """
    return _random(size, dtype, "normal", requires_grad)


def rand(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    """Uniform [0, 1) samples of shape `size` (torch.rand); seeded by manual_seed.

    A complex dtype draws the real and imaginary parts each uniform in [0, 1), as torch.
    """
    return _random(size, dtype, "uniform", requires_grad)


def randn_like(t: Tensor, dtype=None) -> Tensor:
    return randn(t.shape, dtype=dtype or t.dtype)


def rand_like(t: Tensor, dtype=None) -> Tensor:
    return rand(t.shape, dtype=dtype or t.dtype)


def randint(low, high=None, size=(), dtype=None) -> Tensor:
    """Integers uniform in [low, high) (torch.randint), int64 by default."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
    u = _draw((size,) if isinstance(size, int) else tuple(size), T.float64, "uniform")
    span = _ops.convert(_ops.mul(u, float(high - low)), T.int64)   # u >= 0: truncation floors
    return _ops.add(span, int(low)).to(dtype or T.int64)


def arange(start, end=None, step=1, *, dtype=None) -> Tensor:
    """Values in [start, end) by step (torch.arange); int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = T.result_type([], [], [start, end, step])
        if dtype is T.bool_:
            dtype = T.int64
    return _ops.arange(start, end, step, T.as_dtype(dtype))
