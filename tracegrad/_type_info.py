"""``tg.finfo`` / ``tg.iinfo`` (torch.finfo / torch.iinfo) and ``tg.broadcast_shapes`` /
``tg.broadcast_tensors``: numeric limits of a dtype and broadcasting without an op.

The limits come from NumPy (ml_dtypes for bfloat16); broadcasting follows NumPy's rule,
which is torch's, with torch's messages.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from tracegrad.ir import types as T

from ._config import get_default_dtype
from ._size import Size
from .tensor import Tensor


class finfo:  # noqa: N801  (torch.finfo)
    """Limits of a floating dtype (default: the default dtype), torch.finfo's fields:
    bits, eps, max, min, tiny (= smallest_normal), resolution, dtype (a name, e.g.
    ``'float32'``).

    Raises:
        TypeError: an integer or bool dtype (torch's message: use tg.iinfo).
    """

    def __init__(self, type: T.DType | None = None):  # noqa: A002  (torch's name)
        dt = get_default_dtype() if type is None else type
        if not isinstance(dt, T.DType) or dt.category not in (T.FLOAT, T.COMPLEX):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        real = dt.to_real() if dt.is_complex else dt
        info = ml_dtypes.finfo(real.numpy)
        self.bits, self.dtype = info.bits, real.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision   # torch: a power of ten, not the dtype's own

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801  (torch.iinfo)
    """Limits of an integer dtype (torch.iinfo): bits, max, min, dtype (a name).

    Raises:
        TypeError: a floating, complex or bool dtype (torch's message: use tg.finfo).
    """

    def __init__(self, type: T.DType):  # noqa: A002  (torch's name)
        if not isinstance(type, T.DType) or type.category != T.INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(type.numpy)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def broadcast_shapes(*shapes) -> Size:
    """The shape that tensors of `shapes` broadcast to (torch.broadcast_shapes; an int is a
    1-D shape).

    Raises:
        RuntimeError: shapes that do not broadcast (naming the first one that fails).
    """
    result: tuple[int, ...] = ()
    for i, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        try:
            result = np.broadcast_shapes(result, shape)
        except ValueError:
            dim = next(-k for k in range(1, min(len(result), len(shape)) + 1)
                       if 1 not in (result[-k], shape[-k]) and result[-k] != shape[-k])
            raise RuntimeError(f"Attempting to broadcast a dimension of length "
                               f"{shape[dim]} at {dim}! Mismatching argument at index {i} "
                               f"had {shape}; but expected shape should be broadcastable "
                               f"to {list(result)}") from None
    return Size(result)


def broadcast_tensors(*tensors) -> tuple:
    """`tensors` expanded to their common shape (torch.broadcast_tensors: views, gradients
    flow back summed over the broadcast dimensions).

    Raises:
        RuntimeError: shapes that do not broadcast (torch's "The size of tensor a ...").
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"broadcast_tensors(): expected Tensors, got {type(t).__name__}")
    shape: tuple[int, ...] = ()
    for t in tensors:
        try:
            shape = np.broadcast_shapes(shape, tuple(t.shape))
        except ValueError:
            a, b = shape, tuple(t.shape)
            k = next(k for k in range(1, min(len(a), len(b)) + 1)
                     if 1 not in (a[-k], b[-k]) and a[-k] != b[-k])
            raise RuntimeError(f"The size of tensor a ({a[-k]}) must match the size of tensor "
                               f"b ({b[-k]}) at non-singleton dimension "
                               f"{max(len(a), len(b)) - k}") from None
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in tensors)
