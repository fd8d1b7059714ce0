"""torch.nn.functional's spatial and channel functions, composed of registry ops:
``dropout1d/2d/3d``, ``pixel_shuffle``/``pixel_unshuffle``, ``bilinear``, ``interpolate``
(nearest, linear, bilinear; ``align_corners``), ``unfold``/``fold`` (im2col / col2im) and
``logsigmoid``.  Re-exported by `tracegrad.nn.functional`; gradients, tracing and jax
lowering come from the ops they are made of.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _creation, _ops
from .._surface_ops import logsigmoid  # noqa: F401  (F.logsigmoid)
from ..linalg import einsum
from ..tensor import Tensor


# ---- channel dropout ----------------------------------------------------------------------
def _channel_dropout(name: str, spatial: int, input, p, training, inplace):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: Expected {spatial + 1}D or {spatial + 2}D input, but "
                           f"received a {input.ndim}D input of shape {input.shape}")
    if inplace:
        return input._inplace_apply(f"{name}_", lambda: _channel_dropout(
            name, spatial, input, p, training, False))
    if not training or p == 0.0:
        return input
    if p == 1.0:
        return _ops.mul(input, 0.0)
    mask_shape = input.shape[:input.ndim - spatial] + (1,) * spatial   # one draw per channel
    keep = _creation.rand(mask_shape, dtype=input.dtype) < 1.0 - p
    return _ops.mul(input, _ops.mul(keep.to(input.dtype), 1.0 / (1.0 - p)))


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability `p`, scale the rest
    by 1 / (1 - p) (torch.nn.functional.dropout1d; masks from `tg.manual_seed`'s stream).

    Raises:
        ValueError: p outside [0, 1].  RuntimeError: another rank (torch's message).
    """
    return _channel_dropout("dropout1d", 1, input, p, training, inplace)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """`dropout1d` for (N, C, H, W) or (C, H, W) input (torch.nn.functional.dropout2d)."""
    return _channel_dropout("dropout2d", 2, input, p, training, inplace)


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """`dropout1d` for (N, C, D, H, W) or (C, D, H, W) input (torch.nn.functional.dropout3d)."""
    return _channel_dropout("dropout3d", 3, input, p, training, inplace)


# ---- pixel shuffle --------------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor: int):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) (torch.nn.functional.pixel_shuffle).

    Raises:
        RuntimeError: the channels are not divisible by r^2 (torch's message).
    """
    r = int(upscale_factor)
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    n = len(lead)
    x = _ops.reshape(input, (*lead, c // (r * r), r, r, h, w))
    x = _ops.permute(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return _ops.reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor: int):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), the inverse of `pixel_shuffle`.

    Raises:
        RuntimeError: H or W not divisible by r (torch's message).
    """
    r = int(downscale_factor)
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by "
                           f"downscale_factor, but got height={h}, width={w} and "
                           f"downscale_factor={r}")
    n = len(lead)
    x = _ops.reshape(input, (*lead, c, h // r, r, w // r, r))
    x = _ops.permute(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return _ops.reshape(x, (*lead, c * r * r, h // r, w // r))


# ---- bilinear --------------------------------------------------------------------------------
def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = x1 W[o] x2 + b[o]`` with W (out, in1, in2) (torch.nn.functional.bilinear).

    Raises:
        RuntimeError: the feature sizes do not match the weight (torch's wording).
    """
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear: input1 {input1.shape} and input2 {input2.shape} do not "
                           f"match weight {weight.shape} (in1 and in2 features)")
    lead = input1.shape[:-1]
    a = _ops.reshape(input1, (-1, input1.shape[-1]))
    b = _ops.reshape(input2, (-1, input2.shape[-1]))
    out = einsum("bi,oij,bj->bo", a, weight, b)
    if bias is not None:
        out = out + bias
    return _ops.reshape(out, (*lead, weight.shape[0]))


# ---- interpolate -----------------------------------------------------------------------------
_MODES = {"nearest": 0, "linear": 1, "bilinear": 2, "nearest-exact": 0}


def interpolate(input, size=None, scale_factor=None, mode: str = "nearest",
                align_corners=None, recompute_scale_factor=None, antialias: bool = False):
    """Resize the spatial dims of (N, C, *spatial) input (torch.nn.functional.interpolate):
    `mode` "nearest", "nearest-exact", "linear" (3-D input) or "bilinear" (4-D), with
    torch's source-index rules (``align_corners``; the scale is ``1 / scale_factor`` when
    given and not recomputed, else in / out).

    Raises:
        ValueError: neither or both of size and scale_factor; align_corners with a nearest
            mode (torch's messages).
        NotImplementedError: bicubic, trilinear, area, antialias.
    """
    if mode not in _MODES or antialias:
        raise NotImplementedError(f"interpolate: mode={mode!r}{' antialias' if antialias else ''}"
                                  " is not supported (nearest, nearest-exact, linear and "
                                  "bilinear are)")
    if align_corners is not None and mode.startswith("nearest"):
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    spatial = input.ndim - 2
    if _MODES[mode] and spatial != _MODES[mode]:
        raise NotImplementedError(f"interpolate: mode={mode!r} expects a {_MODES[mode] + 2}-D "
                                  f"input, got {input.ndim}-D {input.shape}")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    ins = input.shape[2:]
    if size is not None:
        outs = tuple(size) if isinstance(size, (tuple, list)) else (size,) * spatial
        scales = [None] * spatial
    else:
        sf = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
            (scale_factor,) * spatial
        outs = tuple(int(math.floor(i * s)) for i, s in zip(ins, sf))
        scales = [None if recompute_scale_factor else s for s in sf]
    x = input
    for k, (n_in, n_out, s) in enumerate(zip(ins, outs, scales)):
        d = 2 + k
        if mode.startswith("nearest"):
            x = _ops.index_select(x, d, Tensor(_nearest_index(n_in, n_out, s, mode)))
        else:
            x = _linear_along(x, d, n_in, n_out, s, bool(align_corners))
    return x


def _nearest_index(n_in, n_out, scale, mode):
    scale = n_in / n_out if scale is None else 1.0 / scale
    dst = np.arange(n_out, dtype=np.float64)
    src = (dst + 0.5) * scale if mode == "nearest-exact" else dst * scale
    return np.minimum(np.floor(src).astype(np.int64), n_in - 1)


def _linear_along(x, d, n_in, n_out, scale, align_corners):
    dst = np.arange(n_out, dtype=np.float64)
    if align_corners:
        src = dst * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    else:
        ratio = n_in / n_out if scale is None else 1.0 / scale
        src = np.maximum((dst + 0.5) * ratio - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    lam = (src - i0).astype(x.dtype.numpy)
    shape = [1] * x.ndim
    shape[d] = n_out
    lam = Tensor(lam.reshape(shape))
    a, b = _ops.index_select(x, d, Tensor(i0)), _ops.index_select(x, d, Tensor(i1))
    return a + (b - a) * lam


# ---- unfold / fold ---------------------------------------------------------------------------
def _pair(v, name: str):
    t = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(t) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, got {v!r}")
    return t


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding (kh, kw) blocks of (N, C, H, W) input as columns: (N, C * kh * kw, L)
    (torch.nn.functional.unfold, im2col; L the number of block positions).

    Raises:
        NotImplementedError: input that is not 4-D (torch's 4-D form only).
        RuntimeError: the blocks do not fit (torch's wording).
    """
    if input.ndim != 4:
        raise NotImplementedError(f"unfold: only 4-D input (N, C, H, W) is supported, got "
                                  f"{input.shape}")
    (kh, kw), (dh, dw) = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    (ph, pw), (sh, sw) = _pair(padding, "padding"), _pair(stride, "stride")
    n, c, h, w = input.shape
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"unfold: the kernel {(kh, kw)} with dilation {(dh, dw)} does not fit "
                           f"the padded input {input.shape} (padding {(ph, pw)})")
    x = _ops.pad(input, (pw, pw, ph, ph)) if ph or pw else input
    cols = []
    for i in range(kh):
        for j in range(kw):
            cols.append(x[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                          j * dw: j * dw + sw * (ow - 1) + 1: sw])
    out = _ops.stack(cols, 2)   # (N, C, kh*kw, oh, ow)
    return _ops.reshape(out, (n, c * kh * kw, oh * ow))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum columns (N, C * kh * kw, L) back into (N, C, H, W) (torch.nn.functional.fold,
    col2im: overlapping values add up; the inverse placement of `unfold`).

    Raises:
        NotImplementedError: input that is not 3-D.
        RuntimeError: the column count or block count does not match (torch's wording).
    """
    if input.ndim != 3:
        raise NotImplementedError(f"fold: only 3-D input (N, C*kh*kw, L) is supported, got "
                                  f"{input.shape}")
    (h, w), (kh, kw) = _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size")
    (dh, dw), (ph, pw), (sh, sw) = (_pair(dilation, "dilation"), _pair(padding, "padding"),
                                    _pair(stride, "stride"))
    n, ck, length = input.shape
    if ck % (kh * kw):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={ck} and kernel_size="
                           f"{(kh, kw)}")
    c = ck // (kh * kw)
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh * ow != length:
        raise RuntimeError(f"Given output_size={(h, w)}, kernel_size={(kh, kw)}, dilation="
                           f"{(dh, dw)}, padding={(ph, pw)}, stride={(sh, sw)}, expected size "
                           f"of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {oh} * {ow} = {oh * ow}, but got input.size(2)={length}.")
    cols = _ops.reshape(input, (n, c, kh * kw, oh, ow))
    hp, wp = h + 2 * ph, w + 2 * pw
    out = None
    for i in range(kh):
        for j in range(kw):
            piece = _ops.squeeze(_ops.narrow(cols, 2, i * kw + j, 1), 2)
            zeros = _ops.full((n, c, hp, wp), 0, input.dtype)
            start = (0, 0, i * dh, j * dw)
            stop = (n, c, i * dh + sh * (oh - 1) + 1, j * dw + sw * (ow - 1) + 1)
            placed = _ops.slice_scatter(zeros, piece, start, stop, (1, 1, sh, sw))
            out = placed if out is None else out + placed
    if ph or pw:
        out = out[:, :, ph: ph + h, pw: pw + w]
    return out


__all__ = ["bilinear", "dropout1d", "dropout2d", "dropout3d", "fold", "interpolate",
           "logsigmoid", "pixel_shuffle", "pixel_unshuffle", "unfold"]
