"""Identity and Linear (torch.nn.Identity, torch.nn.Linear)."""
from __future__ import annotations

from tracegrad.ir.errors import with_location

from ... import _creation, _state
from ...tensor import Parameter, Tensor
from .. import functional as F
from .. import init
from .module import Module


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments (torch.nn.Identity)."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ W.T + b with W: (out_features, in_features) (torch.nn.Linear).

    Initialized as torch: weight kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(in), 1/sqrt(in)),
    and bias U(-1/sqrt(in), 1/sqrt(in)).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        if min(in_features, out_features) < 0:   # torch 2.13's words (its weight is empty())
            raise with_location(RuntimeError(
                f"Linear: Trying to create tensor with negative dimension "
                f"{min(in_features, out_features)}: [{out_features}, {in_features}]"),
                _state.user_location())
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_creation.zeros(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.reset_layer_(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")
