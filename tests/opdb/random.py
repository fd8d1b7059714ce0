"""The random ops: the Threefry draws behind rand/randn/dropout (`random`, `rng_next_key`) and
the public functions that draw from the global generator (rand, randn, dropout).

The reference stream is jax's own Threefry-2x32 (`jax.extend.random.threefry_2x32`, the
block cipher jax.random is built on), with the bits-to-floats steps of ir/ops/random.py
restated: uniform = (x0 >> 8) * 2**-24, normal by Box-Muller on two uniforms.  The public
functions reseed the generator in each call (`tg.manual_seed`), so every call of `fn` draws
the same numbers and the reference knows the key: ``[seed >> 32, seed & 0xffffffff]``.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg
from tracegrad import _ops
from tracegrad.ir import types as T

from .core import F32, F64, ErrorInput, OpInfo, Sample, uniform

F = tg.nn.functional
U32 = T.uint32


def _bits(key, n):
    """Threefry-2x32 of counters (arange(n), ones(n)) under `key`: (x0, x1), uint32 each."""
    import jax.numpy as jnp
    from jax.extend.random import threefry_2x32
    key = np.asarray(key, np.uint32)
    counters = np.concatenate([np.arange(n, dtype=np.uint32), np.ones(n, np.uint32)])
    out = np.asarray(threefry_2x32((jnp.uint32(key[0]), jnp.uint32(key[1])), counters))
    return out[:n], out[n:]


def _unit(bits, np_dtype):
    work = np.dtype(np_dtype) if np.dtype(np_dtype).itemsize >= 4 else np.dtype(np.float32)
    return (bits >> np.uint32(8)).astype(work) * work.type(2.0 ** -24)


def _draw(key, size, np_dtype, distribution):
    """What `random(key, size, dtype, distribution)` gives, from jax's cipher."""
    n = math.prod(size)
    x0, x1 = _bits(key, n)
    u1 = _unit(x0, np_dtype)
    if distribution == "uniform":
        out = u1
    else:
        u2 = _unit(x1, np_dtype)
        w = u1.dtype.type
        out = np.sqrt(w(-2.0) * np.log(w(1.0) - u1)) * np.cos(w(2.0 * math.pi) * u2)
    return out.reshape(size).astype(np_dtype)


def _seed_key(seed):
    return np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)


def _keys(rng):
    return [np.array([0, 0x5EED], np.uint32),
            np.asarray(rng.integers(0, 2 ** 32, 2, dtype=np.uint64)).astype(np.uint32)]


def _random_samples(rng, dtype):
    a, b = _keys(rng)
    return [Sample((a,), {"size": (3, 4), "dtype": dtype, "distribution": "uniform"}, dtype),
            Sample((b,), {"size": (5,), "dtype": dtype, "distribution": "normal"}, dtype),
            Sample((b,), {"size": (), "dtype": dtype, "distribution": "uniform"}, dtype)]


def _random_ref(xp, key, *, size, dtype, distribution):
    return _draw(key, size, dtype.numpy, distribution)


def _random_errors():
    key = np.zeros(2, np.uint32)
    return [ErrorInput((np.zeros(3, np.uint32),), tg.DTypeError, ("random", "u32[2]", "u32[3]"),
                       {"size": (2,)}),
            ErrorInput((key,), tg.DTypeError, ("random", "floating point", "int64"),
                       {"size": (2,), "dtype": tg.int64}),
            ErrorInput((key,), ValueError, ("random", "unknown distribution", "'poisson'"),
                       {"size": (2,), "distribution": "poisson"})]


def _next_key_ref(xp, key):
    import jax.numpy as jnp
    from jax.extend.random import threefry_2x32
    key = np.asarray(key, np.uint32)
    # counters (0, 0): one block, its two words are the next key
    return np.asarray(threefry_2x32((jnp.uint32(key[0]), jnp.uint32(key[1])),
                                    np.zeros(2, np.uint32)))


def _key_samples(rng, dtype):
    return [Sample((k,), dtype=U32) for k in _keys(rng)]


def _rand_samples(rng, dtype):
    return [Sample(((3, 4), 0), {"dtype": dtype}, dtype),
            Sample(((2, 3, 2), 2 ** 40 + 7), {"dtype": dtype}, dtype),
            Sample(((), 5), {"dtype": dtype}, dtype)]


def _seeded(draw):
    """`draw(size, dtype=)` after `tg.manual_seed(seed)`: the same numbers on every call (the
    size as one tuple: ``rand()`` without one is torch's TypeError, ``rand(())`` is 0-d)."""
    def fn(size, seed, dtype):
        tg.manual_seed(seed)
        return draw(size, dtype=dtype)
    return fn


def _rand_ref(distribution):
    return lambda xp, size, seed, dtype: _draw(_seed_key(seed), size, dtype.numpy, distribution)


def _dropout(x, p, seed):
    tg.manual_seed(seed)
    return F.dropout(x, p)


def _dropout_ref(xp, x, p, seed):
    # the mask is drawn in the input's dtype; float64 here is the same draws for a float32
    # input (multiples of 2**-24, exact in both), and 1 - p is exact for these samples' p
    keep = _draw(_seed_key(seed), tuple(x.shape), np.float64, "uniform") < 1.0 - p
    return x * keep.astype(x.dtype) * (1.0 / (1.0 - p))


def _dropout_samples(rng, dtype):
    return [Sample((uniform(rng, (4, 5), dtype), 0.5, 0)),
            Sample((uniform(rng, (3, 2, 2), dtype), 0.25, 11)),
            Sample((uniform(rng, (6,), dtype), 0.5, 3))]


def _dropout_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, 1.5, 0), ValueError, ("dropout", "between 0 and 1", "1.5")),
            ErrorInput((np.ones(3, np.int64), 0.5, 0), TypeError,
                       ("dropout", "floating-point", "i64[3]"))]


OPS = [
    OpInfo("random", _ops.random, _random_ref, _random_samples, differentiable=False,
           error_inputs=_random_errors),
    OpInfo("rng_next_key", _ops.rng_next_key, _next_key_ref, _key_samples,
           differentiable=False, out_dtype=U32),
    OpInfo("rand", _seeded(tg.rand), _rand_ref("uniform"), _rand_samples, differentiable=False,
           covers=("random", "rng_next_key")),
    OpInfo("randn", _seeded(tg.randn), _rand_ref("normal"), _rand_samples, differentiable=False,
           covers=("random", "rng_next_key")),
    OpInfo("dropout", _dropout, _dropout_ref, _dropout_samples, error_inputs=_dropout_errors,
           covers=("random", "rng_next_key", "lt", "mul"),
           notes="the gradient is the kept elements' 1 / (1 - p), 0 where dropped"),
]
