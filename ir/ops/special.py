"""Special functions (erf, gamma family, incomplete gamma, logit) and gelu, which needs erf.

NumPy has no erf or gamma functions, so the NumPy kernel of each op calls
`scipy.special` and the jax kernel `jax.scipy.special` (both imported on
first use). Half-precision inputs are computed in float32 on NumPy, which
SciPy has no loops for, and rounded back.
"""
from __future__ import annotations

import math

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..errors import DTypeError
from ..registry import (AUTOCAST_FP32, CHEAP, ELEMENTWISE, INTERNAL, PROMOTE, TO_FLOAT,
                        NotImplementedGrad, defop)
from ._common import broadcast_infer, fmt_types, same_as_first
from . import _xla_handoff as handoff
from .unary import float_only, scalar

EW = ELEMENTWISE | CHEAP
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _scipy(name):
    """NumPy kernel calling scipy.special.<name>(*leading_args, x) in x's dtype."""
    def kernel(xp, x, *args):
        import scipy.special
        fn = getattr(scipy.special, name)
        wide = x.astype(np.float32) if x.dtype.itemsize < 4 else x
        return np.asarray(fn(*args, wide)).astype(x.dtype, copy=False)
    return kernel


def _jax(name):
    def kernel(xp, x, *args):
        import jax.scipy.special  # jax loads on first use (start-up time)
        return getattr(jax.scipy.special, name)(*args, x)
    return kernel


def _special(name, fn, vjp, **kw):
    return defop(name, "input", infer=same_as_first, flags=EW | TO_FLOAT, ref=f"torch.{name}",
                 kernel=_scipy(fn), kernels={"jax": _jax(fn)}, vjp=vjp, **kw)


def _gauss(b, x):
    """2/sqrt(pi) * exp(-x^2), the derivative of erf."""
    return b.mul(b.exp(b.neg(b.mul(x, x))), TWO_OVER_SQRT_PI)


_special("erf", "erf", lambda b, ct, x, out: [b.mul(ct, _gauss(b, x))])
_special("erfc", "erfc", lambda b, ct, x, out: [b.neg(b.mul(ct, _gauss(b, x)))])
# sqrt(pi)/2 * exp(erfinv(x)^2): inf at |x| == 1, as torch
_special("erfinv", "erfinv",
         lambda b, ct, x, out: [b.mul(ct, b.div(b.exp(b.mul(out, out)), TWO_OVER_SQRT_PI))],
         autocast={"cuda": AUTOCAST_FP32})
# log|gamma(x)|; gradient digamma(x) (-inf at 0, as torch)
_special("lgamma", "gammaln", lambda b, ct, x, out: [b.mul(ct, b.digamma(x))])


def _digamma_jax(xp, x):
    import jax.scipy.special  # jax loads on first use (start-up time)
    # torch (and SciPy): digamma(+-0) = -+inf; jax gives NaN there
    return xp.where(x == 0, -xp.copysign(scalar(x, math.inf), x), jax.scipy.special.digamma(x))


defop("digamma", "input", infer=same_as_first, flags=EW | TO_FLOAT, ref="torch.digamma",
      kernel=_scipy("psi"), kernels={"jax": _digamma_jax},
      vjp=lambda b, ct, x, out: [b.mul(ct, b.polygamma(x, 1))])


_POLYGAMMA_NP, _POLYGAMMA_JAX = _scipy("polygamma"), _jax("polygamma")


def _polygamma_canon(types, *, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"polygamma: n must be an int >= 1 here (n = 0 is digamma), got {n!r}")
    return {"n": n}


# The n-th derivative of digamma: only reached through digamma's VJP, so IR-only for now
# (torch.polygamma(n, input) puts n first, which the registry's input-first binding cannot).
defop("polygamma", "input", attrs=(("n", 1, K.SIZE),), canon=_polygamma_canon, infer=same_as_first,
      flags=EW | TO_FLOAT | INTERNAL, ref="torch.polygamma",
      kernel=lambda xp, x, *, n: _POLYGAMMA_NP(xp, x, n),
      kernels={"jax": lambda xp, x, *, n: _POLYGAMMA_JAX(xp, x, n)},
      vjp=lambda b, ct, x, out, *, n: [b.mul(ct, b.polygamma(x, n + 1))])


# ---- igamma / igammac: the regularized incomplete gamma functions ------------------------------
_TORCH_NAMES = {T.int64: "Long", T.int32: "Int", T.int16: "Short", T.int8: "Char",
                T.uint8: "Byte", T.bool_: "Bool"}


def _igamma_infer(name):
    infer = broadcast_infer(name)

    def checked(types, **attrs):
        out = infer(types, **attrs)
        if not out.dtype.is_floating_point:   # torch: NotImplementedError '"igamma_cpu" ...'
            raise DTypeError(f'{name}: "{name}_cpu" not implemented for '
                             f"'{_TORCH_NAMES.get(out.dtype, out.dtype.name)}' (floating-point "
                             f"tensors only), got {fmt_types(types)}")
        return out
    return checked


def _igamma_np(fn):
    def kernel(xp, a, x):
        import scipy.special
        wide = np.float32 if a.dtype.itemsize < 4 else a.dtype
        return np.asarray(getattr(scipy.special, fn)(a.astype(wide), x.astype(wide))).astype(
            a.dtype, copy=False)
    return kernel


def _igamma_jax(fn, at_inf):
    def kernel(xp, a, x):
        import jax.scipy.special  # jax loads on first use (start-up time)
        out = getattr(jax.scipy.special, fn)(a, x)
        # torch (and SciPy): a = +inf gives P = 0, Q = 1 for a finite x >= 0 and NaN for
        # x = +inf; jax gives NaN, and 1 / 0 there
        inf = scalar(a, math.inf)
        out = xp.where((a == inf) & (x >= 0) & (x < inf), scalar(a, at_inf), out)
        return xp.where((a == inf) & (x == inf), scalar(a, math.nan), out)
    return kernel


def _igamma_vjp(sign):
    def vjp(b, ct, a, x, out):
        # torch's formula for d/dx: exp((a - 1) log x - x - lgamma(a)) (its NaN and inf at the
        # corners included); none for a: "the derivative for 'igamma: input' is not implemented."
        d = b.exp(b.sub(b.sub(b.mul(b.sub(a, 1.0), b.log(x)), x), b.lgamma(a)))
        g = b.mul(ct, d)
        return [NotImplementedGrad(f"{'igamma' if sign > 0 else 'igammac'}: input"),
                g if sign > 0 else b.neg(g)]
    return vjp


for _name, _fn, _sign, _at_inf in (("igamma", "gammainc", 1, 0.0), ("igammac", "gammaincc", -1, 1.0)):
    defop(_name, "input, other", infer=_igamma_infer(_name), flags=EW | PROMOTE,
          ref=f"torch.{_name} (torch.special.{_fn}): the regularized "
              f"{'lower' if _sign > 0 else 'upper'} incomplete gamma function",
          kernel=_igamma_np(_fn), kernels={"jax": _igamma_jax(_fn, _at_inf)},
          vjp=_igamma_vjp(_sign))


# ---- logit --------------------------------------------------------------------------------------
def _logit_canon(types, *, eps):
    return {"eps": None if eps is None else float(eps)}


def _logit_kernel(xp, x, *, eps):
    if eps is not None:
        x = xp.minimum(xp.maximum(x, scalar(x, eps)), scalar(x, 1.0 - eps))
    return xp.log(x / (scalar(x, 1.0) - x))


def _logit_vjp(b, ct, x, out, *, eps):
    # torch: 1 / (x (1 - x)) inside [eps, 1 - eps] (closed), outside it 0 with eps, NaN without
    lo, hi, fill = (0.0, 1.0, math.nan) if eps is None else (eps, 1.0 - eps, 0.0)
    outside = b.logical_or(b.lt(x, lo), b.gt(x, hi))
    return [b.where(outside, fill, b.div(ct, b.mul(x, b.rsub(x, 1.0))))]


defop("logit", "input", attrs=(("eps", None, K.FLOAT_OPT),), canon=_logit_canon, infer=same_as_first,
      flags=EW | TO_FLOAT, ref="torch.logit", kernel=_logit_kernel, vjp=_logit_vjp)


# ---- gelu ---------------------------------------------------------------------------------------
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715


def _gelu_canon(types, *, approximate):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate argument must be either 'none' or 'tanh', got "
                         f"{approximate!r}")
    return {"approximate": approximate}


# GELU on NumPy from this many float32/float64 elements runs as the jax kernel on XLA
# (`_xla_handoff`): exact GELU's scipy erf and the four passes around it took 24.5 ms per
# 1M float32 against 4.7 fused, the tanh form's seven passes 5 ms per call on the benchmark
# transformer (a transformer's MLP activation; the values are the compiled step's, within
# 5e-7 of NumPy's).
XLA_MIN_GELU = 1 << 14


def _gelu_kernel(erf):
    def kernel(xp, x, *, approximate):
        if (xp is np and x.size >= XLA_MIN_GELU and x.dtype in handoff.FLOATS
                and handoff.usable()):
            return handoff.run(_gelu_jax, (x,), {"approximate": approximate})
        c = lambda v: scalar(x, v)  # noqa: E731
        if approximate == "tanh":
            inner = c(SQRT_2_OVER_PI) * (x + c(GELU_C) * x * x * x)
            return c(0.5) * x * (c(1.0) + xp.tanh(inner))
        return c(0.5) * x * (c(1.0) + erf(xp, x * c(1.0 / math.sqrt(2.0))))
    return kernel


_gelu_jax = _gelu_kernel(_jax("erf"))


def _gelu_vjp(b, ct, x, out, *, approximate):
    if approximate == "tanh":
        x2 = b.mul(x, x)
        t = b.tanh(b.mul(b.add(x, b.mul(b.mul(x2, x), GELU_C)), SQRT_2_OVER_PI))
        dinner = b.mul(b.add(b.mul(x2, 3.0 * GELU_C), 1.0), SQRT_2_OVER_PI)
        d = b.add(b.mul(b.add(t, 1.0), 0.5),
                  b.mul(b.mul(b.mul(x, 0.5), b.rsub(b.mul(t, t), 1.0)), dinner))
        return [b.mul(ct, d)]
    # Phi(x) + x * phi(x)
    cdf = b.mul(b.add(b.erf(b.mul(x, 1.0 / math.sqrt(2.0))), 1.0), 0.5)
    pdf = b.mul(b.exp(b.mul(b.mul(x, x), -0.5)), 1.0 / math.sqrt(2.0 * math.pi))
    return [b.mul(ct, b.add(cdf, b.mul(x, pdf)))]


defop("gelu", "input", attrs=(("approximate", "none", K.enum("none", "tanh")),), canon=_gelu_canon,
      infer=float_only("gelu"), flags=EW, ref="torch.nn.functional.gelu",
      kernel=_gelu_kernel(_scipy("erf")), kernels={"jax": _gelu_jax},
      vjp=_gelu_vjp)
