"""Padding layers (torch.nn): ReflectionPad, ReplicationPad, CircularPad, ZeroPad and
ConstantPad, each in 1d/2d/3d, all calling F.pad (ir/ops/pad.py) with their mode.

`padding` is an int (the same on every side) or a tuple of 2 * d ints in F.pad's order
(last dimension first: left, right, top, bottom, front, back).
"""
from __future__ import annotations

from ...tensor import Tensor
from .. import functional as F
from .module import Module


class _Pad(Module):
    _mode = "constant"
    _dims = 0

    def __init__(self, padding, value: float = 0.0):
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self._dims)
        padding = tuple(padding)
        if len(padding) != 2 * self._dims:
            raise ValueError(f"{type(self).__name__}: padding must be an int or a tuple of "
                             f"{2 * self._dims} ints, got {padding}")
        self.padding, self.value = padding, value

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ZeroPad(_Pad):
    def __init__(self, padding):          # torch: ZeroPadNd(padding), no value
        super().__init__(padding, 0.0)


class _ConstantPad(_Pad):
    def __init__(self, padding, value: float):   # torch: value is required
        super().__init__(padding, value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


def _family(mode: str, base, prefix: str):
    """The 1d/2d/3d classes of one padding mode, named as torch's."""
    return [type(f"{prefix}{d}d", (base,),
                 {"_mode": mode, "_dims": d, "__module__": __name__,
                  "__doc__": f"{mode} padding of the last {d} dims (torch.nn.{prefix}{d}d)."})
            for d in (1, 2, 3)]


ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family("reflect", _Pad, "ReflectionPad")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family("replicate", _Pad,
                                                               "ReplicationPad")
CircularPad1d, CircularPad2d, CircularPad3d = _family("circular", _Pad, "CircularPad")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _family("constant", _ZeroPad, "ZeroPad")
ConstantPad1d, ConstantPad2d, ConstantPad3d = _family("constant", _ConstantPad, "ConstantPad")

PADDING_LAYERS = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
                  "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
                  "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
                  "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]
