"""The differentiable device move: ``x.to(device)`` / ``x.cpu()`` of a tensor that requires
grad records torch's ``ToCopyBackward0``, whose backward moves the gradient back to the
source device (a host NumPy array or a jax device: backends/device_arrays.py).  Fills the
dispatch core's ``device_copy`` slot (`Tensor.to` sits below this layer)."""
from __future__ import annotations

from .._device import CPU, placed
from ..backends import device_arrays
from ..dispatch.hooks import register
from ..tensor import Tensor
from .function import Function


class ToCopy(Function):
    @staticmethod
    def forward(ctx, x, target):
        a = x._data
        ctx.source = a.device if device_arrays.is_device_array(a) else CPU
        return Tensor(placed(a, target))

    @staticmethod
    def backward(ctx, g):
        return Tensor(placed(g._data, ctx.source)), None


ToCopy._backward_cls.__name__ = "ToCopyBackward0"   # torch's node for a device copy
register("device_copy", ToCopy.apply)
