"""torch.autograd.Variable, the deprecated alias of Tensor kept for old scripts."""
from __future__ import annotations

from ..tensor import Tensor


class _VariableMeta(type):
    def __call__(cls, data, requires_grad: bool = False, volatile: bool = False):
        # torch: a new leaf sharing `data`'s value (not `data` itself, and no graph)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        out._vc = [0]   # torch's Variable(t) is a new leaf with its own version counter
        return out.requires_grad_(requires_grad)

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(tensor, requires_grad=False)``: a leaf sharing `tensor`'s value
    (torch.autograd.Variable, deprecated there too); ``isinstance(t, Variable)`` is True
    for every tensor."""
