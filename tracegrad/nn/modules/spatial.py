"""PixelShuffle, PixelUnshuffle, Upsample and Bilinear (torch.nn's), over
`tracegrad.nn.functional_spatial`."""
from __future__ import annotations

import math

from ... import _creation
from ...tensor import Parameter
from .. import functional as F
from .. import init
from .module import Module


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) (torch.nn.PixelShuffle)."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W) (torch.nn.PixelUnshuffle)."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Upsample(Module):
    """`F.interpolate` as a layer (torch.nn.Upsample): `size` or `scale_factor`, `mode`
    ("nearest", "nearest-exact", "linear", "bilinear"), `align_corners`."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners=None, recompute_scale_factor=None):
        super().__init__()
        self.size = size
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) \
            else (tuple(float(s) for s in scale_factor) if scale_factor else None)
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        info = (f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None
                else f"size={self.size!r}")
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Nearest upsampling of (N, C, H, W) (torch.nn.UpsamplingNearest2d)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear upsampling with align_corners=True (torch.nn.UpsamplingBilinear2d)."""

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class Fold(Module):
    """`F.fold` as a layer (torch.nn.Fold): sliding blocks (N, C*k*k, L) back to an image."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """`F.unfold` as a layer (torch.nn.Unfold): an image to its sliding blocks."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Bilinear(Module):
    """``y = x1^T W x2 + b`` with W (out, in1, in2) (torch.nn.Bilinear); weight and bias
    U(-1/sqrt(in1), 1/sqrt(in1)), as torch."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(_creation.zeros(out_features, in1_features, in2_features,
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
