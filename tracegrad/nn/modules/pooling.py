"""MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (torch.nn)."""
from __future__ import annotations

from .. import functional as F
from .module import Module


class MaxPool2d(Module):
    """Max over kH x kW windows; stride defaults to kernel_size (torch.nn.MaxPool2d).

    Ties send the gradient to the first maximum in the window, as torch.
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over kH x kW windows (torch.nn.AvgPool2d)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Mean pooling to a fixed output size (torch.nn.AdaptiveAvgPool2d)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """Max over windows of the last dim of (N, C, L) or (C, L) (torch.nn.MaxPool1d)."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool1d(AvgPool2d):
    """Mean over windows of the last dim of (N, C, L) or (C, L) (torch.nn.AvgPool1d)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad)

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Mean pooling of the last dim to `output_size` (torch.nn.AdaptiveAvgPool1d)."""

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)
