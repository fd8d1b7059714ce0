"""Activation modules over tg.nn.functional_activations' composites (torch.nn): SELU,
CELU, GLU, Hardsigmoid, Hardswish, Softsign, Softmin, Tanhshrink, Softshrink, Hardshrink,
Threshold, PReLU, LogSigmoid, Softmax2d."""
from __future__ import annotations

from ... import _creation
from ...tensor import Parameter
from .. import functional as F
from .module import Module


def _simple(name: str, fn, doc: str):
    """A parameterless module calling `fn(input)` (inplace accepted where torch has it)."""
    def __init__(self, inplace: bool = False):
        Module.__init__(self)
        self.inplace = inplace
    return type(name, (Module,), {"__init__": __init__, "__module__": __name__,
                                  "forward": lambda self, input: fn(input),
                                  "__doc__": f"{doc} (torch.nn.{name})."})


SELU = _simple("SELU", F.selu, "scaled ELU")
Hardsigmoid = _simple("Hardsigmoid", F.hardsigmoid, "relu6(x + 3) / 6")
Hardswish = _simple("Hardswish", F.hardswish, "x * relu6(x + 3) / 6")
Softsign = _simple("Softsign", F.softsign, "x / (1 + |x|)")
Tanhshrink = _simple("Tanhshrink", F.tanhshrink, "x - tanh(x)")
LogSigmoid = _simple("LogSigmoid", F.logsigmoid, "log(sigmoid(x))")


class CELU(Module):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (torch.nn.CELU)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class GLU(Module):
    """a * sigmoid(b) over the halves along `dim` (torch.nn.GLU)."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(Module):
    """softmax(-x) along `dim` (torch.nn.Softmin)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels of (N, C, H, W) or (C, H, W) (torch.nn.Softmax2d).

    Raises:
        ValueError: another input rank (torch's message)."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3)


class _Shrink(Module):
    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class Softshrink(_Shrink):
    """x -+ lambd outside [-lambd, lambd], else 0 (torch.nn.Softshrink)."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Hardshrink(_Shrink):
    """x outside [-lambd, lambd], else 0 (torch.nn.Hardshrink)."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """x where x > threshold, else value (torch.nn.Threshold)."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


class PReLU(Module):
    """x where x >= 0, else a * x with a learnable slope `a` per channel or shared
    (`num_parameters`), initialized to `init` (torch.nn.PReLU)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_creation.full((num_parameters,), init, dtype=dtype))

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


ACTIVATIONS = ["CELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "LogSigmoid", "PReLU",
               "SELU", "Softmax2d", "Softmin", "Softshrink", "Softsign", "Tanhshrink",
               "Threshold"]
