"""Counter-based random numbers (Threefry-2x32) with an explicit key.

One kernel, written against `xp`, so the NumPy interpreter and the jax
lowering draw bit-identical streams: eager and `tg.compile` runs with the
same seed give the same numbers.  The key is a ``u32[2]`` value threaded
through programs like any other state (tracegrad keeps a global key tensor
that `manual_seed` resets and each draw advances in place).
Threefry-2x32 with 20 rounds: Salmon et al., "Parallel random numbers: as
easy as 1, 2, 3" (SC 2011), the generator behind jax.random.
"""
from __future__ import annotations

import math

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError
from ..registry import CREATION, INTERNAL, NONDIFF, RANDOM, defop
from ._common import as_shape
from . import _xla_handoff as handoff

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(xp, key, c0, c1):
    """Threefry-2x32 block cipher of counters (c0, c1) under key; uint32 in, uint32 out."""
    if isinstance(c0, np.ndarray) and isinstance(c1, np.ndarray):
        return _threefry2x32_numpy(key, c0, c1)
    u32 = xp.uint32
    k0, k1 = key[0], key[1]
    ks = (k0, k1, k0 ^ k1 ^ u32(0x1BD11BDA))
    x0, x1 = c0 + ks[0], c1 + ks[1]
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 = x0 + x1
            x1 = (x1 << u32(r)) | (x1 >> u32(32 - r))
            x1 = x1 ^ x0
        x0 = x0 + ks[(group + 1) % 3]
        x1 = x1 + ks[(group + 2) % 3] + u32(group + 1)
    return x0, x1


def _threefry2x32_numpy(key, c0, c1):
    """`threefry2x32` on NumPy with in-place updates (the same words): the functional form
    allocates a new array per operation, 100 per draw; in place the eager MNIST step's
    dropout draws (590k words) took about half the time."""
    u32 = np.uint32
    k0, k1 = u32(key[0]), u32(key[1])
    ks = (k0, k1, u32(k0 ^ k1 ^ u32(0x1BD11BDA)))
    x0, x1 = c0 + ks[0], c1 + ks[1]
    high = np.empty_like(x1)
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 += x1
            np.left_shift(x1, u32(r), out=high)
            x1 >>= u32(32 - r)
            x1 |= high
            x1 ^= x0
        x0 += ks[(group + 1) % 3]
        x1 += u32(ks[(group + 2) % 3] + u32(group + 1))
    return x0, x1


def _unit(xp, bits, dtype, digits: int = 24):
    """uint32 words -> uniform floats in [0, 1) on a 2**-digits grid (exact in `dtype`)."""
    return (bits >> xp.uint32(32 - digits)).astype(dtype) * dtype.type(2.0 ** -digits)


# Significand bits of the half-precision uniform grids: a 2**-24 grid rounded to float16
# or bfloat16 reached 1.0.  On their own 11 / 8 bits the largest draw is torch 2.13's
# (1 - 2**-11, 1 - 2**-8; torch's grid is finer near 0, so the draws are not torch's).
_HALF_DIGITS = {"float16": 11, "bfloat16": 8}


# Uniform draws of at least this many words run on XLA (`_xla_handoff`): the same cipher on
# the same words, so the same bits, and 20x faster than NumPy's 20 rounds of whole-array
# passes (the eager MNIST step's dropout mask, 590k words: 28.9 -> 1.4 ms; 4096 words 0.28
# -> 0.14).  Normal draws stay on NumPy: XLA's log and cos differ from NumPy's in the last
# bit, and eager draws keep their values.
XLA_MIN_UNIFORM = 1 << 12


def _random_kernel(xp, key, *, size, dtype, distribution):
    n = math.prod(size)
    if xp is np and distribution == "uniform" and n >= XLA_MIN_UNIFORM and handoff.usable():
        return handoff.run(_random_kernel, (np.asarray(key),),
                       dict(size=size, dtype=dtype, distribution=distribution))
    np_dtype = dtype.numpy
    counters = xp.arange(n, dtype=xp.uint32)
    x0, x1 = threefry2x32(xp, key, counters, xp.ones(n, dtype=xp.uint32))
    work = np_dtype if dtype.itemsize >= 4 else xp.float32   # half precision draws via f32
    work = xp.dtype(work)
    if distribution == "uniform":
        out = _unit(xp, x0, work, _HALF_DIGITS.get(dtype.name, 24))
    else:   # Box-Muller; 1 - u keeps the log argument in (0, 1]
        u1, u2 = _unit(xp, x0, work), _unit(xp, x1, work)
        out = xp.sqrt(work.type(-2.0) * xp.log(work.type(1.0) - u1)) * xp.cos(
            work.type(2.0 * math.pi) * u2)
    return xp.reshape(out, size).astype(np_dtype)


def _check_key(op: str, key) -> None:
    # a key of another type would run (the cipher takes any integer words) and hand a
    # wrong-typed key to the next draw; the verifier must refuse it (found by the fuzzer)
    if key.shape != (2,) or key.dtype is not T.uint32:
        raise DTypeError(f"{op}: the key must be u32[2], got {key}")


def _random_infer(types, *, size, dtype, distribution):
    _check_key("random", types[0])
    if not dtype.is_floating_point:
        raise DTypeError(f"random: dtype must be floating point, got {dtype.name}")
    if distribution not in ("uniform", "normal"):
        raise ValueError(f"random: unknown distribution {distribution!r}")
    return T.TensorType(size, dtype)


defop("random", "key", attrs=(("size", (), K.SHAPE), ("dtype", T.float32, K.DTYPE), ("distribution", "uniform", K.enum("uniform", "normal"))),
      canon=lambda types, *, size, dtype, distribution: {
          "size": as_shape("random", size), "dtype": T.as_dtype(dtype),
          "distribution": distribution},
      infer=_random_infer, kernel=_random_kernel, vjp=NONDIFF,
      flags=RANDOM | INTERNAL, ref="torch.rand / torch.randn (Threefry stream, not torch's)")


def _next_key_kernel(xp, key):
    zero = xp.zeros(1, dtype=xp.uint32)
    x0, x1 = threefry2x32(xp, key, zero, zero)
    return xp.concatenate([x0, x1])


def _next_key_infer(types):
    _check_key("rng_next_key", types[0])
    return types[0]


defop("rng_next_key", "key", infer=_next_key_infer, kernel=_next_key_kernel,
      vjp=NONDIFF, flags=RANDOM | INTERNAL, ref="jax.random.split (one new key)")
