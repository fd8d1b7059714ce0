"""Dropout (torch.nn.Dropout): active in training mode only."""
from __future__ import annotations

from .. import functional as F
from .module import Module


class Dropout(Module):
    """Zeroes elements with probability p in training mode, scaling the rest by 1/(1-p).

    Masks come from the global generator (`tg.manual_seed`): eager and `tg.compile`
    runs with the same seed draw the same masks.  Identity in eval mode.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class _DropoutNd(Module):
    _functional = None

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._functional(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) / (C, L) input in training mode
    (torch.nn.Dropout1d; `F.dropout1d`)."""
    _functional = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) / (C, H, W) input (torch.nn.Dropout2d)."""
    _functional = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) / (C, D, H, W) input (torch.nn.Dropout3d)."""
    _functional = staticmethod(F.dropout3d)
