"""Categorical and Bernoulli (torch.distributions.Categorical / Bernoulli): discrete
distributions given by probabilities or logits, the policies of REINFORCE and actor-critic.
"""
from __future__ import annotations

import math

from .. import _creation, _ops
from .._random import bernoulli, multinomial
from .._size import Size
from .._type_info import broadcast_tensors, finfo
from ..autograd import no_grad
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all, lazy_property


def _one_given(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")


def clamp_probs(probs: Tensor) -> Tensor:
    """`probs` kept eps away from 0 and 1 (eps of its dtype), so their logs are finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


class Categorical(Distribution):
    """Categories 0..K-1 with probabilities `probs` (..., K) (normalized to sum to 1 over
    the last dimension) or `logits` (..., K) (log-probabilities up to a constant);
    batch_shape is the leading dimensions.  Follows torch.distributions.Categorical.

    `sample` returns int64 indices (tg.multinomial with replacement: tracegrad's random
    stream, not torch's numbers).  `log_prob(value)` gathers the normalized logits.

    Raises:
        ValueError: both or neither of probs/logits; a 0-d parameter; with validation,
            probs that are not a simplex after normalization (negative or NaN) or values
            outside 0..K-1 given to log_prob (torch's messages).
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_given(probs, logits)
        param = probs if probs is not None else logits
        if param.ndim < 1:
            which = "probs" if probs is not None else "logits"
            raise ValueError(f"`{which}` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndim > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        return clamp_probs(self.probs).log()

    @lazy_property
    def probs(self) -> Tensor:
        return _ops.softmax(self.logits, -1)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return _creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    variance = mean

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    def expand(self, batch_shape, _instance=None) -> "Categorical":
        shape = tuple(Size(batch_shape)) + (self._num_events,)
        name = "probs" if "probs" in self.__dict__ else "logits"
        new = self._expanded(batch_shape, **{name: self.__dict__[name].expand(shape)})
        new._param, new._num_events = new.__dict__[name], self._num_events
        return new

    def sample(self, sample_shape=Size()) -> Tensor:
        sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = multinomial(probs_2d, max(sample_shape.numel(), 1), True).T
            if sample_shape.numel() == 0:
                samples_2d = samples_2d[:0]
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(self._num_events, dtype=self._param.dtype).long()
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class Bernoulli(Distribution):
    """0/1 outcomes with probability `probs` of a 1, or given by `logits` (log-odds), any
    shape (= batch_shape; numbers become 0-d tensors).  Follows
    torch.distributions.Bernoulli: `log_prob` is minus binary cross-entropy with logits.

    Raises:
        ValueError: both or neither of probs/logits; with validation, probs outside [0, 1]
            or values other than 0/1 given to log_prob (torch's messages).
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        _one_given(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    @lazy_property
    def logits(self) -> Tensor:
        p = clamp_probs(self.probs)
        return p.log() - (-p).log1p()

    @lazy_property
    def probs(self) -> Tensor:
        return _ops.sigmoid(self.logits)

    param_shape = property(lambda self: self._param.size())
    mean = property(lambda self: self.probs)
    variance = property(lambda self: self.probs * (1 - self.probs))

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return mode.masked_fill(self.probs == 0.5, math.nan)

    def expand(self, batch_shape, _instance=None) -> "Bernoulli":
        name = "probs" if "probs" in self.__dict__ else "logits"
        new = self._expanded(batch_shape, **{name: self.__dict__[name].expand(tuple(batch_shape))})
        new._param = new.__dict__[name]
        return new

    def sample(self, sample_shape=Size()) -> Tensor:
        with no_grad():
            return bernoulli(self.probs.expand(tuple(self._extended_shape(sample_shape))))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -_ops.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return _ops.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                     reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = _creation.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
