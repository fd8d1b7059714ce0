"""Conv1d, Conv2d, ConvTranspose2d (torch.nn), with torch's default initialization."""
from __future__ import annotations

from ... import _creation, _ops
from ...tensor import Parameter
from .. import functional as F
from .. import init
from .module import Module

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(value, n: int, what: str) -> tuple[int, ...]:
    vals = (value,) * n if isinstance(value, int) else tuple(value)
    if len(vals) != n:
        raise ValueError(f"{what} must be an int or a tuple of {n} ints, got {value!r}")
    return vals


class _ConvNd(Module):
    _transposed = False

    def __init__(self, nd, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 groups, bias, padding_mode, output_padding=0, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"in_channels ({in_channels}) and out_channels ({out_channels}) "
                             f"must be divisible by groups ({groups})")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}")
        if padding_mode == "circular":
            raise NotImplementedError(f"{type(self).__name__}: padding_mode='circular' is not "
                                      "supported yet")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _tuple(kernel_size, nd, "kernel_size")
        self.stride = _tuple(stride, nd, "stride")
        self.dilation = _tuple(dilation, nd, "dilation")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _tuple(padding, nd, "padding")
        self.output_padding = _tuple(output_padding, nd, "output_padding")
        self.groups, self.padding_mode = groups, padding_mode
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(_creation.zeros(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.zeros(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.reset_layer_(self.weight, self.bias)

    def _explicit_padding(self, input):
        """padding_mode reflect/replicate: pad first (torch's order: last dim first)."""
        if self.padding == "valid":
            return input, 0
        if self.padding == "same":
            total = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            pairs = [(t // 2, t - t // 2) for t in total]
        else:
            pairs = [(p, p) for p in self.padding]
        flat = tuple(v for lo, hi in reversed(pairs) for v in (lo, hi))
        return _ops.pad(input, flat, self.padding_mode), 0

    def extra_repr(self) -> str:
        nd = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) (or unbatched (C_in, L)) (torch.nn.Conv1d)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(1, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def forward(self, input):
        padding = self.padding
        if self.padding_mode != "zeros":
            input, padding = self._explicit_padding(input)
        return F.conv1d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) (or unbatched (C_in, H, W)) (torch.nn.Conv2d)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None):
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype=dtype)

    def forward(self, input):
        padding = self.padding
        if self.padding_mode != "zeros":
            input, padding = self._explicit_padding(input)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


class ConvTranspose2d(_ConvNd):
    """Transposed 2-D convolution, the gradient of Conv2d w.r.t. its input (torch.nn).

    weight: (in_channels, out_channels / groups, kH, kW).
    """

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f"Only 'zeros' padding mode is supported for ConvTranspose2d, "
                             f"got {padding_mode!r}")
        if isinstance(padding, str):
            raise ValueError("ConvTranspose2d: padding must be an int or a tuple of ints")
        super().__init__(2, in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, output_padding, dtype=dtype)

    def forward(self, input, output_size=None):
        if output_size is not None:
            raise NotImplementedError("ConvTranspose2d: output_size is not supported; pass "
                                      "output_padding to the constructor")
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)
