"""torch's backward-node names that depend on the call's overload, not the op (torch 2.13).

The registry gives each op one node name (`OpDef.node_name`); torch names some nodes by the
overload the call resolved to, which only the caller knows.  These wrappers call the
registry op and rename the result's node with `_view_names.rename`, the one mechanism by
which a call renames its node (squeeze's overloads and indexing use it too):

- ``x ** y`` / ``x.pow(y)`` / ``tg.pow(x, y)`` with a tensor exponent: ``PowBackward1``;
  a Python-number base (``2 ** x``, ``tg.pow(2, x)``): ``PowBackward2``; a number
  exponent keeps pow's ``PowBackward0``;
- ``1 - x`` (a number minus a tensor): ``RsubBackward1``;
- ``x.max()`` / ``x.min()`` (no dim): ``MaxBackward1`` / ``MinBackward1``;
  ``tg.max(a, b)``: ``MaximumBackward0`` / ``MinimumBackward0``; with a dim the registry's
  ``MaxBackward0`` / ``MinBackward0``;
- ``sum`` / ``mean`` / ``prod`` with a ``dim``: ``SumBackward1`` / ``MeanBackward1`` /
  ``ProdBackward1`` (without one the ``...Backward0`` of the declaration).

In-place forms (``x.pow_(t)``) keep the registry's name.
"""
from __future__ import annotations

from . import _ops, _view_names
from .tensor import Tensor, _call_kw, attach

_PLAIN = (int, float, bool, complex)


def _tensors(*xs) -> tuple:
    return tuple(x for x in xs if isinstance(x, Tensor))


def _pow_name(base, exponent):
    if not isinstance(base, Tensor):
        return "PowBackward2"
    return "PowBackward1" if isinstance(exponent, Tensor) else None


def _named(out, name, *operands):
    return out if name is None else _view_names.rename(out, name, *_tensors(*operands))


def pow(input, exponent):  # noqa: A001,A002
    """torch.pow: `input` ** `exponent` (either may be a Python number), broadcast and
    promoted; the node is torch's overload's (PowBackward0 / 1 / 2).

    Raises:
        RuntimeError: an integer tensor to a negative Python int power (torch's message).
    """
    return _named(_ops.pow(input, exponent), _pow_name(input, exponent), input, exponent)


def _dim_given(args: tuple, kwargs: dict) -> bool:
    dim = args[0] if args else kwargs.get("dim")
    return dim is not None


def _reduction(op: str, with_dim: str):
    generated = getattr(_ops, op)

    def fn(input, *args, **kwargs):  # noqa: A002
        res = generated(input, *args, **kwargs)
        return _named(res, with_dim if _dim_given(args, kwargs) else None, input)

    def method(self, *args, **kwargs):
        res = _call_kw(op, self, *args, **kwargs)
        return _named(res, with_dim if _dim_given(args, kwargs) else None, self)
    fn.__name__ = fn.__qualname__ = method.__name__ = op
    fn.__doc__ = (f"{generated.__doc__}\n\nThe backward node is ``{with_dim}`` with a ``dim`` "
                  "(torch 2.13's overload name).")
    return fn, method


def _extreme(op: str, full: str, binary: str):
    generated = getattr(_ops, op)
    names = {f"{op}_all": full, binary: f"{binary.capitalize()}Backward0"}

    def name_of(res):
        node = getattr(res, "grad_fn", None) if isinstance(res, Tensor) else None
        prim = getattr(node, "op", None)
        return names.get(getattr(prim, "name", None))

    def fn(input, *args, **kwargs):  # noqa: A002
        res = generated(input, *args, **kwargs)
        return _named(res, name_of(res), input, *args, *kwargs.values())

    def method(self, *args, **kwargs):
        res = _call_kw(op, self, *args, **kwargs)
        return _named(res, name_of(res), self, *args, *kwargs.values())
    fn.__name__ = fn.__qualname__ = method.__name__ = op
    fn.__doc__ = (f"{generated.__doc__}\n\nThe backward node is torch 2.13's overload's: "
                  f"``{full}`` without a dim, ``{binary.capitalize()}Backward0`` of two tensors.")
    return fn, method


sum, _sum_method = _reduction("sum", "SumBackward1")  # noqa: A001
mean, _mean_method = _reduction("mean", "MeanBackward1")
prod, _prod_method = _reduction("prod", "ProdBackward1")
max, _max_method = _extreme("max", "MaxBackward1", "maximum")  # noqa: A001
min, _min_method = _extreme("min", "MinBackward1", "minimum")  # noqa: A001

_tensor_pow, _tensor_rpow, _tensor_method_pow = Tensor.__pow__, Tensor.__rpow__, Tensor.pow
_tensor_rsub = Tensor.__rsub__


def _tensor_power(wrapped):
    """`wrapped` (``Tensor.__pow__`` or ``Tensor.pow``) naming its node PowBackward1 for a
    tensor exponent, as torch 2.13."""
    def method(self, exponent):
        res = wrapped(self, exponent)
        return _named(res, "PowBackward1", self, exponent) if isinstance(exponent, Tensor) \
            else res
    method.__name__ = wrapped.__name__
    method.__doc__ = ((wrapped.__doc__ or "").rstrip() + "\n\nThe backward node is "
                      "PowBackward1 for a tensor exponent (torch 2.13's overload name).")
    return method


@attach
class _OverloadNamedMethods:
    __pow__ = _tensor_power(_tensor_pow)
    pow = _tensor_power(_tensor_method_pow)

    def __rpow__(self, base):
        res = _tensor_rpow(self, base)
        return _named(res, "PowBackward2", self) if type(base) in _PLAIN else res

    def __rsub__(self, other):
        res = _tensor_rsub(self, other)
        return _named(res, "RsubBackward1", self) if type(other) in _PLAIN else res

    sum = _sum_method
    mean = _mean_method
    prod = _prod_method
    max = _max_method
    min = _min_method


__all__ = ["max", "mean", "min", "pow", "prod", "sum"]
