"""Tensor creation: tensor, zeros, ones, full, empty, eye, arange, linspace, randn, rand,
randint, randperm, the ``*_like`` forms, from_numpy ...

Defaults follow torch: Python floats -> float32, ints -> int64, bools -> bool;
NumPy arrays keep their dtype.  Every function takes torch's ``device=`` keyword:
None, "cpu" or ``tg.device("cpu")``; any other device raises NotImplementedError
(`_device.check_device`: tracegrad tensors live on the CPU).
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T

from . import _ops, _state
from ._device import check_device
from .dispatch.grad_mode import no_grad
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
    with no_grad():
        _key.copy_(new_state)


def _draw(size, dtype, distribution: str) -> Tensor:
    """Values from the global stream; advances the key in place (traced under tg.compile)."""
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
        NotImplementedError: a device other than "cpu".
    """
    check_device("tensor", device)
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


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """`data` itself when it is a tensor and no dtype is asked for, else `tensor(data, dtype)`
    (torch.as_tensor; a NumPy array is copied here, torch shares it)."""
    check_device("as_tensor", device)
    return data if isinstance(data, Tensor) and dtype is None else tensor(data, dtype)


def _size(size) -> tuple:
    return (size,) if isinstance(size, int) else tuple(size)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """`fill_value` everywhere, shape `size` (torch.full); dtype inferred from the value
    (float32 for a Python float, int64 for an int, bool, complex64) unless given."""
    check_device("full", device)
    if dtype is None:
        dtype = T.result_type([], [], [fill_value])
    t = _ops.full(_size(size), fill_value, T.as_dtype(dtype))
    return t.requires_grad_(True) if requires_grad else t


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros of shape `size` (torch.zeros), float32 unless `dtype` is given."""
    check_device("zeros", device)
    return full(_varargs(size), 0, dtype=dtype or T.DEFAULT_FLOAT, requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones of shape `size` (torch.ones), float32 unless `dtype` is given."""
    check_device("ones", device)
    return full(_varargs(size), 1, dtype=dtype or T.DEFAULT_FLOAT, requires_grad=requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False,
          memory_format=None) -> Tensor:
    """A tensor of shape `size` whose values are unspecified (torch.empty); here they are
    zeros, since a NumPy/XLA buffer is not cheaper left uninitialized.  float32 by default."""
    check_device("empty", device)
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def _like(make, name: str, doc: str):
    """torch's ``<make>_like(t, dtype=None, *, device=None, requires_grad=False)``: `make` of
    `t`'s shape, in `t`'s dtype unless `dtype` is given."""
    def like(t: Tensor, dtype=None, *, device=None, requires_grad: bool = False,
             memory_format=None) -> Tensor:
        check_device(name, device)
        return make(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)
    like.__name__ = like.__qualname__ = name
    like.__doc__ = doc
    return like


zeros_like = _like(zeros, "zeros_like", "torch.zeros_like: zeros of `t`'s shape, in `t`'s "
                   "dtype unless `dtype` is given.")
ones_like = _like(ones, "ones_like", "torch.ones_like: ones of `t`'s shape, in `t`'s dtype "
                  "unless `dtype` is given.")


def full_like(t: Tensor, fill_value, dtype=None, *, device=None, requires_grad: bool = False,
              memory_format=None) -> Tensor:
    """torch.full_like: `fill_value` in `t`'s shape and dtype (unless `dtype` is given; a
    float value in an integer dtype is truncated, as torch)."""
    check_device("full_like", device)
    return full(t.shape, fill_value, dtype=dtype or t.dtype, requires_grad=requires_grad)


empty_like = _like(zeros, "empty_like", "torch.empty_like; zeros here, as `empty`.")


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
        if v < 0:
            raise RuntimeError(f"eye: {arg} must be greater or equal to 0, got {v}")
    rows = _ops.reshape(_ops.arange(0, n, 1, T.int64), (n, 1))
    t = _ops.convert(_ops.eq(rows, _ops.arange(0, m, 1, T.int64)),
                     T.as_dtype(dtype or T.DEFAULT_FLOAT))
    return t.requires_grad_(True) if requires_grad else t


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
    dt = T.as_dtype(dtype or T.DEFAULT_FLOAT)
    if dt.is_complex:
        raise NotImplementedError(f"linspace: complex dtype {dt.name} is not supported yet")
    floating = dt.is_floating_point
    if steps <= 1:   # torch: [start] (no step is computed), or empty
        t = full((steps,), start if floating else int(start), dtype=dt)
        return t.requires_grad_(True) if requires_grad else t
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
    return t.requires_grad_(True) if requires_grad else t


def _random(size, dtype, distribution, requires_grad) -> Tensor:
    dt = T.as_dtype(dtype or T.DEFAULT_FLOAT)
    size = _varargs(size)
    if dt.is_complex:   # real and imaginary parts drawn as the last dim of a real draw
        parts = _draw(size + (2,), dt.to_real(), distribution)
        with no_grad():
            if distribution == "normal":   # torch: each part N(0, 1/2), so E|z|^2 = 1
                parts = _ops.mul(parts, 0.5 ** 0.5)
            # cloned: a fresh tensor, not a view of the temporary parts (as torch.randn)
            t = _ops.view_as_complex(parts).clone()
    else:
        t = _draw(size, dt, distribution)
    return t.requires_grad_(True) if requires_grad else t


def randn(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples of shape `size` (torch.randn); seeded by manual_seed.

    A complex dtype draws the real and imaginary parts each from N(0, 1/2), as torch.
    """
    check_device("randn", device)
    return _random(size, dtype, "normal", requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform [0, 1) samples of shape `size` (torch.rand); seeded by manual_seed.

    A complex dtype draws the real and imaginary parts each uniform in [0, 1), as torch.
    """
    check_device("rand", device)
    return _random(size, dtype, "uniform", requires_grad)


randn_like = _like(randn, "randn_like", "torch.randn_like: `randn` of `t`'s shape, in `t`'s "
                   "dtype unless `dtype` is given.")
rand_like = _like(rand, "rand_like", "torch.rand_like: `rand` of `t`'s shape, in `t`'s dtype "
                  "unless `dtype` is given.")


def randint(low, high=None, size=(), *, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform in [low, high) (torch.randint), int64 by default; seeded by
    manual_seed.  ``randint(high, size)`` draws from [0, high), as torch."""
    check_device("randint", device)
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
    u = _draw(_size(size), T.float64, "uniform")
    span = _ops.convert(_ops.mul(u, float(high - low)), T.int64)   # u >= 0: truncation floors
    t = _ops.add(span, int(low)).to(dtype or T.int64)
    return t.requires_grad_(True) if requires_grad else t


def randint_like(t: Tensor, low, high=None, *, dtype=None, device=None,
                 requires_grad: bool = False, memory_format=None) -> Tensor:
    """torch.randint_like: `randint` of `t`'s shape, in `t`'s dtype unless `dtype` is given;
    ``randint_like(t, high)`` draws from [0, high)."""
    check_device("randint_like", device)
    return randint(low, high, t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randperm(n: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (torch.randperm), int64 unless `dtype` is given;
    seeded by manual_seed (the Threefry stream: other permutations than torch's).

    Sorts `n` uniform keys on a 2**-48 grid, so ties (which would favour the identity
    order) are negligible for any practical `n`.  Traceable: a compiled step shuffles from
    the same stream as eager.

    Raises:
        RuntimeError: a negative `n` (torch's message).
    """
    check_device("randperm", device)
    n = int(n)
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    u = _draw((n, 2), T.float64, "uniform")   # two 24-bit draws per key
    keys = _ops.add(u[:, 0], _ops.mul(u[:, 1], 2.0 ** -24))
    t = _ops.convert(_ops.argsort(keys, 0, False, True), T.as_dtype(dtype or T.int64))
    return t.requires_grad_(True) if requires_grad else t


def arange(start, end=None, step=1, *, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """Values in [start, end) by step (torch.arange); int64 unless a bound is a float."""
    check_device("arange", device)
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = T.result_type([], [], [start, end, step])
        if dtype is T.bool_:
            dtype = T.int64
    t = _ops.arange(start, end, step, T.as_dtype(dtype))
    return t.requires_grad_(True) if requires_grad else t
