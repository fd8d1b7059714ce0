"""The NumPy forms of `conv` (ir/ops/conv.py): im2col + one GEMM, and GEMM + col2im per
kernel tap for stride-1 transposed convs; each chooses its copy layout so that it moves
contiguous runs (measurements: docs/performance.md, "Ported programs, eager")."""
from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _dilated(size: int, factor: int) -> int:
    return 0 if size == 0 else (size - 1) * factor + 1


def _out_size(size, pad, k, stride, dilation, lhs_dilation=1) -> int:
    return (_dilated(size, lhs_dilation) + pad[0] + pad[1] - _dilated(k, dilation)) // stride + 1


def _pad_np(x, padding, lhs_dilation):
    """Dilate the spatial dims of `x` (zeros between elements), then pad (negative = crop)."""
    if any(f != 1 for f in lhs_dilation):
        shape = x.shape[:2] + tuple(_dilated(s, f) for s, f in zip(x.shape[2:], lhs_dilation))
        xd = np.zeros(shape, x.dtype)
        xd[(Ellipsis,) + tuple(slice(None, None, f) for f in lhs_dilation)] = x
        x = xd
    widths = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    x = np.pad(x, widths)
    crop = tuple(slice(max(-lo, 0), s - max(-hi, 0)) for (lo, hi), s in zip(padding, x.shape[2:]))
    return x[(Ellipsis,) + crop]


def _prefer_col2im(xs, ws, stride, padding, dilation, lhs_dilation) -> bool:
    """Whether GEMM + col2im moves less data than im2col: the columns it writes (input
    positions x C_out x kernel) against the patches im2col gathers (output positions x C_in x
    kernel, zeros of the padding and the lhs dilation included).  Only for stride 1 and no
    cropping; an input gradient's "full" padding and conv_transpose2d's dilated input make
    im2col's patches 1.2-4x larger than col2im's columns."""
    if any(s != 1 for s in stride) or any(lo < 0 or hi < 0 for lo, hi in padding):
        return False
    out = [_out_size(s, p, k, 1, d, ld) for s, p, k, d, ld in
           zip(xs[2:], padding, ws[2:], dilation, lhs_dilation)]
    return math.prod(xs[2:]) * ws[0] < math.prod(out) * xs[1]


def _conv_im2col(x, w, stride, dilation, groups):
    """Conv of the padded input `x`: its windows (a strided view) copied once into patches,
    then one (batched over groups) matmul.  The copy's innermost axis is the longer of
    C/groups (channels last) and the output width, so it moves contiguous runs."""
    nd = x.ndim - 2
    n, size = x.shape[0], x.shape[2:]
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    og, taps = o // groups, math.prod(kernel)
    span = tuple(_dilated(k, d) for k, d in zip(kernel, dilation))
    steps = tuple(slice(None, None, s) for s in stride)
    taps_at = tuple(slice(None, None, d) for d in dilation)
    sp = tuple(range(2, 2 + nd))
    if cg >= size[-1] // stride[-1]:   # patches (g, N*out, kernel*C/g), channels last
        xt = np.ascontiguousarray(x.reshape((n, groups, cg) + size).transpose((1, 0) + tuple(
            a + 1 for a in sp) + (2,)))                                   # (g, N, *size, C/g)
        win = sliding_window_view(xt, span, axis=sp)[(slice(None),) * 2 + steps + (
            slice(None),) + taps_at]                                      # (g, N, *out, C/g, *k)
        out = win.shape[2:2 + nd]
        patches = np.ascontiguousarray(win.transpose((0, 1) + sp + tuple(
            range(3 + nd, 3 + 2 * nd)) + (2 + nd,))).reshape(groups, -1, taps * cg)
        wt = w.reshape((groups, og, cg) + kernel).transpose((0, 1) + tuple(
            range(3, 3 + nd)) + (2,)).reshape(groups, og, taps * cg)
        y = np.matmul(patches, wt.transpose(0, 2, 1))                     # (g, N*out, O/g)
        y = y.reshape(groups, n, -1, og).transpose(1, 0, 3, 2)
    else:   # patches (g, C/g*kernel, N*out): runs along the output width
        win = sliding_window_view(x, span, axis=sp)[(slice(None),) * 2 + steps + taps_at]
        out = win.shape[2:2 + nd]                                         # (N, C, *out, *k)
        win = win.reshape((n, groups, cg) + out + kernel)
        patches = np.ascontiguousarray(win.transpose((1, 2) + tuple(range(3 + nd, 3 + 2 * nd))
                                                     + (0,) + tuple(range(3, 3 + nd))))
        y = np.matmul(w.reshape(groups, og, cg * taps), patches.reshape(groups, cg * taps, -1))
        y = y.reshape(groups, og, n, -1).transpose(2, 0, 1, 3)            # (N, g, O/g, out)
    return np.ascontiguousarray(y).reshape((n, o) + out)


def _conv_col2im(x, w, padding, dilation, lhs_dilation, groups):
    """A stride-1 conv of the padded, lhs-dilated `x` without materializing it: per kernel
    tap, one matmul gives every input element's contribution (its columns), added to the
    output positions it reaches (input j sits at j*lhs_dilation + pad_lo of the padded
    input; tap t reads it for output i = that - t*dilation).  One matmul per tap rather
    than one for all taps: adding from one large column array reads it strided, which took
    as long as the matmul (MNIST's input gradient: 17 against 22 ms)."""
    nd = x.ndim - 2
    n, size = x.shape[0], x.shape[2:]
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    og = o // groups
    out = tuple(_out_size(s, p, k, 1, d, ld) for s, p, k, d, ld in
                zip(size, padding, kernel, dilation, lhs_dilation))
    xt = np.ascontiguousarray(x.reshape((n, groups, cg) + size).transpose(
        (1, 0) + tuple(range(3, 3 + nd)) + (2,))).reshape(groups, -1, cg)   # (g, N*size, C/g)
    wt = w.reshape((groups, og, cg) + kernel)
    y = np.zeros((groups, n) + out + (og,), np.result_type(x, w))           # channels last
    for tap in itertools.product(*map(range, kernel)):
        src, dst = [], []
        for s, t, d, ld, (lo, _), m in zip(size, tap, dilation, lhs_dilation, padding, out):
            first = max(0, -((lo - t * d) // ld))          # ceil((t*d - lo) / ld), at least 0
            last = min(s - 1, (m - 1 + t * d - lo) // ld)
            if last < first:
                break
            src.append(slice(first, last + 1))
            start = first * ld + lo - t * d
            dst.append(slice(start, start + (last - first) * ld + 1, ld))
        else:
            cols = np.matmul(xt, wt[(Ellipsis,) + tap].transpose(0, 2, 1))  # (g, N*size, O/g)
            cols = cols.reshape((groups, n) + size + (og,))
            y[(slice(None),) * 2 + tuple(dst)] += cols[(slice(None),) * 2 + tuple(src)]
    return np.ascontiguousarray(y.transpose((1, 0, 2 + nd) + tuple(range(2, 2 + nd)))).reshape(
        (n, o) + out)
