"""Tensor methods torch 2.13 has that the probe found missing: ``_is_view``, ``is_conj`` /
``resolve_conj`` (and ``is_neg`` / ``resolve_neg``), ``resize_``, the varargs form of
``sum_to_size``, the size queries (``element_size``, ``nbytes`` ...), ``positive``,
``reshape_as`` and the linalg aliases; and the NotBuiltError of every other torch Tensor
method tracegrad lacks (`install_not_built`).  The dtype shorthands (``byte``, ``cfloat``
...) sit with ``float`` / ``long`` in _tensor_methods.py.

tracegrad has no lazy conjugation or negation (``x.conj()`` of a complex tensor computes the
conjugate), so the conj/neg bits are always False and resolving returns the tensor itself.
"""
from __future__ import annotations

import math

import numpy as np

from tracegrad.ir.errors import with_location
from tracegrad.ir.graph import Value

from . import _state, _views
from .tensor import Tensor, _call_kw, attach


def _sizes(name: str, sizes: tuple) -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(tg.Size(...))`` as a tuple of ints."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for s in sizes:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, but found "
                            f"element of type {type(s).__name__}")
    return tuple(int(s) for s in sizes)


@attach
class _MiscMethods:
    def _is_view(self) -> bool:
        """True when this tensor is a view of another's storage (torch.Tensor._is_view):
        slices, ``view``/``reshape`` views, transposes, ``expand`` ...; False for a tensor
        that owns its storage and for ``detach()`` / ``.data`` (they share the storage but
        are not views in torch either).  One difference: a ``reshape`` that has to copy
        (torch's ``_unsafe_view`` of a clone, not a view) reads True here, since its value
        is a view of that internal copy."""
        return self._base is not None and any(op != "alias" for op, _ in self._view_ops)

    def is_conj(self) -> bool:
        """False: tracegrad has no lazy conjugation (torch.Tensor.is_conj).  ``x.conj()`` of
        a complex tensor computes the conjugate at once, so no tensor carries a conj bit."""
        return False

    def resolve_conj(self) -> "Tensor":
        """This tensor itself (torch.Tensor.resolve_conj): with no lazy conjugation there is
        nothing to materialize (`is_conj` is always False)."""
        return self

    def is_neg(self) -> bool:
        """False: tracegrad has no lazy negation bit (torch.Tensor.is_neg)."""
        return False

    def resolve_neg(self) -> "Tensor":
        """This tensor itself (torch.Tensor.resolve_neg; `is_neg` is always False)."""
        return self

    def sum_to_size(self, *size) -> "Tensor":
        """This tensor summed down to `size` (torch.Tensor.sum_to_size): ``sum_to_size(1, 3)``
        or ``sum_to_size((1, 3))``; `size` must be expandable to this tensor's shape.

        Raises:
            RuntimeError: `size` is not expandable to the shape (torch 2.13's text).
        """
        return _call_kw("sum_to_size", self, _sizes("sum_to_size", size))

    def resize_(self, *sizes, memory_format=None) -> "Tensor":
        """Give this tensor the shape `sizes` in place (torch.Tensor.resize_): its elements in
        row-major order are kept up to the new count, and new elements are zeros (torch
        leaves them uninitialized, which after a shrink often still holds the old values;
        here a shrink drops them).  The version counter advances, as for any in-place op.

        Only a tensor that owns its storage can be resized: values here are immutable
        arrays and a view's shape is a function of its base's, so a view, or a tensor with
        live views, is refused.  Use ``x = x.reshape(...)`` (same count),
        ``x = x.clone().resize_(...)`` or a new ``tg.zeros(...)`` instead.

        Raises:
            RuntimeError: the tensor requires grad (torch 2.13: "cannot resize variables
                that require grad"); a negative size (torch's "numel: integer
                multiplication overflow").
            NotImplementedError: a view, a tensor with live views, or inside `tg.compile`.
        """
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        new = _sizes("resize_", sizes)
        if any(s < 0 for s in new):
            raise RuntimeError("numel: integer multiplication overflow")
        if isinstance(self._data, Value):
            raise NotImplementedError("resize_: not supported inside tg.compile (traced "
                                      "tensors have static shapes); resize outside the "
                                      "compiled function or build a new tensor")
        if new == tuple(self.shape):
            return self
        if self._base is not None or _views.live_views(self):
            what = "a view of another tensor" if self._base is not None else \
                "a tensor with live views"
            raise with_location(NotImplementedError(
                f"resize_: tracegrad resizes only a tensor that owns its storage, not {what} "
                f"(shape {tuple(self.shape)} -> {new}): values are immutable arrays and a "
                "view's shape follows its base's.  Use x = x.reshape(...) for the same number "
                "of elements, x = x.clone().resize_(...), or a new tg.zeros(...)"),
                _state.user_location())
        flat = np.ascontiguousarray(self._data).reshape(-1)
        n = math.prod(new)
        if n <= flat.size:
            data = flat[:n].copy()
        else:
            data = np.concatenate([flat, np.zeros(n - flat.size, flat.dtype)])
        self._data = data.reshape(new)
        self._vc[0] += 1
        return self


# ---- sizes and small linear-algebra aliases torch's Tensor has ------------------------------
@attach
class _SizeMethods:
    def element_size(self) -> int:
        """Bytes per element (torch.Tensor.element_size): 4 for float32, 1 for bool."""
        return self.dtype.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element (torch.Tensor.itemsize)."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """numel * itemsize (torch.Tensor.nbytes)."""
        return self.numel() * self.dtype.itemsize

    def ndimension(self) -> int:
        """The number of dims (torch.Tensor.ndimension, an alias of ``dim()``)."""
        return self.dim()

    def is_signed(self) -> bool:
        """True for signed dtypes: the floats, complex and int8/16/32/64 (torch.Tensor.
        is_signed); False for uint8 and bool."""
        return self.dtype.name not in ("uint8", "bool")

    def positive(self) -> "Tensor":
        """`self` itself (torch.positive / unary ``+``).

        Raises:
            RuntimeError: a bool tensor (torch 2.13's message).
        """
        if self.dtype.name == "bool":
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def reshape_as(self, other) -> "Tensor":
        """``self.reshape(other.shape)`` (torch.Tensor.reshape_as)."""
        return self.reshape(other.shape)

    def inverse(self) -> "Tensor":
        """torch.Tensor.inverse: ``tg.linalg.inv(self)``."""
        from . import linalg   # noqa: PLC0415 (linalg imports the op surface)
        return linalg.inv(self)

    def det(self) -> "Tensor":
        """torch.Tensor.det: ``tg.linalg.det(self)``."""
        from . import linalg   # noqa: PLC0415
        return linalg.det(self)

    def slogdet(self):
        """torch.Tensor.slogdet: ``tg.linalg.slogdet(self)`` (sign, logabsdet)."""
        from . import linalg   # noqa: PLC0415
        return linalg.slogdet(self)


# ---- torch's Tensor methods tracegrad does not build ---------------------------------------
class _NotBuiltMethod:
    """A class attribute for a torch.Tensor method tracegrad lacks: reading it (on the class
    or a tensor) raises NotBuiltError, which says so and what to use instead and is an
    AttributeError too, so ``hasattr`` reads False, as for a name that does not exist."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, cls=None):
        import tracegrad   # noqa: PLC0415 (the package imports this module)
        from ._torch_names import hint   # noqa: PLC0415 (it imports nn)
        from .nn._not_built import NotBuiltError   # noqa: PLC0415
        instead = (f"tg.{self.name}(x, ...)" if callable(vars(tracegrad).get(self.name))
                   else hint(self.name, frozenset(vars(tracegrad))))
        raise NotBuiltError(f"Tensor.{self.name} is not built in tracegrad: {instead}. "
                            "docs/porting.md lists what exists")


def install_not_built() -> None:
    """Give each torch 2.13 Tensor method tracegrad lacks its NotBuiltError (called last in
    tracegrad/__init__.py, once every method is attached)."""
    from ._torch_names import TORCH_TENSOR_NAMES   # noqa: PLC0415
    for name in TORCH_TENSOR_NAMES:
        if name not in dir(Tensor):
            setattr(Tensor, name, _NotBuiltMethod(name))
