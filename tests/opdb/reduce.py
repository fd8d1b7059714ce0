"""Op database: reductions, scans and the ops that return (values, indices).

sum / mean / amax live in core.py. Ops with several outputs (max/min with dim,
sort, topk, cummax/cummin, var_mean, std_mean) return a tuple from `fn` and
from `ref`; the suite compares every output and differentiates the floating
ones. References pick values with `take_along_axis` at the index torch
returns, so jax.vjp sends the gradient where torch does.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg

from .core import (BOOL, C64, C128, F32, F64, I64, ErrorInput, OpInfo, Sample, complexify,
                   cuniform, grid, ints, uniform, with_imag)
from .core import (ComplexEdgeGrad, ComplexForwardAD, ComplexSecondOrder,  # point-check records
                   ComplexTorchGrad, Subgradient, Z00)

INF = math.inf


def _axis(x, dim):
    """torch accepts dim 0 / -1 on a 0-d tensor (NumPy does not)."""
    return None if x.ndim == 0 else dim


def _pair(result, fields=("values", "indices")):
    """torch.return_types: a named tuple; indices never require grad."""
    assert tuple(result._fields) == fields, result._fields
    assert not result[1].requires_grad
    return tuple(result)


def _is_jax(xp):
    return xp is not np


def _no_int(name):
    return ErrorInput((np.ones((3,), np.int64),), TypeError, (name, "i64[3]"))


def _dim_errors(name, **kw):
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x,), IndexError, (name, "out of range", "got 2"), {"dim": 2, **kw})]


def _distinct(rng, shape, dtype):
    """Distinct values at least 0.1 apart: no ties for max/sort/cummax."""
    n = math.prod(shape)
    vals = np.linspace(-2.0, 2.0, n) if n > 1 else np.array([0.7])
    return rng.permutation(vals).reshape(shape).astype(dtype.numpy)


def _away_from_zero(rng, shape, dtype):
    """0.5 <= |x| <= 1.5: products and their quotients stay well scaled."""
    return (uniform(rng, shape, F64, 0.5, 1.5) * rng.choice([-1, 1], shape)).astype(dtype.numpy)


# ---- prod -----------------------------------------------------------------------------------
def _prod_samples(rng, dtype):
    x = _away_from_zero(rng, (2, 3, 4), dtype)
    z = uniform(rng, (3, 4), dtype, 0.5, 1.5)
    z[0, 1] = 0.0                      # one zero: it gets the product of the others
    z[1, 0] = z[1, 2] = 0.0            # two zeros: no gradient in that row
    # prod is a polynomial: finite differences hold at zeros too (the zero samples come
    # first, so gradcheck and gradgradcheck run on them)
    out = [Sample((z,), {"dim": 1}), Sample((z,)), Sample((x,), {"dim": -1, "keepdim": True}),
           Sample((uniform(rng, (), dtype),), {"dim": 0}),
           Sample((x,), {"dim": (0, 2)})]    # torch takes one dim; tracegrad also a tuple
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4), dtype=np.int32),), {"dim": 0}, dtype=I64))
        out.append(Sample((x,), {"dim": 2, "dtype": F64}, dtype=F64))
    return out


def _prod_complex(rng, dtype):
    """Complex products with exact zeros (one and two per row) and over all dims."""
    z = with_imag(rng, uniform(rng, (3, 4), F64, 0.5, 1.5), dtype, 0.5)
    z[0, 1] = 0.0
    z[1, 0] = z[1, 2] = 0.0
    return [Sample((z,), {"dim": 1}), Sample((cuniform(rng, (2, 3), dtype, 0.5, 1.5),))]


def _prod_ref(xp, x, dim=None, keepdim=False, dtype=None):
    # jax's prod gradient is exact at zeros (products of the others), as torch's
    return xp.prod(x, axis=_axis(x, dim), keepdims=keepdim,
                   dtype=None if x.dtype.kind in "fc" else np.int64)


# ---- amin; max / min ------------------------------------------------------------------------
def _tied(rng, dtype, value):
    x = grid(rng, (3, 4), dtype)
    x[:, 1] = x[:, 3] = value          # two extremes per row
    return x


def _amin_samples(rng, dtype):
    return [Sample((_distinct(rng, (2, 3, 4), dtype),)),
            Sample((_distinct(rng, (2, 3, 4), dtype),), {"dim": (0, 2), "keepdim": True}),
            Sample((uniform(rng, (), dtype),)),
            Sample((_tied(rng, dtype, -5.0),), {"dim": 1}, fd=False)]   # ties share evenly


def _max_samples(tie_value):
    def samples(rng, dtype):
        x = _distinct(rng, (2, 3, 4), dtype)
        out = [Sample((x,), {"dim": 1}), Sample((x,), {"dim": -1, "keepdim": True}),
               Sample((x,)),                                     # no dim: the value
               Sample((uniform(rng, (), dtype),), {"dim": 0}),
               # with dim: the whole gradient to the first of the ties (torch)
               Sample((_tied(rng, dtype, tie_value),), {"dim": 1}, fd=False),
               # without dim: ties share the gradient evenly (torch)
               Sample((np.full((2, 2), 3.0, dtype.numpy),), fd=False),
               Sample((x, uniform(rng, (4,), dtype)))]             # binary: maximum/minimum
        if dtype is F32:
            out.append(Sample((ints(rng, (3, 4)),), {"dim": 0}, dtype=I64))
        return out
    return samples


def _max_ref(arg, full, binary):
    def ref(xp, x, dim=None, keepdim=False, other=None):
        if isinstance(dim, (np.ndarray,)) or hasattr(dim, "shape"):
            return getattr(xp, binary)(x, dim)
        if dim is None:
            return getattr(xp, full)(x)
        if x.ndim == 0:
            return x, np.int64(0)
        idx = getattr(xp, arg)(x, axis=dim, keepdims=True)
        values = xp.take_along_axis(x, idx, axis=dim)
        if not keepdim:
            values, idx = xp.squeeze(values, dim), xp.squeeze(idx, dim)
        return values, idx
    return ref


def _max_fn(name):
    def fn(x, *args, **kw):
        out = getattr(x, name)(*args, **kw)
        return _pair(out) if isinstance(out, tuple) else out
    return fn


def _max_errors(name):
    def errors():
        return _dim_errors(name) + [
            ErrorInput((np.ones((0, 3), np.float32),), ValueError, (name, "numel() == 0")),
            ErrorInput((np.ones((2, 3), np.float32),), TypeError, (name, "keepdim", "dim"),
                       {"keepdim": True}),
            ErrorInput((np.ones((0, 3), np.float32),), ValueError,
                       (name, "dim 0", "non-zero size", "f32[0,3]"), {"dim": 0})]
    return errors


# ---- argmax / argmin ------------------------------------------------------------------------
def _arg_samples(rng, dtype):
    x = _distinct(rng, (2, 3, 4), dtype)
    out = [Sample((x,)), Sample((x,), {"dim": 1}), Sample((x,), {"dim": -1, "keepdim": True}),
           Sample((x,), {"keepdim": True}), Sample((uniform(rng, (), dtype),), {"dim": 0}),
           Sample((_tied(rng, dtype, 5.0),), {"dim": 1}),          # the first of the ties
           Sample((_tied(rng, dtype, -5.0),), {"dim": 1})]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)),), {"dim": 0}))
    return out


def _arg_ref(fn):
    def ref(xp, x, dim=None, keepdim=False):
        return getattr(xp, fn)(x, axis=_axis(x, dim), keepdims=keepdim)
    return ref


def _arg_errors(name):
    def errors():
        x = np.ones((2, 3), np.float32)
        return _dim_errors(name) + [
            ErrorInput((x,), TypeError, (name, "dim must be an int", "tuple"), {"dim": (0, 1)}),
            ErrorInput((np.ones((0, 3), np.float32),), ValueError, (name, "numel() == 0"))]
    return errors


# ---- var / std / var_mean / std_mean --------------------------------------------------------
def _var_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    c = uniform(rng, (2, 3), dtype)
    c[0] = 1.5                          # a constant row: std 0, gradient 0 (torch)
    return [Sample((x,)), Sample((x,), {"dim": 1}),
            Sample((x,), {"dim": (0, 2), "keepdim": True, "correction": 0}),
            Sample((x, 1, False, True)),                             # (dim, unbiased, keepdim)
            Sample((x, False)),                                      # legacy (input, unbiased)
            Sample((x,), {"dim": -1, "unbiased": True, "correction": None}),
            Sample((x,), {"dim": 2, "correction": 2.5}),
            Sample((c,), {"dim": 1}, fd=False)]


def _var_args(x, dim=None, unbiased=None, keepdim=False, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    return _axis(x, dim), correction, keepdim


def _var_ref(xp, x, *args, **kw):
    dim, correction, keepdim = _var_args(x, *args, **kw)
    return xp.var(x, axis=dim, ddof=correction, keepdims=keepdim)


def _std_ref(xp, x, *args, **kw):
    v = _var_ref(xp, x, *args, **kw)
    # torch: gradient 0 where std == 0 (jnp.sqrt would give inf * 0)
    return xp.where(v == 0, 0.0, xp.sqrt(xp.where(v == 0, 1.0, v)))


def _with_mean_ref(spread):
    def ref(xp, x, *args, **kw):
        dim, _, keepdim = _var_args(x, *args, **kw)
        return spread(xp, x, *args, **kw), xp.mean(x, axis=dim, keepdims=keepdim)
    return ref


def _var_errors(name):
    def errors():
        x = np.ones((2, 3), np.float32)
        return _dim_errors(name) + [
            _no_int(name),
            ErrorInput((x,), TypeError, (name, "unbiased", "correction"),
                       {"unbiased": True, "correction": 1})]
    return errors


# ---- logsumexp ------------------------------------------------------------------------------
def _logsumexp_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype, -3, 3)
    out = [Sample((x, 1)), Sample((x, (0, 2))), Sample((x, -1, True)),
           Sample((uniform(rng, (), dtype), 0)),
           Sample((np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, 1.0]], dtype.numpy), 1))]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)), 1), dtype=F32))      # integers -> float32
    return out


def _logsumexp_ref(xp, x, dim, keepdim=False):
    if x.dtype.kind not in "fc":
        x = x.astype(np.float32)
    dim = _axis(x, dim)
    m = xp.max(xp.real(x), axis=dim, keepdims=True)   # complex: a real shift
    m = xp.where(xp.isfinite(m), m, 0.0)
    out = xp.log(xp.sum(xp.exp(x - m), axis=dim, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, axis=dim)


def _logsumexp_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x,), TypeError, ("logsumexp", "dim")),
            ErrorInput((x, 2), IndexError, ("logsumexp", "out of range", "got 2"))]


# ---- norm -----------------------------------------------------------------------------------
def _norm_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    z = uniform(rng, (3, 4), dtype)
    z[0] = 0.0                          # a zero row: gradient 0 (torch), not nan
    z[1, 2] = 0.0
    t = np.array([[3.0, -3.0, 1.0, 0.5], [0.5, -1.0, 0.5, 2.0]], dtype.numpy)  # |x| ties
    out = [Sample((x,)), Sample((x, 1)), Sample((x, 2, 1)), Sample((x, INF, (0, 2))),
           Sample((x, -INF, -1, True)), Sample((x, 3, 2)), Sample((x, "fro", (1, 2))),
           Sample((uniform(rng, (), dtype), 2)),
           Sample((z, 2, 1), fd=False), Sample((z, 1, 1), fd=False),
           Sample((t, INF, 1), fd=False), Sample((t, -INF, 1), fd=False)]
    if dtype is F32:
        out.append(Sample((x, 2, 1), {"dtype": F64}, dtype=F64))
    return out


def _abs(xp, x):
    # torch's subgradient 0 at 0 (jnp.abs gives 1); complex samples stay away from 0
    return xp.abs(x) if x.dtype.kind == "c" else x * xp.sign(x)


def _norm_complex(rng, dtype):
    """|z| norms (real results): 2, 1, inf and 3; complex64 with dtype=complex128 too."""
    out = complexify(_norm_samples, (0, 1, 3, 5), real_out=True)(rng, dtype)
    if dtype is C64:
        out.append(Sample((cuniform(rng, (2, 3, 4), C64), 2, 1), {"dtype": C128}, dtype=F64))
    return out


def _norm_ref(xp, x, p="fro", dim=None, keepdim=False, dtype=None):
    if dtype is not None:
        x = x.astype(dtype.numpy)
    dim = _axis(x, dim)
    a = _abs(xp, x)
    if p == INF:
        return xp.max(a, axis=dim, keepdims=keepdim)   # jnp.max: ties share, as torch
    if p == -INF:
        return xp.min(a, axis=dim, keepdims=keepdim)
    if p == 1:
        return xp.sum(a, axis=dim, keepdims=keepdim)
    if p in ("fro", 2):
        sq = xp.real(x) ** 2 + xp.imag(x) ** 2 if x.dtype.kind == "c" else x * x
        s = xp.sum(sq, axis=dim, keepdims=keepdim)
        return xp.where(s == 0, 0.0, xp.sqrt(xp.where(s == 0, 1.0, s)))   # torch: 0 at 0
    return xp.sum(a ** p, axis=dim, keepdims=keepdim) ** (1.0 / p)


def _norm_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, "nuc"), NotImplementedError, ("norm", "'nuc'")),
            ErrorInput((np.ones((2, 2, 2), np.float32), "fro", (0, 1, 2)), ValueError,
                       ("norm", "'fro'", "2 dims")),
            _no_int("norm"),
            ErrorInput((x, INF, 2), IndexError, ("norm", "out of range", "got 2")),
            ErrorInput((np.ones((0, 3), np.float32), INF, 0), ValueError,
                       ("norm", "inf norm", "empty", "f32[0,3]"))]


# ---- cumsum / cumprod -----------------------------------------------------------------------
def _cumsum_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    out = [Sample((x, 1)), Sample((x, -1)), Sample((x, 0)), Sample((uniform(rng, (), dtype), 0))]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4), dtype=np.int32), 1), dtype=I64))
        out.append(Sample((rng.random((5,)) > 0.5, 0), dtype=I64))
        out.append(Sample((x, 2), {"dtype": F64}, dtype=F64))
    return out


def _cumprod_samples(rng, dtype):
    x = _away_from_zero(rng, (2, 3, 4), dtype)
    z = uniform(rng, (3, 5), dtype, 0.5, 1.5)
    z[0, 1] = 0.0                       # one zero
    z[1, 1] = z[1, 3] = 0.0             # two zeros: only the first gets a gradient
    z[2, 4] = 0.0                       # a zero at the end
    # a polynomial: finite differences hold at zeros (first, for gradcheck/gradgradcheck)
    out = [Sample((z, 1)), Sample((np.ascontiguousarray(z.T), 0)), Sample((x, -1)),
           Sample((uniform(rng, (), dtype), 0))]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4), 1, 4, dtype=np.int32), 1), dtype=I64))
    return out


def _scan_ref(fn):
    def ref(xp, x, dim, dtype=None):
        if dtype is not None:
            x = x.astype(dtype.numpy)
        elif x.dtype.kind not in "fc":
            x = x.astype(np.int64)
        if x.ndim == 0:
            return x
        return getattr(xp, fn)(x, axis=dim)   # jax's cumprod gradient is exact at zeros
    return ref


# ---- cummax / cummin ------------------------------------------------------------------------
def _cum_samples(rng, dtype):
    x = _distinct(rng, (2, 3, 4), dtype)
    t = np.array([[1.0, 3.0, 2.0, 3.0, 1.0, 5.0], [3.0, 1.0, 2.0, 1.0, 4.0, 0.0]], dtype.numpy)
    out = [Sample((x, 1)), Sample((x, -1)), Sample((uniform(rng, (), dtype), 0)),
           # a tie moves the index to the later element; torch 2.13 gives cummax indices
           # [[0, 1, 1, 3, 3, 5], [0, 0, 0, 0, 4, 4]],
           # cummin [[0, 0, 0, 0, 4, 4], [0, 1, 1, 3, 3, 5]]
           Sample((t, 1), fd=False),
           Sample((np.ascontiguousarray(t.T), 0), fd=False)]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)), 1), dtype=I64))
    return out


def _cum_ref(largest):
    """A quadratic reference: for each prefix, its extreme and the last index holding it."""
    def ref(xp, x, dim):
        if x.ndim == 0:
            return x, np.int64(0)
        xm = xp.moveaxis(x, dim, -1)
        n = xm.shape[-1]
        seen = np.arange(n)[None, :] <= np.arange(n)[:, None]      # [k, j]: j <= k
        pre = xp.where(seen, xm[..., None, :], -INF if largest else INF)
        ext = (xp.max if largest else xp.min)(pre, axis=-1, keepdims=True)
        hit = seen & ((pre == ext) | (pre != pre))    # a NaN is the extreme from then on
        idx = n - 1 - xp.argmax(xp.flip(hit, -1), axis=-1)
        values = xp.take_along_axis(xm, idx, axis=-1)
        return xp.moveaxis(values, -1, dim), xp.moveaxis(idx, -1, dim)
    return ref


# ---- sort / argsort / topk ------------------------------------------------------------------
def _sort_samples(rng, dtype):
    x = _distinct(rng, (2, 3, 4), dtype)
    tie = grid(rng, (3, 6), dtype)       # many ties: stable order
    out = [Sample((x,)), Sample((x, 1)), Sample((x,), {"dim": 0, "descending": True}),
           Sample((uniform(rng, (), dtype),)),
           Sample((tie,), {"stable": True}, fd=False),
           Sample((tie, 0, True), fd=False)]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)),), {"descending": True}, dtype=I64))
    return out


def _order(xp, x, dim, descending):
    """Stable ascending (or descending, ties in input order) argsort: NaN counts as largest."""
    if not descending:
        return xp.argsort(x, axis=dim, stable=True)
    key = xp.where(x != x, -INF, -x) if x.dtype.kind == "f" else -x
    return xp.argsort(key, axis=dim, stable=True)


def _sort_ref(xp, x, dim=-1, descending=False, stable=False):
    if x.ndim == 0:
        return x, np.int64(0)
    idx = _order(xp, x, dim, descending)
    return xp.take_along_axis(x, idx, axis=dim), idx


def _topk_samples(rng, dtype):
    x = _distinct(rng, (2, 3, 5), dtype)
    tie = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, 2.0, 2.0, 2.0]], dtype.numpy)
    out = [Sample((x, 2)), Sample((x, 1, 1)), Sample((x, 2), {"largest": False, "dim": 0}),
           Sample((x, 5)), Sample((x, 0)), Sample((uniform(rng, (), dtype), 1)),
           Sample((tie, 2), fd=False)]   # tied values all in, or the first ones taken
    return out


def _topk_ref(xp, x, k, dim=-1, largest=True, sorted=True):
    if x.ndim == 0:
        return x, np.int64(0)
    idx = xp.moveaxis(_order(xp, x, dim, largest), dim, -1)[..., :k]
    idx = xp.moveaxis(idx, -1, dim)
    return xp.take_along_axis(x, idx, axis=dim), idx


def _topk_errors():
    x = np.ones((2, 3), np.float32)
    return [ErrorInput((x, 4), ValueError, ("topk", "k out of range", "k=4", "size 3")),
            ErrorInput((x, -1), ValueError, ("topk", "k out of range")),
            ErrorInput((x, 1, 2), IndexError, ("topk", "out of range", "got 2"))]


# ---- all / any / count_nonzero --------------------------------------------------------------
def _bool_samples(rng, dtype):
    b = rng.random((2, 3, 4)) > 0.3
    x = grid(rng, (3, 4), dtype)
    return [Sample((b,)), Sample((b,), {"dim": 1}), Sample((b,), {"dim": (0, 2), "keepdim": True}),
            Sample((x,), {"dim": -1}), Sample((np.zeros((0, 2), dtype.numpy),), {"dim": 0}),
            Sample((ints(rng, (3, 4), 0, 2, np.uint8),), {"dim": 1}, dtype=tg.uint8),  # torch
            Sample((np.array(True),))]


def _bool_ref(fn):
    def ref(xp, x, dim=None, keepdim=False):
        out = getattr(xp, fn)(x, axis=_axis(x, dim), keepdims=keepdim)
        return out.astype(np.uint8) if x.dtype == np.uint8 else out
    return ref


def _nonzero_complex(rng, dtype):
    """Complex values with exact zeros, and nonzero values with a zero real or imaginary
    part (true: either part nonzero, as torch)."""
    z = (grid(rng, (3, 4), F64) + 1j * grid(rng, (3, 4), F64)).astype(dtype.numpy)
    z[0] = 0.0
    z[1, :2] = 1j, 2.0
    z[2] = 0.5 - 1j
    return [Sample((z,), {"dim": -1}), Sample((z,))]


def _count_samples(rng, dtype):
    x = grid(rng, (2, 3, 4), dtype)
    return [Sample((x,)), Sample((x,), {"dim": 1}), Sample((x, (0, 2))),
            Sample((rng.random((3, 4)) > 0.5, -1)), Sample((ints(rng, (3, 4), -1, 2),))]


# ---- NaN (the forward check compares values without NaN, so indices only) ----------------------
NAN = np.array([[1.0, np.nan, 3.0, np.nan, 0.5], [2.0, 1.0, np.nan, 0.0, 4.0]], np.float32)


def _nan_samples(rng, dtype):
    x = NAN.astype(dtype.numpy)
    # torch 2.13 gives, for row 0 of NAN: max(dim=1).indices 1, cummax(0..4).indices
    # [0, 1, 1, 3, 3], sort indices [4, 0, 2, 1, 3] (NaN sorts as the largest value)
    return [Sample((x, "max", 1)), Sample((x, "min", 1)), Sample((x, "cummax", 1)),
            Sample((x, "cummin", 1)), Sample((x, "sort", 1)), Sample((x, "sort", 1, True)),
            Sample((x, "topk", 2)), Sample((x, "topk", 2, 1, False)), Sample((x, "argmax"))]


def _nan_fn(x, op, *args):
    out = getattr(x, op)(*args)
    return out.indices if isinstance(out, tuple) else out


_NAN_REFS = {"max": lambda xp, x, d: _max_ref("argmax", "max", "maximum")(xp, x, d)[1],
             "min": lambda xp, x, d: _max_ref("argmin", "min", "minimum")(xp, x, d)[1],
             "cummax": lambda xp, x, d: _cum_ref(True)(xp, x, d)[1],
             "cummin": lambda xp, x, d: _cum_ref(False)(xp, x, d)[1],
             "sort": lambda xp, x, *a: _sort_ref(xp, x, *a)[1],
             "topk": lambda xp, x, *a: _topk_ref(xp, x, *a)[1],
             "argmax": lambda xp, x: xp.argmax(x)}


# ---- the entries ----------------------------------------------------------------------------
OPS = [
    OpInfo("prod", lambda x, **kw: x.prod(**kw), _prod_ref, _prod_samples,
           error_inputs=lambda: _dim_errors("prod"), complex_samples=_prod_complex,
           notes="exact at zeros: one zero in a slice gets the product of the others; with "
                 "two, no gradient (second derivatives exact too)",
           point_checks=(
               Subgradient("prod_zeros", "prod", lambda x: tg.prod(x, dim=1),
                           ([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0]],),
                           ([[6.0, 0.0, 0.0], [0.0, 0.0, 0.0]],),
                           "exact with zeros (product of the others), not out / x"),
               ComplexTorchGrad("prod", lambda a: a.prod().reshape(1), 1,
                                [[-0.4 - 0.75j, 2.75 - 1.75j, -0.75 + 1.25j]]),
               ComplexSecondOrder("prod", lambda z, w: (z * w).prod(0, keepdim=True)),
           )),
    OpInfo("amin", lambda x, **kw: x.amin(**kw),
           lambda xp, x, dim=None, keepdim=False: xp.min(x, axis=_axis(x, dim), keepdims=keepdim),
           _amin_samples, error_inputs=lambda: _dim_errors("amin") + [
               ErrorInput((np.ones((0, 3), np.float32),), ValueError, ("amin", "size 0"),
                          {"dim": 0})],
           notes="ties share the gradient evenly",
           point_checks=(
               Subgradient("amin", "amin", lambda x: tg.amin(x), ([1.0, 1.0, 3.0, 2.0],),
                           ([0.5, 0.5, 0.0, 0.0],), "tied minima share the gradient evenly"),
           )),
    OpInfo("max", _max_fn("max"), _max_ref("argmax", "max", "maximum"), _max_samples(5.0),
           error_inputs=_max_errors("max"), covers=("max", "max_with_indices", "max_all"),
           notes="with dim: the gradient goes to the index returned (the first maximum); "
                 "without dim: ties share it evenly",
           point_checks=(
               Subgradient("max_full", "max", lambda x: tg.max(x), ([1.0, 3.0, 3.0, 2.0],),
                           ([0.0, 0.5, 0.5, 0.0],), "max() without dim: ties share evenly"),
               Subgradient("max_dim", "max", lambda x: tg.max(x, dim=1).values,
                           ([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]],),
                           ([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]],),
                           "max(dim): all to the returned index (the first maximum)"),
           )),
    OpInfo("min", _max_fn("min"), _max_ref("argmin", "min", "minimum"), _max_samples(-5.0),
           error_inputs=_max_errors("min"), covers=("min", "min_with_indices", "min_all"),
           notes="with dim: the gradient goes to the index returned (the first minimum); "
                 "without dim: ties share it evenly",
           point_checks=(
               Subgradient("min_dim", "min", lambda x: tg.min(x, dim=1).values,
                           ([[1.0, 1.0, 3.0], [2.0, 2.0, 2.0]],),
                           ([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],),
                           "min(dim): all to the returned index (the first minimum)"),
           )),
    OpInfo("argmax", lambda x, **kw: x.argmax(**kw), _arg_ref("argmax"), _arg_samples,
           differentiable=False, out_dtype=I64, error_inputs=_arg_errors("argmax")),
    OpInfo("argmin", lambda x, **kw: tg.argmin(x, **kw), _arg_ref("argmin"), _arg_samples,
           differentiable=False, out_dtype=I64, error_inputs=_arg_errors("argmin")),
    # complex: var/std of |x - mean| are real (float32 for complex64); var_mean's mean is complex
    OpInfo("var", lambda x, *a, **kw: x.var(*a, **kw), _var_ref, _var_samples,
           error_inputs=_var_errors("var"), complex_samples=complexify(_var_samples, (0, 2), True),
           notes="nan where N - correction <= 0, as torch",
           point_checks=(
               # reductions whose result is real (var, std, norms, l1_loss): G_REAL[0] = 1 on it
               ComplexTorchGrad("var", lambda z: z.var().reshape(1), 1,
                                [[0.6 + 1.6j, -0.9 - 0.1j, 0.3 - 1.5j]]),
               ComplexSecondOrder("var", lambda z, w: (z * w).var().reshape(1)),
               ComplexForwardAD("var", lambda z: z.var().reshape(1),
                                lambda z: np.var(z, ddof=1).reshape(1)),
               ComplexEdgeGrad("var_at_0", lambda z: z.var(), Z00, [0, 0]),
           )),
    OpInfo("std", lambda x, *a, **kw: tg.std(x, *a, **kw), _std_ref, _var_samples,
           error_inputs=_var_errors("std"), complex_samples=complexify(_var_samples, (0, 2), True),
           notes="0 where std is 0 (a constant slice)",
           point_checks=(
               Subgradient("std_constant", "std", lambda x: tg.std(x), ([1.0, 1.0, 1.0],),
                           ([0.0, 0.0, 0.0],), "0 for a constant input (std = 0)"),
               ComplexTorchGrad("std", lambda z: z.std(correction=0).reshape(1), 1,
                                [[0.140487871737 + 0.374634324633j,
                                  -0.210731807606 - 0.02341464529j,
                                  0.070243935869 - 0.351219679343j]]),
               ComplexEdgeGrad("std_at_0", lambda z: z.std(), Z00, [0, 0]),
               ComplexEdgeGrad("std_constant", lambda z: z.std(), [1 + 1j, 1 + 1j], [0, 0]),
               ComplexEdgeGrad("std_rows_one_constant", lambda z: z.reshape(2, 2).std(dim=1).sum(),
                               [1 + 1j, 1 + 1j, 1j, 2],
                               [0, 0, -0.632455532034 + 0.316227766017j,
                                0.632455532034 - 0.316227766017j]),
           )),
    OpInfo("var_mean", lambda x, *a, **kw: tuple(tg.var_mean(x, *a, **kw)),
           _with_mean_ref(_var_ref), _var_samples, error_inputs=_var_errors("var_mean"),
           complex_samples=(0, 2)),
    OpInfo("std_mean", lambda x, *a, **kw: tuple(x.std_mean(*a, **kw)),
           _with_mean_ref(_std_ref), _var_samples, error_inputs=_var_errors("std_mean"),
           complex_samples=(1,), notes="0 where std is 0 (a constant slice)",
           point_checks=(
               ComplexTorchGrad("std_mean",
                                lambda z: (lambda s, m: s + m)(*tg.std_mean(z)).reshape(1), 1,
                                [[0.505395133736 + 0.292164801074j, 0.075240632729 - 0.1953436334j,
                                  0.419364233535 - 0.596821167674j]]),
           )),
    # complex: the principal log of the sum (shifted by the largest real part)
    OpInfo("logsumexp", lambda x, *a, **kw: x.logsumexp(*a, **kw), _logsumexp_ref,
           _logsumexp_samples, error_inputs=_logsumexp_errors, complex_samples=(0, 2),
           notes="nan where the result is infinite, as torch",
           point_checks=(
               Subgradient("logsumexp_neg_inf", "logsumexp", lambda x: tg.logsumexp(x, 0),
                           ([-INF, 0.0],), ([0.0, 1.0],), "0 for -inf entries"),
               ComplexTorchGrad("logsumexp", lambda z: z.logsumexp(0).reshape(1), 1,
                                [[0.89823626753 - 3.143685505256j, 0.669780845108 + 0.289131139353j,
                                  -0.568017112639 + 2.354554365904j]]),
               ComplexSecondOrder("logsumexp", lambda z, w: (z * w).logsumexp(0, keepdim=True)),
               ComplexForwardAD("logsumexp", lambda z: z.logsumexp(0),
                                lambda z: np.log(np.exp(z).sum())),
               ComplexEdgeGrad("logsumexp_all_-inf", lambda z: tg.logsumexp(z, 0).real,
                               [complex(-np.inf, 0)] * 2, [complex(np.nan, np.nan)] * 2),
               ComplexEdgeGrad("logsumexp_+inf", lambda z: tg.logsumexp(z, 0).real,
                               [complex(np.inf, 0), 1j], [complex(np.nan, np.nan), 0]),
               ComplexEdgeGrad("logsumexp_large", lambda z: tg.logsumexp(z, 0).real,
                               [1000 + 1j, 999 - 1j],
                               [1.021415364229 - 0.403438706142j,
                                -0.021415364229 + 0.403438706142j]),
           )),
    OpInfo("norm", lambda x, *a, **kw: x.norm(*a, **kw), _norm_ref, _norm_samples,
           error_inputs=_norm_errors, complex_samples=_norm_complex,
           notes="p=2/'fro': 0 where the norm is 0; p=1: 0 at 0; p=inf/-inf: tied |x| "
                 "share evenly",
           point_checks=(
               Subgradient("norm_zero", "norm", lambda x: tg.norm(x), ([0.0, 0.0, 0.0],),
                           ([0.0, 0.0, 0.0],), "2-norm: gradient 0 at the zero vector"),
               Subgradient("norm_inf_ties", "norm", lambda x: tg.norm(x, p=INF),
                           ([-3.0, 3.0, 1.0],), ([-0.5, 0.5, 0.0],),
                           "inf-norm: tied maxima of |x| share evenly"),
               ComplexTorchGrad("norm", lambda z: z.norm().reshape(1), 1,
                                [[0.376889180722 + 0.753778361444j,
                                  -0.188444590361 + 0.113066754217j,
                                  0.263822426506 - 0.414578098794j]]),
               ComplexTorchGrad("norm_p1", lambda z: z.norm(1).reshape(1), 1,
                                [[0.4472135955 + 0.894427191j, -0.857492925713 + 0.514495755428j,
                                  0.536875492193 - 0.843661487732j]]),
               ComplexTorchGrad("norm_p3", lambda z: z.norm(3).reshape(1), 1,
                                [[0.392551175775 + 0.785102351551j,
                                  -0.051182411386 + 0.030709446831j,
                                  0.160226291555 - 0.251784172443j]]),
               ComplexSecondOrder("norm_p3", lambda z, w: (z * w).norm(3)[None]),
               ComplexEdgeGrad("norm_at_0", lambda z: z.norm(), Z00, [0, 0]),
           )),
    OpInfo("cumsum", lambda x, *a, **kw: x.cumsum(*a, **kw), _scan_ref("cumsum"),
           _cumsum_samples, error_inputs=lambda: _dim_errors("cumsum"), complex_samples=2),
    OpInfo("cumprod", lambda x, *a, **kw: tg.cumprod(x, *a, **kw), _scan_ref("cumprod"),
           _cumprod_samples, error_inputs=lambda: _dim_errors("cumprod"),
           covers=("cumprod", "linear_scan"), complex_samples=2,
           notes="exact at zeros (no division): the first zero of a slice gets the products "
                 "that skip it, later entries none",
           point_checks=(
               Subgradient("cumprod_zero", "cumprod", lambda x: tg.cumprod(x, dim=0),
                           ([2.0, 0.0, 3.0],), ([1.0, 8.0, 0.0],), "exact with zeros"),
               ComplexTorchGrad("cumprod", lambda a: a.cumprod(0), 1,
                                [[1.684 - 0.178j, -1.03 + 2.71j, 0.07 - 1.59j]]),
               ComplexSecondOrder("cumprod", lambda z, w: (z + w).cumprod(0)),
           )),
    OpInfo("cummax", lambda x, dim: _pair(x.cummax(dim)), _cum_ref(True), _cum_samples,
           covers=("cummax", "cummax_with_indices"), error_inputs=lambda: _dim_errors("cummax"),
           notes="the gradient goes to the index returned (the last of tied maxima)",
           point_checks=(
               Subgradient("cummax_ties", "cummax", lambda x: tg.cummax(x, dim=0).values,
                           ([1.0, 3.0, 3.0, 2.0],), ([1.0, 1.0, 2.0, 0.0],),
                           "each output's gradient goes to its returned index (the last tie)"),
           )),
    OpInfo("cummin", lambda x, dim: _pair(tg.cummin(x, dim)), _cum_ref(False), _cum_samples,
           covers=("cummin", "cummin_with_indices"), error_inputs=lambda: _dim_errors("cummin"),
           notes="the gradient goes to the index returned (the last of tied minima)"),
    OpInfo("sort", lambda x, *a, **kw: _pair(x.sort(*a, **kw)), _sort_ref, _sort_samples,
           covers=("sort", "sort_with_indices", "put_along_axis"),
           error_inputs=lambda: _dim_errors("sort"),
           notes="always stable: tied values keep their input order",
           point_checks=(
               Subgradient("sort_ties", "sort",
                           lambda x: tg.sort(x).values * tg.tensor([1.0, 2.0, 3.0, 4.0],
                                                      dtype=tg.float64), ([2.0, 1.0, 2.0, 0.0],),
                           ([3.0, 2.0, 4.0, 1.0],),
                           "ties keep their order (stable), each gets its own gradient"),
           )),
    OpInfo("argsort", lambda x, *a, **kw: x.argsort(*a, **kw),
           lambda xp, x, *a, **kw: _sort_ref(xp, x, *a, **kw)[1], _sort_samples,
           differentiable=False, out_dtype=I64, error_inputs=lambda: _dim_errors("argsort")),
    OpInfo("topk", lambda x, *a, **kw: _pair(tg.topk(x, *a, **kw)), _topk_ref, _topk_samples,
           error_inputs=_topk_errors,
           notes="ties: the lowest indices first; always sorted",
           point_checks=(
               Subgradient("topk_ties", "topk", lambda x: tg.topk(x, 1).values,
                           ([2.0, 1.0, 2.0, 0.0],), ([1.0, 0.0, 0.0, 0.0],),
                           "all to the returned index"),
           )),
    OpInfo("all", lambda x, **kw: x.all(**kw), _bool_ref("all"), _bool_samples,
           differentiable=False, out_dtype=BOOL, error_inputs=lambda: _dim_errors("all"),
           complex_samples=_nonzero_complex),
    OpInfo("any", lambda x, **kw: tg.any(x, **kw), _bool_ref("any"), _bool_samples,
           differentiable=False, out_dtype=BOOL, error_inputs=lambda: _dim_errors("any"),
           complex_samples=_nonzero_complex),
    OpInfo("nan_indices", _nan_fn, lambda xp, x, op, *a: _NAN_REFS[op](xp, x, *a), _nan_samples,
           differentiable=False, out_dtype=I64,
           covers=("max", "min", "cummax", "cummin", "sort", "topk", "argmax")),
    OpInfo("count_nonzero", lambda x, *a, **kw: x.count_nonzero(*a, **kw),
           lambda xp, x, dim=None: xp.sum(x != 0, axis=_axis(x, dim)), _count_samples,
           differentiable=False, out_dtype=I64, complex_samples=_nonzero_complex,
           error_inputs=lambda: _dim_errors("count_nonzero")),
]


# ---- kthvalue / logcumsumexp / dist (the torch 2.13 probe) ---------------------------------
def _kth_samples(rng, dtype):
    x = _distinct(rng, (2, 3, 4), dtype)
    out = [Sample((x, 2)), Sample((x, 1, 0)), Sample((x, 3, 1), {"keepdim": True}),
           Sample((x, 4, -1)), Sample((uniform(rng, (), dtype), 1))]
    if dtype is F32:
        out.append(Sample((ints(rng, (3, 4)), 2, 1), dtype=I64))
    return out


def _kth_ref(xp, x, k, dim=-1, keepdim=False):
    if x.ndim == 0:
        return x, np.int64(0)
    idx = xp.take(xp.argsort(x, axis=dim, stable=True), xp.asarray([k - 1]), axis=dim)
    values = xp.take_along_axis(x, idx, axis=dim)
    if not keepdim:
        values, idx = xp.squeeze(values, axis=dim), xp.squeeze(idx, axis=dim)
    return values, idx.astype(np.int64)


def _kth_errors():
    x = np.ones((2, 3), np.float32)
    # torch 2.13: RuntimeError "kthvalue(): selected number k out of range for dimension 1"
    return [ErrorInput((x, 4, 1), RuntimeError, ("kthvalue()", "out of range", "dimension 1")),
            ErrorInput((x, 0, 1), RuntimeError, ("kthvalue()", "out of range")),
            ErrorInput((x, 1, 2), IndexError, ("kthvalue", "out of range", "got 2"))]


def _lcse_samples(rng, dtype):
    x = uniform(rng, (2, 3, 4), dtype)
    big = np.array([[0.0, 80.0, -80.0, 3.0], [1.0, 2.0, 3.0, 4.0]], dtype.numpy)
    return [Sample((x, 1)), Sample((x, -1)), Sample((x, 0)), Sample((big, 1)),
            Sample((uniform(rng, (), dtype), 0))]


def _lcse_ref(xp, x, dim):
    if x.ndim == 0:
        return x
    if xp is np:
        return np.logaddexp.accumulate(x, axis=dim)
    from jax import lax
    return lax.cumlogsumexp(x, axis=dim)


def _dist_samples(rng, dtype):
    a, b = uniform(rng, (2, 3), dtype), uniform(rng, (2, 3), dtype)
    return [Sample((a, b)), Sample((a, b), {"p": 1}), Sample((a, b[0]), {"p": 3}),
            Sample((a, b), {"p": INF}), Sample((a, b), {"p": 1.5})]


def _dist_ref(xp, a, b, p=2):
    d = xp.abs(a - b)
    if p == INF:
        return xp.max(d)
    return xp.sum(d ** p) ** (1.0 / p)


OPS_PROBE = [
    OpInfo("kthvalue", lambda x, *a, **kw: _pair(tg.kthvalue(x, *a, **kw)), _kth_ref,
           _kth_samples, covers=("kthvalue", "kthvalue_with_indices"), error_inputs=_kth_errors,
           notes="the gradient goes to the index returned (the k-th of a stable sort; torch's "
                 "CPU quickselect may pick another of tied values)",
           point_checks=(
               Subgradient("kthvalue_ties", "kthvalue", lambda x: tg.kthvalue(x, 2).values,
                           ([2.0, 1.0, 2.0, 1.0],), ([0.0, 0.0, 0.0, 1.0],),
                           "all to the returned index: the k-th in a stable sort (index 3 "
                           "here, as torch 2.13)"),
           )),
    OpInfo("logcumsumexp", lambda x, *a, **kw: tg.logcumsumexp(x, *a, **kw), _lcse_ref,
           _lcse_samples, error_inputs=lambda: _dim_errors("logcumsumexp") + [
               ErrorInput((np.ones((3,), np.int64), 0), TypeError, ("logcumsumexp", "i64[3]"))]),
    OpInfo("dist", lambda a, b, **kw: tg.dist(a, b, **kw), _dist_ref, _dist_samples,
           notes="p=2: 0 where input == other (the norm's gradient at 0)",
           error_inputs=lambda: [ErrorInput((np.ones((3,), np.int64), np.ones((3,), np.int64)),
                                            TypeError, ("dist", "floating point"))]),
]
OPS.extend(OPS_PROBE)
