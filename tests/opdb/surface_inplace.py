"""Op database: the fourth batch of torch surface (issues 14 and 16): deg2rad, rad2deg, ldexp,
float_power, nextafter, renorm, addr (ir/ops/math_more.py), index_copy, put, hsplit, vsplit,
dsplit (ir/ops/index_more.py), and torch's tuple form of index_put and fill_diagonal_
(tracegrad/_surface_ops4.py).  torch 2.13's values, gradients and messages for the in-place
forms are in tests/api/test_surface_ops4.py; the references here are NumPy's.  Few samples
each: the default tier runs every one on both executors.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg

from .core import F32, F64, I64, ErrorInput, OpInfo, Sample, ints, positive, uniform


def _f(*shape):
    return np.ones(shape, np.float32)


def _i(*v):
    return np.array(v, np.int64)


def _angle_samples(rng, dtype):
    out = [Sample((uniform(rng, (2, 3), dtype),))]
    if dtype is F32:   # integers give the default float (torch 2.13)
        out.append(Sample((ints(rng, (4,)),), dtype=F32))
    return out


def _ldexp_samples(rng, dtype):
    out = [Sample((uniform(rng, (2, 3), dtype), ints(rng, (3,), -3, 4))),
           Sample((uniform(rng, (3,), dtype), uniform(rng, (2, 3), dtype, -1.0, 1.0)))]
    if dtype is F32:   # ldexp(int, int) is float32 (torch 2.13)
        out.append(Sample((ints(rng, (3,)), ints(rng, (3,), 0, 4)), dtype=F32))
    return out


def _float_power_samples(rng, dtype):
    # computed in float64 whatever the input dtype (torch 2.13)
    return [Sample((positive(rng, (2, 3), dtype), uniform(rng, (3,), dtype)), dtype=F64),
            Sample((uniform(rng, (4,), dtype), 2), dtype=F64),
            Sample((ints(rng, (3,), 1, 5), positive(rng, (3,), dtype)), dtype=F64)]


def _float_power_ref(xp, x, e):
    dtype = np.complex128 if np.iscomplexobj(x) or np.iscomplexobj(e) else np.float64
    x = xp.asarray(x).astype(dtype)
    e = xp.asarray(e).astype(dtype) if not isinstance(e, (int, float)) else float(e)
    return x ** e


def _float_power_complex(rng, dtype):
    from .core import cpositive
    return [Sample((cpositive(rng, (3,), dtype), 2.0), dtype=tg.complex128)]


def _nextafter_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x, uniform(rng, (3,), dtype))), Sample((x, x), fd=False)]


def _nextafter_ref(xp, x, y):
    """nextafter's value with torch's gradient: jax has no derivative rule for nextafter, so
    its reference is ``x + (nextafter(x, y) - x)`` with nextafter's operands behind
    stop_gradient (exact: adjacent floats differ by one ulp), which jax differentiates to the
    cotangent for `x` and zeros for `y`."""
    if xp is np:
        return np.nextafter(x, y)
    import jax   # the jax reference only: opdb's generic checks pass xp=jax.numpy
    xs, ys = jax.lax.stop_gradient(x), jax.lax.stop_gradient(y)
    return x + (xp.nextafter(xs, ys) - xs)


def _renorm_ref(xp, x, p, dim, maxnorm):
    others = tuple(i for i in range(x.ndim) if i != dim % x.ndim)
    a = xp.abs(x)
    norm = xp.max(a, axis=others, keepdims=True) if p == math.inf else \
        xp.sum(a ** p, axis=others, keepdims=True) ** (1.0 / p)
    return x * xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(x.dtype)


def _renorm_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, 2, 0, 1.5)), Sample((uniform(rng, (2, 3, 2), dtype), 1, -1, 2.0)),
            Sample((x, math.inf, 1, 1.0))]


def _addr_ref(xp, x, v1, v2, beta=1, alpha=1):
    outer = xp.asarray(v1)[:, None] * xp.asarray(v2)[None, :]
    return alpha * outer if beta == 0 else beta * x + alpha * outer


def _addr_samples(rng, dtype):
    out = [Sample((uniform(rng, (2, 3), dtype), uniform(rng, (2,), dtype),
                   uniform(rng, (3,), dtype))),
           Sample((uniform(rng, (3,), dtype), uniform(rng, (2,), dtype),
                   uniform(rng, (3,), dtype)), {"beta": 0.5, "alpha": -2.0})]
    if dtype is F32:
        out.append(Sample((ints(rng, (2, 3)), ints(rng, (2,)), ints(rng, (3,))),
                          {"beta": 2, "alpha": 3}, dtype=I64))
    return out


def _index_copy_ref(xp, x, dim, index, source):
    index = np.asarray(index).reshape(-1)
    sel = np.full(x.shape[dim], -1)
    sel[index] = np.arange(index.size)
    shape = [1] * x.ndim
    shape[dim] = x.shape[dim]
    taken = xp.take(source, np.maximum(sel, 0), axis=dim)
    return xp.where((sel >= 0).reshape(shape), taken, x)


def _index_copy_samples(rng, dtype):
    out = [Sample((uniform(rng, (3, 4), dtype), 1, _i(3, 0), uniform(rng, (3, 2), dtype))),
           Sample((uniform(rng, (4, 2), dtype), 0, _i(2), uniform(rng, (1, 2), dtype)))]
    if dtype is F32:
        out.append(Sample((ints(rng, (3,)), 0, _i(0, 2), ints(rng, (2,))), dtype=I64))
    return out


def _one_hot(pos, n, dtype):
    m = np.zeros((pos.size, n))
    m[np.arange(pos.size), pos.reshape(-1)] = 1
    return m.astype(dtype)


def _flat_write(xp, x, pos, values, accumulate):
    """x with its flat elements at `pos` set to (or incremented by) `values`, written as a
    product with a constant one-hot matrix so jax.vjp differentiates it."""
    n = int(np.prod(x.shape))
    m = _one_hot(pos, n, x.dtype)
    put = xp.reshape(values, (-1,)) @ m
    flat = xp.reshape(x, (-1,))
    out = flat + put if accumulate else xp.where(m.sum(0) > 0, put, flat)
    return xp.reshape(out, x.shape)


def _put_ref(xp, x, index, source, accumulate=False):
    n = int(np.prod(x.shape))
    pos = np.asarray(index).reshape(-1) % max(n, 1)
    return _flat_write(xp, x, pos, source, accumulate)


def _put_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    out = [Sample((x, np.array([[1, -1], [5, 0]]), uniform(rng, (2, 2), dtype))),
           Sample((x, _i(2, 2, 7), uniform(rng, (3,), dtype), True))]
    if dtype is F32:
        out.append(Sample((ints(rng, (4,)), _i(3, 3), ints(rng, (2,)), True), dtype=I64))
    return out


def _index_put_ref(xp, x, indices, values, accumulate=False):
    idx = np.broadcast_arrays(*[np.asarray(i) for i in indices])
    pos = np.ravel_multi_index(tuple(i % s for i, s in zip(idx, x.shape)), x.shape)
    return _flat_write(xp, x, pos, xp.broadcast_to(values, pos.shape), accumulate)


def _index_put(x, indices, values, accumulate=False):
    """tg.index_put with the index arrays of a sample (a tuple in args) as tensors."""
    return tg.index_put(x, tuple(tg.tensor(i) for i in indices), values, accumulate)


def _index_put_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, (_i(0, 2), _i(1, -1)), uniform(rng, (2,), dtype))),
            Sample((x, (_i(1, 1, 0), _i(2, 2, 3)), uniform(rng, (3,), dtype), True)),
            Sample((x, (_i(2), _i(0, 3)), uniform(rng, (), dtype)))]


def _fill_diagonal(x, value, wrap=False):
    return x.clone().fill_diagonal_(value, wrap)


def _fill_diagonal_ref(xp, x, value, wrap=False):
    mask = np.zeros(x.shape, bool)
    if x.ndim == 2:
        n, m = x.shape
        flat = mask.reshape(-1)
        flat[0:(x.size if wrap or n <= m else m * m):m + 1] = True
    else:
        mask[(np.arange(x.shape[0]),) * x.ndim] = True
    return xp.where(mask, np.asarray(value, x.dtype), x)


def _fill_diagonal_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), 1.5)),
            Sample((uniform(rng, (7, 3), dtype), -2.0, True)),
            Sample((uniform(rng, (2, 2, 2), dtype), 0.5))]


def _split_ref(dim):
    def ref(xp, x, s):
        d = 0 if dim == 1 and x.ndim == 1 else dim
        return tuple(xp.split(x, s if isinstance(s, int) else list(s), axis=d))
    return ref


def _split_samples(shape):
    def samples(rng, dtype):
        return [Sample((uniform(rng, shape, dtype), 2)),
                Sample((uniform(rng, shape, dtype), [1, 3]))]
    return samples


def _errors(*items):
    return lambda: [ErrorInput(*item) for item in items]


OPS = [
    OpInfo("deg2rad", tg.deg2rad, lambda xp, x: x * (math.pi / 180) if x.dtype.kind == "f"
           else (x * (math.pi / 180)).astype(np.float32), _angle_samples),
    OpInfo("rad2deg", tg.rad2deg, lambda xp, x: x * (180 / math.pi) if x.dtype.kind == "f"
           else (x * (180 / math.pi)).astype(np.float32), _angle_samples),
    OpInfo("ldexp", tg.ldexp, lambda xp, x, e: (x * xp.exp2(xp.asarray(e).astype(
        x.dtype if x.dtype.kind == "f" else np.float32))).astype(
        np.result_type(x.dtype, e.dtype, np.float32) if x.dtype.kind != "f" or
        e.dtype.kind == "f" else x.dtype), _ldexp_samples),
    OpInfo("float_power", tg.float_power, _float_power_ref, _float_power_samples,
           complex_samples=_float_power_complex,
           notes="computed in float64 (complex128): a float32 input's gradient is cast back "
                 "to float32"),
    OpInfo("nextafter", tg.nextafter, _nextafter_ref, _nextafter_samples,
           no_fd="torch 2.13's backward passes the cotangent to input unchanged and gives "
                 "other zeros (the function is a step function)",
           skips={"gradgradcheck": "the rule's second derivative is zero, as torch's"},
           error_inputs=_errors(((_i(1), _i(2)), TypeError, ("nextafter", "floating-point",
                                                               "nextafter_cpu")))),
    OpInfo("renorm", tg.renorm, _renorm_ref, _renorm_samples, tols={F32: (1e-5, 1e-4)},
           complex_samples=(0,),
           error_inputs=_errors(
               # torch 2.13: RuntimeError "linalg.vector_norm: Expected a floating point or
               # complex tensor as input. Got Long"
               ((np.ones((2, 2), np.int64), 2, 0, 1.0), RuntimeError,
                ("renorm", "Expected a floating point or complex tensor as input. Got Long")),
               ((_f(3), 2, 0, 1.0), RuntimeError, ("renorm", "at least 2 dimensions")),
               ((_f(2, 2), 0, 0, 1.0), RuntimeError, ("renorm", "non-positive-norm")),
               ((_f(2, 2), 2, 0, -1.0), RuntimeError, ("renorm", "maxnorm to be >= 0")))),
    OpInfo("addr", tg.addr, _addr_ref, _addr_samples, complex_samples=(0,),
           error_inputs=_errors(
               ((_f(2, 3), _f(1, 2), _f(3)), RuntimeError, ("addr", "1-D argument vec1")),
               ((_f(2, 3), _f(2), _f(3, 1)), RuntimeError, ("addr", "1-D argument vec2")))),
    OpInfo("index_copy", tg.index_copy, _index_copy_ref, _index_copy_samples,
           complex_samples=(0,),
           error_inputs=_errors(
               ((_f(3, 4), 1, _i(0, 2), _f(3, 3)), IndexError,
                ("index_copy", "Number of indices (2)", "source.size(dim) (3)")),
               ((_f(3, 4), 1, _i(0, 5), _f(3, 2)), IndexError, ("index_copy", "index 5")),
               ((_f(3, 4), 1, np.array([0, 2], np.int32), _f(3, 2)), RuntimeError,
                ("index_copy", "long tensor for index", "Int")),
               ((_f(3, 4), 1, _i(0, 2), np.ones((3, 2))), RuntimeError,
                ("index_copy", "same dtype", "Float", "Double")))),
    OpInfo("put", tg.put, _put_ref, _put_samples, complex_samples=(0,),
           error_inputs=_errors(
               ((_f(3, 4), _i(12), _f(1)), IndexError,
                ("put", "tried to access index 12 on a tensor of 12 elements")),
               ((_f(3, 4), _i(1, 2), _f(1)), IndexError,
                ("put", "same number of elements", "source.numel() = 1")),
               ((_f(3, 4), _i(1, 2), np.ones(2)), RuntimeError, ("put", "same dtype")))),
    OpInfo("index_put_tuple", _index_put, _index_put_ref, _index_put_samples,
           covers=("index_put",), complex_samples=(0,),
           error_inputs=_errors(
               ((_f(3, 4), (_i(0, 5),), _f()), IndexError, ("index_put", "index 5")),
               ((_f(3, 4), (_i(0, 1),), np.ones(())), RuntimeError,
                ("index_put", "dtypes match", "Float", "Double")),
               ((_f(3, 4), (_i(0, 2),), _f(3)), ValueError,
                ("index_put", "shape mismatch", "[2, 4]")))),
    OpInfo("fill_diagonal_", _fill_diagonal, _fill_diagonal_ref, _fill_diagonal_samples,
           covers=("where",), complex_samples=(0,),
           error_inputs=_errors(
               ((_f(3), 1.0), RuntimeError, ("fill_diagonal_", "dimensions must larger than 1")),
               ((_f(2, 3, 2), 1.0), RuntimeError, ("fill_diagonal_", "equal length")))),
    OpInfo("hsplit", lambda *a: tuple(tg.hsplit(*a)), _split_ref(1), _split_samples((2, 4)),
           complex_samples=1,
           error_inputs=_errors(((_f(2, 4), 3), RuntimeError,
                                 ("torch.hsplit", "dimension 1", "not divisible by the "
                                  "split_size 3")),
                                ((np.array(1.0, np.float32), 1), RuntimeError, ("hsplit", "at least 1")))),
    OpInfo("vsplit", lambda *a: tuple(tg.vsplit(*a)), _split_ref(0), _split_samples((4, 3)),
           complex_samples=1,
           error_inputs=_errors(((_f(4), 2), RuntimeError,
                                 ("torch.vsplit", "at least 2 dimension", "1 dimensions")))),
    OpInfo("dsplit", lambda *a: tuple(tg.dsplit(*a)), _split_ref(2),
           _split_samples((2, 1, 4)), complex_samples=1,
           error_inputs=_errors(((_f(2, 4), 2), RuntimeError,
                                 ("torch.dsplit", "at least 3 dimension", "2 dimensions")))),
]
