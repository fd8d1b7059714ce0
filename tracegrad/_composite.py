"""torch.is_tensor, and the names of whole-tensor composites that tensor.py's methods and
operators (``//``) call: floor_divide, isclose, allclose and equal are registry composites
(ir/ops/division.py, ir/ops/closeness.py), generated into `_ops` like every other op."""
from __future__ import annotations

from ._ops import allclose, equal, floor_divide, isclose  # noqa: F401  (tg.* and Tensor methods)
from .tensor import Tensor


def is_tensor(obj) -> bool:
    """True when `obj` is a tracegrad Tensor (a Parameter too), as torch.is_tensor."""
    return isinstance(obj, Tensor)
