"""`tg.special`: torch.special's functions that tracegrad has, under torch's names.

Each is the registry op torch.special's function aliases (``gammainc`` is ``igamma``,
``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is ``digamma`` ...), so it
takes ``out=`` and records the same gradient.  The Bessel, Chebyshev and other polynomial
families, ``zeta``, ``multigammaln``, ``ndtr``/``ndtri``/``log_ndtr``, ``entr``, ``i0``/``i1``
and ``erfcx`` are not here yet.
"""
from __future__ import annotations

from . import _ops

digamma = psi = _ops.digamma
erf, erfc, erfinv = _ops.erf, _ops.erfc, _ops.erfinv
exp2, expm1, log1p = _ops.exp2, _ops.expm1, _ops.log1p
expit = _ops.sigmoid
gammainc, gammaincc = _ops.igamma, _ops.igammac
gammaln = _ops.lgamma
logit = _ops.logit
log_softmax, softmax, logsumexp = _ops.log_softmax, _ops.softmax, _ops.logsumexp
round = _ops.round  # noqa: A001  (torch.special.round)
sinc = _ops.sinc
xlogy = _ops.xlogy

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc",
           "gammaincc", "gammaln", "log1p", "log_softmax", "logit", "logsumexp", "psi", "round",
           "sinc", "softmax", "xlogy"]
