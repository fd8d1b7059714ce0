"""`Distribution`, the base of tracegrad.distributions (torch.distributions.Distribution's
interface: batch/event shapes, sample/rsample, log_prob, entropy, argument validation).

Validation (on by default, as torch under `python` without -O) checks parameters at
construction and values given to `log_prob`, with torch's ValueError messages.  It needs
values, so it runs eagerly only: inside `tg.compile` the traced tensors are not checked.
"""
from __future__ import annotations

import numbers

from .. import _creation, _state
from .._config import get_default_dtype
from ..autograd import no_grad
from .._indexing import _is_traced
from .._size import Size
from .._type_info import broadcast_tensors
from ..tensor import Tensor


class lazy_property:  # noqa: N801  (torch.distributions.utils.lazy_property)
    """A parameter computed from another on first use (probs from logits ...), then kept."""

    def __init__(self, fn):
        self.fn, self.__doc__ = fn, fn.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.fn(instance)
        instance.__dict__[self.fn.__name__] = value
        return value


def broadcast_all(*values) -> tuple:
    """Tensors and numbers as tensors of one broadcast shape (numbers take the tensors'
    dtype, or the default dtype), torch.distributions.utils.broadcast_all."""
    like = next((v for v in values if isinstance(v, Tensor)), None)
    dtype = like.dtype if like is not None else get_default_dtype()
    tensors = []
    for v in values:
        if isinstance(v, Tensor):
            tensors.append(v)
        elif isinstance(v, numbers.Number):
            tensors.append(_creation.tensor(v, dtype=dtype))
        else:
            raise ValueError("Input arguments must all be instances of numbers.Number, "
                             f"torch.Tensor or objects implementing __torch_function__, "
                             f"got {type(v).__name__}")
    return broadcast_tensors(*tensors)


def _all_true(t: Tensor) -> bool:
    return _is_traced(t) or bool(t.all().item())


class Distribution:
    """A batch of probability distributions of shape `batch_shape`, each over values of
    shape `event_shape`.  Subclasses set `arg_constraints` and `support`."""

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    _validate_args = __debug__

    def __init_subclass__(cls, **kwargs):
        """Errors from a distribution's public methods start with the name the user called
        (``Normal: ...``, ``Categorical.log_prob: ...``) and end with the user's line."""
        super().__init_subclass__(**kwargs)
        for method in ("__init__", "log_prob", "cdf", "icdf", "sample", "rsample", "expand"):
            if method in cls.__dict__:
                name = cls.__name__ if method == "__init__" else f"{cls.__name__}.{method}"
                setattr(cls, method, _state.located(cls.__dict__[method], name=name))

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn validation on or off for distributions built afterwards."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape, self._event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for param, constraint in self.arg_constraints.items():
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None),
                                                             lazy_property):
                    continue    # computed from the parameter that was given
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    batch_shape = property(lambda self: self._batch_shape)
    event_shape = property(lambda self: self._event_shape)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        return Size(tuple(Size(sample_shape)) + self._batch_shape + self._event_shape)

    def sample(self, sample_shape=Size()) -> Tensor:
        """A sample without gradient (from `rsample` where the distribution has one)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sample "
                                  "(rsample); use sample()")

    def sample_n(self, n: int) -> Tensor:
        return self.sample(Size((n,)))

    def _validate_sample(self, value) -> None:
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = value.ndim - len(self._event_shape)
        if tuple(value.shape[start:]) != tuple(self._event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        if not _all_true(self.support.check(value)):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support "
                             f"({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def _expanded(self, batch_shape, **params) -> "Distribution":
        """A copy of this distribution over `batch_shape`, with the expanded `params`."""
        new = type(self).__new__(type(self))
        new.__dict__.update(params)
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        shown = {p: self.__dict__[p] for p in self.arg_constraints if p in self.__dict__}
        args = ", ".join(f"{p}: {v.item() if v.numel() == 1 else v.size()}"
                         for p, v in shown.items())
        return f"{type(self).__name__}({args})"
