"""Scans along a dim: cumsum, cumprod (exact at zeros: products of the other factors, no
division, as torch) and the linear recurrence ``linear_scan``."""
from __future__ import annotations

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_FP32, CHEAP, COMPLEX, INTERNAL, LINEAR, REQUIRED, defop
from ._common import (accumulate_dtype, accumulate_np_dtype, conj_if_complex, fmt_types, mul_conj,
                      norm_dim)
from ._cost import SCAN


# ---- scans: cumsum / cumprod --------------------------------------------------------
def _canon_scan(name):
    return lambda types, *, dim, dtype: {"dim": norm_dim(name, dim, types[0].ndim),
                                         "dtype": None if dtype is None else T.as_dtype(dtype)}


def _scan_kernel(fn):
    def kernel(xp, x, *, dim, dtype):
        out = getattr(xp, fn)(x if x.ndim else xp.reshape(x, (1,)), axis=dim,
                              dtype=accumulate_np_dtype(x, dtype))
        return out if x.ndim else xp.reshape(out, ())
    return kernel


def _flip(b, v, dim):
    n = v.shape[dim]
    return b.index_take(v, b.arange(n - 1, -1, -1), dim)


def _reverse_cumsum(b, v, dim):
    """out[i] = sum of v[j] for j >= i along dim."""
    return _flip(b, b.cumsum(_flip(b, v, dim), dim), dim) if v.shape else v


def _shift(b, v, dim, fill):
    """v[i - 1] at position i along dim, `fill` at position 0."""
    n = v.shape[dim]
    edge = b.full(tuple(1 if d == dim else s for d, s in enumerate(v.shape)), fill, v.dtype)
    if n <= 1:
        return edge if n == 1 else v
    stops = tuple(n - 1 if d == dim else s for d, s in enumerate(v.shape))
    return b.cat([edge, b.slice(v, (0,) * len(stops), stops, (1,) * len(stops))], dim)


def _exclusive_cumprod(b, x, dim):
    """The product of x[j] for j < i along dim (1 at i = 0)."""
    return b.cumprod(_shift(b, x, dim, 1.0), dim)


def _cumprod_vjp(b, ct, x, out, *, dim, dtype):
    # g_i = prod_{l<i} x_l * h_i with h_i = sum_{j>=i} ct_j prod_{i<l<=j} x_l, i.e. the reverse
    # recurrence h_i = ct_i + x_{i+1} h_{i+1}: no division, so exact at zeros (and in its
    # own derivative), as torch's
    # (complex: the conjugated products, torch's convention)
    if not x.shape:
        return [ct]
    xc = conj_if_complex(b, x if x.dtype is ct.dtype else b.convert(x, ct.dtype))
    return [b.mul(_exclusive_cumprod(b, xc, dim), b.linear_scan(xc, ct, dim, True))]


_SCAN = dict(attrs=(("dim", REQUIRED, K.DIM), ("dtype", None, K.DTYPE_OPT)), flags=CHEAP | COMPLEX,
             infer=lambda types, *, dim, dtype: T.TensorType(
                 types[0].shape, accumulate_dtype(types[0], dtype)))

defop("cumsum", "input", canon=_canon_scan("cumsum"), kernel=_scan_kernel("cumsum"),
      vjp=lambda b, ct, x, out, *, dim, dtype: [_reverse_cumsum(b, ct, dim)],
      ref="torch.cumsum", **_SCAN, jvp=LINEAR,
      cost=SCAN, autocast={"cuda": AUTOCAST_FP32})
defop("cumprod", "input", canon=_canon_scan("cumprod"), kernel=_scan_kernel("cumprod"),
      vjp=_cumprod_vjp, ref="torch.cumprod", **_SCAN,
      cost=SCAN, autocast={"cuda": AUTOCAST_FP32})


# ---- linear recurrences: h_i = x_i + a_i h_{i-1} (or x_i + a_{i+1} h_{i+1} reversed) ------
def _linear_scan_infer(types, *, dim, reverse):
    a, x = types
    if a != x or not x.ndim:
        raise ShapeError(f"linear_scan: coefficients and inputs must share one type of "
                         f"rank >= 1, got {fmt_types(types)}")
    return x


def _linear_scan_np(xp, a, x, *, dim, reverse):
    a, x = xp.moveaxis(a, dim, 0), xp.moveaxis(x, dim, 0)
    h = xp.empty_like(x)
    n = x.shape[0]
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        edge = i == (n - 1 if reverse else 0)
        h[i] = x[i] if edge else x[i] + (a[i + 1] * h[i + 1] if reverse else a[i] * h[i - 1])
    return xp.moveaxis(h, 0, dim)


def _linear_scan_jax(xp, a, x, *, dim, reverse):
    from jax import lax  # jax loads on first use (start-up time)
    if reverse:   # step i's coefficient is a[i + 1]
        n = a.shape[dim]
        a = xp.concatenate([lax.slice_in_dim(a, 1, n, axis=dim),
                            xp.zeros_like(lax.slice_in_dim(a, 0, 1, axis=dim))], axis=dim)
    # compose the affine maps h -> a h + x, earlier step first
    compose = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])  # noqa: E731
    return lax.associative_scan(compose, (a, x), reverse=reverse, axis=dim)[1]


def _linear_scan_vjp(b, ct, a, x, h, *, dim, reverse):
    # the adjoint recurrence, same coefficients (conjugated for complex, torch's convention)
    lam = b.linear_scan(conj_if_complex(b, a), ct, dim, not reverse)
    # forward: h_i = x_i + a_i h_{i-1} -> lam_i h_{i-1};  reverse: h_{i-1} = .. + a_i h_i
    da = (mul_conj(b, _shift(b, lam, dim, 0.0), h) if reverse
          else mul_conj(b, lam, _shift(b, h, dim, 0.0)))
    return [da, lam]


# cumprod's exact gradient (torch's is exact at zeros); a sequential loop on NumPy,
# lax.associative_scan on jax.
defop("linear_scan", "coeff, input", attrs=(("dim", 0, K.DIM), ("reverse", False, K.BOOL)),
      flags=INTERNAL | COMPLEX,
      canon=lambda types, *, dim, reverse: {"dim": norm_dim("linear_scan", dim, types[1].ndim),
                                            "reverse": bool(reverse)},
      infer=_linear_scan_infer, kernel=_linear_scan_np, kernels={"jax": _linear_scan_jax},
      vjp=_linear_scan_vjp, ref="h[i] = input[i] + coeff[i] * h[i-1] (jax.lax.associative_scan)",
      cost=SCAN)


# ---- logcumsumexp ---------------------------------------------------------------------
def _logcumsumexp_infer(types, *, dim):
    t = types[0]
    if not t.dtype.is_floating_point:   # torch 2.13: NotImplementedError for integers
        raise DTypeError(f'logcumsumexp: "logcumsumexp_out_cpu" not implemented for '
                         f"{t.dtype.name} ({t}); pass a floating-point tensor")
    return t


def _logcumsumexp_np(xp, x, *, dim):
    # log(exp(a) + exp(b)) pairwise from the first element: never overflows (NumPy's
    # logaddexp subtracts the larger operand)
    return xp.logaddexp.accumulate(x, axis=dim) if x.ndim else x


def _logcumsumexp_jax(xp, x, *, dim):
    from jax import lax  # jax loads on first use (start-up time)
    return lax.cumlogsumexp(x, axis=dim) if x.ndim else x


def _reverse_logcumsumexp(b, v, dim):
    return _flip(b, b.logcumsumexp(_flip(b, v, dim), dim), dim)


def _logcumsumexp_vjp(b, ct, x, out, *, dim):
    # d x_i = sum_{j >= i} ct_j exp(x_i - out_j), as torch computes it: the positive and
    # negative parts of ct in log space (log|ct_j| - out_j), reverse-log-cumsum-exp'ed, so
    # that nothing overflows however large x is
    if not x.shape:
        return [ct]
    w = b.sub(b.log(b.abs(ct)), out)
    neg_inf = float("-inf")
    pos = _reverse_logcumsumexp(b, b.where(b.gt(ct, 0.0), w, neg_inf), dim)
    neg = _reverse_logcumsumexp(b, b.where(b.lt(ct, 0.0), w, neg_inf), dim)
    return [b.sub(b.exp(b.add(x, pos)), b.exp(b.add(x, neg)))]


def _logcumsumexp_jvp(b, t, x, out, *, dim):
    # d out_i = sum_{j <= i} t_j exp(x_j - out_i), the same split by sign in log space
    if not x.shape:
        return t
    w = b.add(x, b.log(b.abs(t)))
    neg_inf = float("-inf")
    pos = b.logcumsumexp(b.where(b.gt(t, 0.0), w, neg_inf), dim)
    neg = b.logcumsumexp(b.where(b.lt(t, 0.0), w, neg_inf), dim)
    return b.sub(b.exp(b.sub(pos, out)), b.exp(b.sub(neg, out)))


defop("logcumsumexp", "input", attrs=(("dim", REQUIRED, K.DIM),),
      canon=lambda types, *, dim: {"dim": norm_dim("logcumsumexp", dim, types[0].ndim)},
      infer=_logcumsumexp_infer, kernel=_logcumsumexp_np, kernels={"jax": _logcumsumexp_jax},
      vjp=_logcumsumexp_vjp, jvp=_logcumsumexp_jvp, flags=CHEAP, cost=SCAN, autocast={"cuda": AUTOCAST_FP32},
      ref="torch.logcumsumexp (real floating dtypes; log(sum_{j<=i} exp(x_j)), stable)")
