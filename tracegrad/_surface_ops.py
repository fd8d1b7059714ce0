"""torch functions composed of registry ops: ``add``/``sub`` with `alpha`, ``broadcast_to``,
``repeat_interleave``, ``trace``, ``spmm``, ``select``, ``median``, ``isin``, ``logsigmoid``.

Each is a composite of existing ops, so its gradient, tracing and jax lowering come from
those ops; ``repeat_interleave`` with a tensor of repeats has a value-dependent shape and
runs eagerly only (as `nonzero`).  Installed as ``tg.<name>`` and ``Tensor.<name>``.
"""
from __future__ import annotations

import collections

import numpy as np

from tracegrad.ir import types as T
from tracegrad.ir.errors import with_location
from tracegrad.ir.scalars import check_scalar

from . import _ops, _state, _view_names, _views
from .tensor import Tensor, attach

median_result = collections.namedtuple("median", ["values", "indices"])


def _scaled(name: str, input, other, alpha):
    if alpha == 1:
        return other
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, complex)):
        raise TypeError(f"{name}(): alpha must be a number, got {type(alpha).__name__}")
    dt = input.dtype if isinstance(input, Tensor) else None
    if dt is not None and dt.category in (T.INT, T.BOOL) and isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    check_alpha(name, input, other, alpha)
    return other * alpha


def check_alpha(name: str, input, other, alpha) -> None:
    """torch converts `alpha` (a Scalar argument) to the dtype ``input + other`` computes in
    with an overflow check: ``int8.add(1, alpha=128)`` raises (ir/scalars.py)."""
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if not tensors or isinstance(alpha, complex):
        return
    dims = [t.dtype for t in tensors if t.ndim]
    zero = [t.dtype for t in tensors if not t.ndim]
    numbers = [x for x in (input, other) if not isinstance(x, Tensor)]
    try:
        check_scalar(name, alpha, T.result_type(dims, zero, numbers))
    except (RuntimeError, OverflowError) as e:
        raise with_location(e, _state.user_location()) from None


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other`` (torch.add; `alpha` a number, a float one refused for integer
    inputs with torch's message); ``out=`` as torch's (`tracegrad._out`)."""
    return _ops.add(input, _scaled("add", input, other, alpha), out=out)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other`` (torch.sub; see `add`)."""
    return _ops.sub(input, _scaled("sub", input, other, alpha), out=out)


subtract = sub


def broadcast_to(input, size):
    """`input` expanded to `size` (torch.broadcast_to; ``-1`` keeps a size): a view."""
    return _ops.expand(input, tuple(size))


def trace(input):
    """The sum of the main diagonal of a 2-D tensor (torch.trace; integer inputs give int64).

    Raises:
        RuntimeError: `input` is not 2-D (torch's message).
    """
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _ops.sum(_ops.diagonal(input))


def spmm(input, mat2):
    """``input @ mat2`` for a dense `input` (torch.spmm, which pygcn calls with its
    adjacency): tracegrad's tensors are all dense, so this is `mm`, with its gradient and
    errors.  A sparse layout does not exist here: keep the adjacency as a dense matrix."""
    return _ops.mm(input, mat2)


def _tensor_arg(name: str, arg: str, args: tuple, kwargs: dict, position: int):
    """``(value, rest of args)`` of the argument `arg` of `name` that torch 2.13 takes as a
    tensor only (no Scalar overload: heaviside's `values`, nextafter's `other`): a Python
    number raises torch's TypeError, with the position when passed positionally."""
    if args:
        value, where = args[0], f" (position {position})"
    elif arg in kwargs:
        value, where = kwargs.pop(arg), ""
    else:
        raise with_location(TypeError(f"{name}() missing required argument '{arg}'"),
                            _state.user_location())
    if not isinstance(value, Tensor):
        raise with_location(TypeError(f"{name}(): argument '{arg}'{where} must be Tensor, not "
                                      f"{type(value).__name__}"), _state.user_location())
    return value, args[1:]


def heaviside(input, *args, **kwargs):  # noqa: A002
    """0 where `input` < 0, `values` where it is 0, 1 where > 0 (torch.heaviside; `values` a
    tensor, as torch 2.13, which has no Python-number form)."""
    values, rest = _tensor_arg("heaviside", "values", args, kwargs, 2)
    return _ops.heaviside(input, values, *rest, **kwargs)


def nextafter(input, *args, **kwargs):  # noqa: A002
    """The next float after `input` towards `other`, elementwise (torch.nextafter; floating
    tensors only, both tensors: torch 2.13 has no Scalar overload)."""
    _tensor_arg("nextafter", "input", (input,), {}, 1)
    other, rest = _tensor_arg("nextafter", "other", args, kwargs, 2)
    return _ops.nextafter(input, other, *rest, **kwargs)


def _tensor_only_methods(op: str, arg: str):
    """The Tensor method and in-place method of `op`, whose second operand `arg` torch 2.13
    takes as a tensor only (`_tensor_arg`'s TypeError, at position 1 of the method)."""
    fn = getattr(_ops, op)

    def method(self, *args, **kwargs):
        value, rest = _tensor_arg(op, arg, args, kwargs, 1)
        return fn(self, value, *rest, **kwargs)

    def inplace(self, *args, **kwargs):
        value, rest = _tensor_arg(op + "_", arg, args, kwargs, 1)
        return self._inplace_apply(op + "_", lambda: fn(self, value, *rest, **kwargs))
    method.__name__, inplace.__name__ = op, op + "_"
    return method, inplace


def squeeze(input, dim=None):  # noqa: A002
    """`input` without its size-1 dims, or those of `dim` (an int or a tuple; torch.squeeze):
    a view, its node named by torch's overload (SqueezeBackward0 / 1 / 2)."""
    return _view_names.rename(_ops.squeeze(input, dim), _view_names.squeeze_name(dim), input)


def flatten(input, start_dim: int = 0, end_dim: int = -1):  # noqa: A002
    """Dims `start_dim`..`end_dim` of `input` merged into one (torch.flatten): a view
    (ViewBackward0), or a copy where the strides do not allow one (UnsafeViewBackward0);
    `input` itself when that is one dim (a 1-D input, ``flatten(d, d)``), as torch."""
    out = _ops.flatten(input, start_dim, end_dim)   # (its dims checked there)
    if input.ndim and start_dim % input.ndim == end_dim % input.ndim:
        return input
    return _views.torch_reshape(input, out.shape, out)


def reshape(input, shape):  # noqa: A002
    """`input` with another shape (torch.reshape): a view where the strides allow one, else
    a copy (`Tensor.reshape`)."""
    if not isinstance(input, Tensor):
        return _ops.reshape(input, shape)   # its error names the argument
    return input.reshape(shape)


def ravel(input):  # noqa: A002
    """`input` as one dim (torch.ravel; 0-d gives shape [1]): a view where the strides allow
    one, else a copy; its node is ViewBackward0 either way, as torch's (it is
    ``contiguous().view(-1)``: a non-contiguous input is cloned first)."""
    return _ops.reshape(input if _views.is_contiguous(input) else _ops.clone(input), (-1,))


@_state.located
def select(input, dim: int, index: int):
    """The slice of `input` at `index` along `dim`, that dim removed (torch.select): a view.

    Raises:
        IndexError: `index` out of range for that dim (torch's message).
    """
    d = dim + input.ndim if dim < 0 else dim
    if not 0 <= d < input.ndim:
        raise IndexError(f"select(): Dimension out of range (expected to be in range of "
                         f"[{-input.ndim}, {input.ndim - 1}], but got {dim})")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{input.shape} at dimension {dim}")
    return _view_names.rename(_ops.squeeze(_ops.narrow(input, d, index % n, 1), d),
                              "SelectBackward0", input)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element repeated (torch.repeat_interleave): `repeats` an int or a 1-D tensor (one
    count per element along `dim`; `input` flattened when `dim` is None).
    ``repeat_interleave(counts)`` alone gives ``[0]*counts[0] + [1]*counts[1] + ...``.

    A tensor of repeats gives a value-dependent shape: eager only.

    Raises:
        RuntimeError: repeats of the wrong length or negative (torch's messages).
    """
    if repeats is None:   # torch.repeat_interleave(repeats)
        counts = np.asarray(input.numpy())
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
        return Tensor(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    if dim is None:
        input, dim = _ops.reshape(input, (-1,)), 0
    d = dim + input.ndim if dim < 0 else dim
    n = input.shape[d]
    if isinstance(repeats, Tensor) and repeats.numel() == 1 and repeats.ndim <= 1:
        repeats = int(repeats.item())
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("repeat_interleave: repeats can not be negative")
        shape = input.shape
        x = _ops.unsqueeze(input, d + 1)
        x = _ops.expand(x, shape[:d + 1] + (repeats,) + shape[d + 1:])
        return _ops.reshape(x, shape[:d] + (n * repeats,) + shape[d + 1:])
    counts = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)
    if counts.shape != (n,):
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and input.size({dim}) = {n}")
    if (counts < 0).any():
        raise RuntimeError("repeat_interleave: repeats can not be negative")
    index = Tensor(np.repeat(np.arange(n, dtype=np.int64), counts))
    return _ops.index_select(input, d, index)


@_state.located
def median(input, dim=None, keepdim: bool = False):
    """The lower median (torch.median): of all elements (a 0-d tensor), or along `dim` as
    ``(values, indices)``; of an even count the smaller middle value, as torch (nodes
    MedianBackward0 / MedianBackward1, torch 2.13's overload names)."""
    if dim is None:
        flat = _ops.reshape(input, (-1,))
        values, _ = _ops.sort(flat)
        return _view_names.rename(_ops.squeeze(_ops.narrow(values, 0, (flat.shape[0] - 1) // 2,
                                                           1), 0), "MedianBackward0", input)
    d = dim + input.ndim if dim < 0 else dim
    values, indices = _ops.sort(input, d)
    k = (input.shape[d] - 1) // 2
    values, indices = _ops.narrow(values, d, k, 1), _ops.narrow(indices, d, k, 1)
    if not keepdim:
        values, indices = _ops.squeeze(values, d), _ops.squeeze(indices, d)
    return median_result(_view_names.rename(values, "MedianBackward1", input), indices)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """For each element, whether it is in `test_elements` (a tensor or a number; torch.isin);
    `invert` negates."""
    if not isinstance(elements, Tensor):
        elements = Tensor(np.asarray(elements))
    if not isinstance(test_elements, Tensor):
        test_elements = Tensor(np.asarray(test_elements))
    flat = _ops.reshape(test_elements, (-1,))
    hit = _ops.any(_ops.eq(_ops.unsqueeze(elements, -1), flat), -1)
    return _ops.logical_not(hit) if invert else hit


def logsigmoid(input):
    """``log(sigmoid(x))`` as ``-softplus(-x)`` (torch.nn.functional.logsigmoid): finite for
    large negative inputs where ``log(sigmoid(x))`` underflows to -inf."""
    return _ops.neg(_ops.softplus(_ops.neg(input)))


@attach
class _SurfaceMethods:
    def add(self, other, *, alpha=1):
        return add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):
        return sub(self, other, alpha=alpha)

    subtract = sub

    def broadcast_to(self, size):
        return broadcast_to(self, size)

    def trace(self):
        return trace(self)

    def select(self, dim, index):
        return select(self, dim, index)

    def squeeze(self, dim=None):
        return squeeze(self, dim)

    def flatten(self, start_dim=0, end_dim=-1):
        return flatten(self, start_dim, end_dim)

    def ravel(self):
        return ravel(self)

    heaviside, heaviside_ = _tensor_only_methods("heaviside", "values")
    nextafter, nextafter_ = _tensor_only_methods("nextafter", "other")

    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        return repeat_interleave(self, repeats, dim)

    def median(self, dim=None, keepdim=False):
        return median(self, dim, keepdim)

    def isin(self, test_elements, *, assume_unique=False, invert=False):
        return isin(self, test_elements, invert=invert)


__all__ = ["add", "broadcast_to", "flatten", "heaviside", "isin", "median", "nextafter", "ravel",
           "repeat_interleave", "reshape", "select", "squeeze", "sub", "subtract", "trace"]
