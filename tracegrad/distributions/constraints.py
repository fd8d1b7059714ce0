"""The constraints a distribution's parameters and samples are checked against
(torch.distributions.constraints' names and reprs, which appear in its error messages).

`check(value)` returns a bool tensor, True where `value` satisfies the constraint.
"""
from __future__ import annotations

from ..tensor import Tensor


def _bound(b) -> str:
    return repr(b.item() if isinstance(b, Tensor) and b.numel() == 1 else b)


class Constraint:
    """A region of valid values; `is_discrete` and `event_dim` as torch's."""

    is_discrete = False
    event_dim = 0

    def check(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__.lstrip('_')}()"


class _Real(Constraint):
    def check(self, value):
        return value == value   # not NaN


class _IndependentReal(_Real):
    """Real vectors: one verdict per event (the last dimension)."""

    event_dim = 1

    def check(self, value):
        return (value == value).all(-1)

    def __repr__(self) -> str:
        return "IndependentConstraint(Real(), 1)"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    """Non-negative vectors summing to 1 (within 1e-6, as torch)."""

    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return self.lower_bound < value

    def __repr__(self) -> str:
        return f"GreaterThan(lower_bound={_bound(self.lower_bound)})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self) -> str:
        return f"LessThan(upper_bound={_bound(self.upper_bound)})"


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self) -> str:
        return (f"{type(self).__name__.lstrip('_')}(lower_bound={_bound(self.lower_bound)}, "
                f"upper_bound={_bound(self.upper_bound)})")


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)


real = _Real()
real_vector = _IndependentReal()
boolean = _Boolean()
simplex = _Simplex()
positive = _GreaterThan(0.0)
unit_interval = _Interval(0.0, 1.0)
greater_than, less_than, interval, integer_interval = (_GreaterThan, _LessThan, _Interval,
                                                       _IntegerInterval)
