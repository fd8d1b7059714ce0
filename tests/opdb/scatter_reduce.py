"""Op database: scatter_reduce (torch.scatter_reduce: sum, prod, mean, amax, amin, with and
without the input's own value) and its in-place form.

The reference reduces densely: a mask of which index element writes which input position,
so each reduction is an ordinary (differentiable) sum, product or max over the candidates,
and jax.vjp gives the gradients torch's formulas give away from zeros and ties.  Samples
draw distinct values (no ties for amax/amin) away from 0 (prod); torch 2.13's gradients at
ties, at zeros and with the torch quirks (an excluded input still counted among amax's ties)
are literals in tests/api/test_scatter_reduce.py.
"""
from __future__ import annotations

import numpy as np

from .core import BOOL, F32, I64, ErrorInput, OpInfo, Sample, cuniform, distinct, ints, nonzero

REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _mask(x_shape, dim, index) -> np.ndarray:
    """(x positions..., K) booleans: index element k (row-major) writes position p."""
    k = index.size
    coords = list(np.indices(index.shape).reshape(index.ndim, -1))
    coords[dim] = index.reshape(-1)
    target = np.ravel_multi_index(tuple(coords), x_shape) if k else np.zeros(0, np.int64)
    m = np.zeros((int(np.prod(x_shape)), k), bool)
    m[target, np.arange(k)] = True
    return m.reshape(tuple(x_shape) + (k,))


def _ref(xp, x, dim, index, src, reduce, include_self=True):
    if x.ndim == 0:
        x, index, src = x.reshape(1), index.reshape(1), src.reshape(1)
        return _ref(xp, x, 0, index, src, reduce, include_self).reshape(())
    dim = dim % x.ndim
    m = _mask(x.shape, dim, index)
    vals = src[tuple(slice(0, s) for s in index.shape)].reshape(-1)
    count = m.sum(-1) + (1 if include_self else 0)
    hit = m.any(-1)
    if reduce in ("sum", "mean"):
        total = xp.sum(xp.where(m, vals, 0), axis=-1)
        if include_self:
            total = total + x
        if reduce == "mean":
            if x.dtype.kind in "iu":
                total = total // np.maximum(count, 1)
            else:
                total = total / np.maximum(count, 1).astype(x.dtype)
        return xp.where(hit | include_self, total, x).astype(x.dtype)
    if reduce == "prod":
        out = xp.prod(xp.where(m, vals, 1), axis=-1)
        return (out * x if include_self else xp.where(hit, out, x)).astype(x.dtype)
    pick, fill = (xp.max, -np.inf) if reduce == "amax" else (xp.min, np.inf)
    out = pick(xp.where(m, vals, fill), axis=-1)
    if include_self:
        return (xp.maximum(out, x) if reduce == "amax" else xp.minimum(out, x)).astype(x.dtype)
    return xp.where(hit, out, x).astype(x.dtype)


def _samples(rng, dtype):
    out = []
    idx = ints(rng, (3, 4), 0, 4)            # repeated targets along dim 1, some untouched
    for i, reduce in enumerate(REDUCES):
        for include_self in (True, False):
            vals = distinct(rng, (6, 4), dtype) if reduce != "prod" else nonzero(rng, (6, 4),
                                                                                    dtype)
            x, src = vals[:3], vals[3:]
            out.append(Sample((x, 1, idx, src, reduce), {"include_self": include_self}))
    x = nonzero(rng, (3, 4), dtype)
    out += [Sample((x, 0, ints(rng, (2, 3), 0, 3), nonzero(rng, (3, 4), dtype), "prod")),  # src larger
            Sample((x, 0, ints(rng, (5, 4), 0, 3), distinct(rng, (5, 4), dtype), "mean")),
            Sample((nonzero(rng, (), dtype), 0, np.zeros((), np.int64),
                    nonzero(rng, (), dtype), "amax")),
            Sample((ints(rng, (3, 4)), 1, idx, ints(rng, (3, 4)), "mean"), dtype=I64),
            Sample((ints(rng, (3, 4)), 1, idx, ints(rng, (3, 4)), "prod"),
                   {"include_self": False}, dtype=I64),
            Sample((rng.random((3, 4)) > 0.5, 1, idx, rng.random((3, 4)) > 0.5, "sum"),
                   dtype=BOOL)]
    return out


def _complex_samples(rng, dtype):
    """Forward only (torch records no gradient for a complex scatter_reduce)."""
    idx = ints(rng, (2, 3), 0, 3)
    z = lambda: cuniform(rng, (2, 3), dtype)  # noqa: E731
    return [Sample((z(), 1, idx, z(), r), {"include_self": inc})
            for r in ("sum", "prod", "mean") for inc in (True, False)]


def _errors():
    x = np.ones((2, 3), np.float32)
    i = np.zeros((2, 3), np.int64)
    return [
        ErrorInput((x, 1, i, x, "foo"), RuntimeError,
                   ("reduce argument must be either sum, prod, mean, amax or amin, got foo",)),
        ErrorInput((x, 1, i, x, "add"), RuntimeError, ("got add",)),
        ErrorInput((x, 1, i, 2.0, "sum"), TypeError,
                   ("scatter_reduce(): argument 'src' (position 3) must be Tensor, not float",)),
        ErrorInput((x, 1, i, x, 3), TypeError,
                   ("scatter_reduce(): argument 'reduce' (position 4) must be str, not int",)),
        ErrorInput((x, 1, i, x, "sum"), TypeError,
                   ("scatter_reduce(): argument 'include_self' must be bool, not int",),
                   {"include_self": 1}),
        ErrorInput((np.ones((2, 3), bool), 1, i, np.ones((2, 3), bool), "mean"), TypeError,
                   ('"scatter_gather_tensor_cpu_reduce_mean" not implemented for \'Bool\'',)),
        ErrorInput((np.ones((2, 3), np.complex64), 1, i, np.ones((2, 3), np.complex64), "amax"),
                   TypeError, ('"scatter_gather_tensor_cpu_reduce_amax" not implemented for '
                               "'ComplexFloat'",)),
        ErrorInput((x, 1, i + 3, x, "sum"), IndexError,
                   ("scatter_reduce", "index 3 is out of bounds for dimension 1 with size 3")),
        ErrorInput((x, 1, i.astype(np.float32), x, "sum"), TypeError, ("scatter_reduce", "index")),
        ErrorInput((x, 1, i, x.astype(np.float64), "sum"), TypeError,
                   ("scatter_reduce", "dtype")),
        ErrorInput((x, 2, i, x, "sum"), IndexError, ("scatter_reduce", "got 2")),
        ErrorInput((x, 1, i[0], x, "sum"), ValueError,
                   ("scatter_reduce", "same number of dimensions")),
    ]


def _method(x, dim, index, src, reduce, **kw):
    return x.scatter_reduce(dim, index, src, reduce, **kw)


def _inplace(x, dim, index, src, reduce, **kw):
    return (x * 1 if x.dtype.is_floating_point else x.clone()).scatter_reduce_(
        dim, index, src, reduce, **kw)


TIES = ("amax/amin: the gradient is shared evenly among the values equal to the result, the "
        "input's own value counted even with include_self=False (torch 2.13)")
ZEROS = ("prod: exclusive products; a src element that is the only zero written to its position "
         "gets the product of the others, several zeros give 0 (torch 2.13)")

OPS = [
    OpInfo("scatter_reduce", _method, _ref, _samples, error_inputs=_errors,
           covers=("scatter_reduce", "put_reduce_along_axis"), executor_samples=(0, 2, 4, 6, 8),
           notes=f"{TIES}; {ZEROS}", tols={F32: (2e-5, 2e-5)}),
    # complex: sum, prod and mean; torch records no gradient for a complex result
    # (tests/api/test_scatter_reduce.py checks the error), so forward only
    OpInfo("scatter_reduce_complex", lambda x, d, i, s, r, **kw: _method(x.detach(), d, i, s.detach(), r, **kw), _ref,
           lambda rng, dtype: [], differentiable=False, dtypes=(),
           covers=("scatter_reduce", "put_reduce_along_axis"), complex_samples=_complex_samples),
    OpInfo("scatter_reduce_", _inplace, _ref, lambda rng, dtype: _samples(rng, dtype)[:10:3],
           covers=("scatter_reduce",)),
]
