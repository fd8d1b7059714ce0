"""``tg.as_strided`` / ``Tensor.as_strided``: a view of the input's storage (torch.as_strided).

torch's as_strided reads the *storage* of its input, which for a view is its base's: ``v =
x[1]; v.as_strided((2,), (1,))`` starts at v's storage offset 4 and may read elements of `x`
outside `v`.  Here a base tensor's storage is its row-major value (op results count as
contiguous, as in `Tensor.is_contiguous`), so:

- on a tensor that is not a view, the result is the ``as_strided`` primitive
  (ir/ops/strided.py) applied to it, a view as any other;
- on a view, the view's storage positions are found on the host by replaying its chain of
  view ops on ``arange(numel of the base)``; the storage is rebuilt from the view's values
  (its gradient path) and the base's detached values elsewhere, then read by the
  primitive, and the result is made a view of the base reached by one ``as_strided`` op.

The gradient is torch's (its as_strided backward, "NOTE [ Detecting Memory Overlap Within
A Strided Tensor ]"): the cotangent is scattered (added) into the storage at the result's
positions, and the input receives the storage at its own positions, divided by how many of
its elements share one position (an expanded input); storage the input does not cover gets
nothing.  In-place writes through the result reach the base and its other views
(`as_strided_scatter`).
"""
from __future__ import annotations

import operator

import numpy as np

from tracegrad.ir.ops.strided import geometry_error
from tracegrad.ir.registry import get

from . import _state, _views
from .dispatch.frontend import EAGER
from .dispatch.modes import adopt_view
from .tensor import Tensor, attach

# view ops that only move elements (their NumPy kernels map storage positions); a view
# through another op (real, imag, view_as_real, conj ...) has no element-wise geometry here
_GEOMETRIC = frozenset({"reshape", "permute", "expand", "slice", "diagonal", "as_strided"})


def _ints_arg(value, arg: str, position: int) -> tuple:
    """torch's parse of a ``tuple of ints`` argument (ints, NumPy ints, 0-d integer tensors)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"as_strided(): argument '{arg}' (position {position}) must be tuple of "
                        f"ints, not {type(value).__name__}")
    out = []
    for pos, v in enumerate(value):
        try:
            if isinstance(v, bool):
                raise TypeError
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"as_strided(): argument '{arg}' (position {position}) must be tuple "
                            f"of ints, but found element of type {type(v).__name__} at pos "
                            f"{pos}") from None
    return tuple(out)


def _geometry(t: Tensor, base: Tensor) -> tuple[np.ndarray, int]:
    """The storage position of every element of view `t` of `base` (int64, t's shape) and
    t's storage offset."""
    n = base.numel()
    storage = np.arange(n, dtype=np.int64)
    pos = storage.reshape(tuple(base.shape))
    for op, attrs in t._view_ops:
        if op == "alias":
            continue
        if op not in _GEOMETRIC:
            raise NotImplementedError(
                f"as_strided: the input is a view made by {op!r}, whose storage this library "
                "does not lay out element by element; clone() it first")
        pos = get(op).kernel(np, pos, **attrs)
    pos = np.asarray(pos)
    if pos.size:
        return pos, int(pos.reshape(-1)[0])
    try:   # an empty view: its offset is where its (empty) NumPy view starts
        start = pos.__array_interface__["data"][0] - storage.__array_interface__["data"][0]
        return pos, min(max(start // storage.itemsize, 0), n)
    except (TypeError, KeyError):
        return pos, 0


_MISSING = object()


def as_strided(input, size=_MISSING, stride=_MISSING, storage_offset=None):
    """A view of `input`'s storage with the given sizes, strides and storage offset
    (torch.as_strided; `storage_offset` defaults to the input's own).  See the module
    docstring for views and the gradient.

    Raises:
        TypeError: torch's argument errors (`size`/`stride` not tuples of ints ...).
        RuntimeError: torch's geometry errors: strides of another length, a negative
            stride or offset, or a view past the end of the storage ("setStorage: ...
            out of bounds for storage of size N").
        NotImplementedError: `input` is a view through a dtype-changing op (view_as_real,
            real, imag) or conj.
    """
    return _as_strided(input, size, stride, storage_offset, 2)


@_state.located(name="as_strided")
def _as_strided(input, size, stride, storage_offset, first):
    missing = [n for n, v in (("size", size), ("stride", stride)) if v is _MISSING]
    if missing:   # torch's words
        names = ", ".join(f'"{n}"' for n in missing)
        raise TypeError(f"as_strided() missing {len(missing)} required positional arguments: "
                        f"{names}")
    if not isinstance(input, Tensor):
        raise TypeError(f"as_strided(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    size = _ints_arg(size, "size", first)
    stride = _ints_arg(stride, "stride", first + 1)
    base = input._base if input._base is not None else input
    pos, own_offset = (None, 0) if base is input else _geometry(input, base)
    if storage_offset is None:
        storage_offset = own_offset
    elif isinstance(storage_offset, bool) or not _is_index(storage_offset):
        raise TypeError(f"as_strided(): argument 'storage_offset' (position {first + 2}) must "
                        f"be int, not {type(storage_offset).__name__}")
    storage_offset = operator.index(storage_offset)
    why = geometry_error(size, stride, storage_offset, base.numel(), input.dtype.numpy.itemsize)
    if why is not None:
        raise RuntimeError(why)
    if base is input:
        return EAGER.call("as_strided", input, size, stride, storage_offset)
    chain = (("as_strided", {"size": size, "stride": stride,
                             "storage_offset": storage_offset}),)
    alias = any(op == "alias" for op, _ in input._view_ops)
    tangent = getattr(input, "_fw", None) is not None   # a forward-AD dual tensor
    if alias or not (tangent or _state.local.grad_enabled
                     and (input._requires_grad or base._requires_grad)):
        # no gradient or tangent to route: the base's storage, read directly (through an alias of it
        # when the input carries no history), with the input's version counter
        src = base.detach() if alias else base
        out = EAGER.call("as_strided", src, size, stride, storage_offset)
        adopt_view("as_strided", input, out, ((_views.ALIAS,) if alias else ()) + chain)
        return out
    out = EAGER.call("as_strided", _storage(input, base, pos), size, stride, storage_offset)
    adopt_view("as_strided", input, out, chain)
    return out


def _is_index(v) -> bool:
    try:
        operator.index(v)
        return True
    except TypeError:
        return False


def _storage(view: Tensor, base: Tensor, pos: np.ndarray) -> Tensor:
    """The base's storage (1-D) as a differentiable function of `view` where the view lies
    (each of k elements sharing a position gives 1/k of it: torch's division of an
    overlapping input's gradient) and the base's detached values elsewhere."""
    n = base.numel()
    flat_pos = pos.reshape(-1)
    count = np.bincount(flat_pos, minlength=n)
    values = EAGER.call("reshape", view, (-1,))
    if count.max(initial=0) > 1:
        values = values / Tensor(count[flat_pos].astype(view.dtype.numpy))
    index = Tensor(flat_pos.copy())
    if (count == 1).all():   # the view is a permutation of the whole storage: a gather
        inverse = np.empty(n, np.int64)
        inverse[flat_pos] = np.arange(flat_pos.size)
        if (inverse == np.arange(n)).all():
            return values
        return EAGER.call("take_along_axis", values, Tensor(inverse), 0)
    zeros = EAGER.call("full", (n,), 0, view.dtype)
    placed = EAGER.call("put_along_axis", zeros, index, values, 0, True)
    # stop_gradient, not detach(): a traced detach() is the same value (tg.compile)
    rest = EAGER.call("reshape", EAGER.call("stop_gradient", base), (-1,))
    return EAGER.call("where", Tensor(count > 0), placed, rest)


@attach
class _StridedMethods:
    def as_strided(self, size=_MISSING, stride=_MISSING, storage_offset=None):
        """torch.Tensor.as_strided: see `tg.as_strided`."""
        return _as_strided(self, size, stride, storage_offset, 1)
