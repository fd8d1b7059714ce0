"""Op database: gcd, lcm, cov, corrcoef, rot90, take, tensor_split and block_diag (issue 16,
ir/ops/combine_more.py).  torch 2.13's values for all of them are recorded in
tests/api/test_surface_ops3.py; the references here are NumPy's functions.  Few samples each:
the default test tier runs every one on both executors.
"""
from __future__ import annotations

import numpy as np

import tracegrad as tg

from .core import F32, I64, ErrorInput, OpInfo, Sample, ints, uniform


def _cov_ref(xp, x, correction=1, fweights=None, aweights=None):
    c = xp.cov(x, ddof=correction, fweights=fweights, aweights=aweights)
    return c


def _cov_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    # two samples: the 1-D and correction forms are checked against torch in
    # tests/api/test_surface_ops3.py; each sample here costs jax compiles in the default tier
    return [Sample((x,)),
            Sample((x,), {"fweights": np.array([1, 2, 1, 3]),
                          "aweights": np.array([0.5, 1.0, 2.0, 0.25], dtype.numpy)})]


def _corrcoef_ref(xp, x):
    return xp.clip(xp.corrcoef(x), -1, 1) if not xp.iscomplexobj(x) else xp.corrcoef(x)


def _rot90_ref(xp, x, k=1, dims=(0, 1)):
    return xp.rot90(x, k, tuple(dims))


def _rot90_samples(rng, dtype):
    x = uniform(rng, (2, 3), dtype)
    return [Sample((x,)), Sample((uniform(rng, (2, 3, 2), dtype), -1, [2, 0]))]


def _take_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype), np.array([[0, -1], [5, 2]]))),
            Sample((uniform(rng, (4,), dtype), np.array(2)))]


def _split_ref(xp, x, s, dim=0):
    return tuple(xp.array_split(x, s, axis=dim)) if isinstance(s, int) else \
        tuple(xp.split(x, list(s), axis=dim))


def _split_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 5), dtype), 3, 1)),
            Sample((uniform(rng, (5,), dtype), (1, 3)))]


def _block_ref(xp, *ts):
    ts = [xp.reshape(t, (1, -1)) if t.ndim < 2 else t for t in ts]
    width, left, rows = sum(t.shape[1] for t in ts), 0, []
    for t in ts:
        rows.append(xp.pad(t, ((0, 0), (left, width - left - t.shape[1]))))
        left += t.shape[1]
    return xp.concatenate(rows, 0)


def _block_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype), uniform(rng, (2,), dtype),
                    uniform(rng, (), dtype)))]


def _int_samples(rng, dtype):
    return [Sample((ints(rng, (3, 4), -12, 13), ints(rng, (4,), -12, 13)), dtype=I64),
            Sample((ints(rng, (5,), 0, 20, np.int8), ints(rng, (5,), 0, 20, np.int8)),
                   dtype=tg.int8)]


def _int_errors(name):
    f = np.ones((3,), np.float32)
    return lambda: [ErrorInput((f, f), TypeError, (name, "only integer tensors", "f32[3]"))]


def _cov(x, **kw):
    """tg.cov with the weight arrays (kwargs pass as they are) as constant tensors."""
    return tg.cov(x, **{k: tg.tensor(v) if isinstance(v, np.ndarray) else v
                        for k, v in kw.items()})


OPS = [
    OpInfo("gcd", tg.gcd, lambda xp, x, y: xp.gcd(x, y), _int_samples, differentiable=False,
           dtypes=(F32,), error_inputs=_int_errors("gcd")),
    OpInfo("lcm", tg.lcm, lambda xp, x, y: xp.lcm(x, y), _int_samples, differentiable=False,
           dtypes=(F32,), error_inputs=_int_errors("lcm")),
    OpInfo("cov", _cov, _cov_ref, _cov_samples, complex_samples=1, tols={F32: (1e-5, 1e-5)},
           error_inputs=lambda: [ErrorInput((np.ones((2, 2, 2), np.float32),), RuntimeError,
                                            ("cov", "two or fewer dimensions"))]),
    OpInfo("corrcoef", tg.corrcoef, _corrcoef_ref,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype),))], complex_samples=1,
           tols={F32: (1e-5, 1e-5)},
           notes="real inputs are clipped to [-1, 1] as torch: the clip's gradient is 0 where "
                 "a coefficient rounds past it (the diagonal can)"),
    OpInfo("rot90", tg.rot90, _rot90_ref, _rot90_samples, complex_samples=1,
           error_inputs=lambda: [ErrorInput((np.ones((2, 3), np.float32), 1, [0, 0]),
                                            RuntimeError, ("rot90", "to be different"))]),
    OpInfo("take", tg.take, lambda xp, x, i: xp.take(x.reshape(-1), i), _take_samples,
           complex_samples=1,
           error_inputs=lambda: [ErrorInput((np.ones((2, 3), np.float32), np.array([6])),
                                            IndexError, ("take", "index 6", "6 elements"))]),
    OpInfo("tensor_split", lambda *a, **k: tuple(tg.tensor_split(*a, **k)), _split_ref,
           _split_samples, complex_samples=1,
           error_inputs=lambda: [ErrorInput((np.ones((3,), np.float32), 0), RuntimeError,
                                            ("tensor_split", "larger than 0"))]),
    OpInfo("block_diag", tg.block_diag, _block_ref, _block_samples, complex_samples=1,
           error_inputs=lambda: [ErrorInput((np.ones((2, 2, 2), np.float32),), RuntimeError,
                                            ("block_diag", "2 or fewer dimensions"))]),
]
