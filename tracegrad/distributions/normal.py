"""Normal and Uniform (torch.distributions.Normal / Uniform): continuous distributions
with reparameterized samples (`rsample` keeps the gradient to the parameters).
"""
from __future__ import annotations

import math
import numbers

from .. import _creation, _ops
from .._size import Size
from ..tensor import Tensor
from . import constraints
from .distribution import Distribution, broadcast_all


class Normal(Distribution):
    """N(loc, scale^2), loc and scale broadcast to batch_shape (numbers become tensors of
    the default dtype).  Follows torch.distributions.Normal (log_prob, entropy, cdf, icdf
    with its formulas); `rsample` is loc + scale * randn (tracegrad's random stream).

    Raises:
        RuntimeError: loc and scale that do not broadcast.
        ValueError: with validation, a scale <= 0 or a NaN loc/value (torch's messages).
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.size(), validate_args=validate_args)

    mean = mode = property(lambda self: self.loc)
    stddev = property(lambda self: self.scale)
    variance = property(lambda self: self.scale.pow(2))

    def expand(self, batch_shape, _instance=None) -> "Normal":
        shape = tuple(batch_shape)
        return self._expanded(batch_shape, loc=self.loc.expand(shape),
                              scale=self.scale.expand(shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        eps = _creation.randn(tuple(self._extended_shape(sample_shape)), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        log_scale = (math.log(self.scale) if isinstance(self.scale, numbers.Real)
                     else self.scale.log())
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + _ops.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value) -> Tensor:
        return self.loc + self.scale * _ops.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()


class Uniform(Distribution):
    """Uniform on [low, high), low and high broadcast to batch_shape.  Follows
    torch.distributions.Uniform; `rsample` is low + rand * (high - low).

    Raises:
        ValueError: with validation, low >= high, or log_prob/cdf of a value outside
            [low, high] (torch's messages).
    """

    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(self.low.size(), validate_args=validate_args)

    @property
    def arg_constraints(self) -> dict:
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    mean = property(lambda self: (self.high + self.low) / 2)
    mode = property(lambda self: self.low * math.nan)
    stddev = property(lambda self: (self.high - self.low) / 12 ** 0.5)
    variance = property(lambda self: (self.high - self.low).pow(2) / 12)

    def expand(self, batch_shape, _instance=None) -> "Uniform":
        shape = tuple(batch_shape)
        return self._expanded(batch_shape, low=self.low.expand(shape),
                              high=self.high.expand(shape))

    def rsample(self, sample_shape=Size()) -> Tensor:
        rand = _creation.rand(tuple(self._extended_shape(sample_shape)), dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        lb = (self.low <= value).to(self.low.dtype)
        ub = (self.high > value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
