"""torch's refusal of an integer tensor to a negative Python int power, on every spelling of
pow: ``x ** -1``, ``x.pow(-1)``, ``x.pow_(-1)`` (through ``pow``) and ``tg.pow(x, -1)``
(tracegrad/_ops.py wraps it).  Installed on `Tensor` when imported, before the registry's
methods are added (which skip a method the class has).
"""
from __future__ import annotations

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import with_location
from tracegrad.ir.scalars import check_scalar

from . import _state
from .tensor import Tensor, _call_kw


def check_int_pow(base, exponent) -> None:
    """torch 2.13 refuses an integer or bool tensor to a negative Python int power:
    RuntimeError "Integers to negative integer powers are not allowed." (an exponent
    *tensor* with negative entries follows integer semantics instead: the pow kernel)."""
    if (isinstance(exponent, (int, np.integer)) and not isinstance(exponent, (bool, np.bool_))
            and exponent < 0 and isinstance(base, Tensor)
            and not (base.dtype.is_floating_point or base.dtype.is_complex)):
        raise with_location(RuntimeError(
            f"pow: Integers to negative integer powers are not allowed. (base {base._type}, "
            f"exponent {int(exponent)})"), _state.user_location())
    if (isinstance(exponent, (int, np.integer)) and isinstance(base, Tensor)
            and base.dtype.category == T.INT):   # a Scalar argument: torch's overflow check
        try:
            check_scalar("pow", int(exponent), base.dtype)
        except (RuntimeError, OverflowError) as e:
            raise with_location(e, _state.user_location()) from None


def _int_pow_checked(method):
    def pow(self, exponent, *args, **kwargs):
        if type(exponent) is not float:   # the common case, a float power, checks nothing
            check_int_pow(self, exponent)
        return method(self, exponent, *args, **kwargs)
    pow.__name__, pow.__qualname__ = method.__name__, method.__qualname__
    pow.__doc__ = method.__doc__
    return pow


def _pow_method(self, exponent):
    """torch.Tensor.pow: `self` ** `exponent` (a tensor or a number), broadcast, promoted.

    Raises:
        RuntimeError: an integer tensor to a negative Python int power (`check_int_pow`).
    """
    return _call_kw("pow", self, exponent)


Tensor.__pow__ = _int_pow_checked(Tensor.__pow__)
_pow_method.__name__ = "pow"
Tensor.pow = _int_pow_checked(_pow_method)   # before `_add_registry_methods`, which skips it
