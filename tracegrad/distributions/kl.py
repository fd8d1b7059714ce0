"""kl_divergence(p, q) and register_kl (torch.distributions.kl): KL(p || q) per batch
element, looked up by the pair of distribution types (most specific registered pair)."""
from __future__ import annotations

import math

from .. import _ops
from ..tensor import Tensor
from .categorical import Bernoulli, Categorical
from .normal import Normal, Uniform

_KL: dict = {}


def register_kl(type_p, type_q):
    """Decorator: `fn(p, q)` computes KL(p || q) for p of `type_p`, q of `type_q`."""
    def decorator(fn):
        _KL[type_p, type_q] = fn
        return fn
    return decorator


def kl_divergence(p, q) -> Tensor:
    """KL(p || q), shape batch_shape (torch.distributions.kl_divergence).

    Raises:
        NotImplementedError: no rule registered for the pair (torch's message).
    """
    for tp in type(p).__mro__:
        for tq in type(q).__mro__:
            if (tp, tq) in _KL:
                return _KL[tp, tq](p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                              f"{type(p).__name__} and q type {type(q).__name__}")


@register_kl(Categorical, Categorical)
def _kl_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t = t.masked_fill((q.probs == 0).expand_as(t), math.inf)
    return t.masked_fill((p.probs == 0).expand_as(t), 0.0).sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli(p, q):
    t1 = p.probs * (_ops.softplus(-q.logits) - _ops.softplus(-p.logits))
    t1 = t1.masked_fill(q.probs == 0, math.inf).masked_fill(p.probs == 0, 0.0)
    t2 = (1 - p.probs) * (_ops.softplus(q.logits) - _ops.softplus(p.logits))
    t2 = t2.masked_fill(q.probs == 1, math.inf).masked_fill(p.probs == 1, 0.0)
    return t1 + t2


@register_kl(Normal, Normal)
def _kl_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill((q.low > p.low) | (q.high < p.high), math.inf)
