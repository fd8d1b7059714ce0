"""Op database: tg.nn.functional (convolution, pooling, normalization, losses, attention).

softmax / log_softmax and the plain cross_entropy / mse_loss entries live in core.py;
the entries here named ``*_options`` exercise those ops' other arguments.  References
are written once against `xp` and stay independent of the kernels: convolutions sum one
einsum per kernel offset (transposed ones scatter-add), pools loop over output windows
with torch's bounds and divisors, losses follow torch's formulas.  Tensor-valued optional
arguments (bias, weight, pos_weight, masks) are passed positionally so that they become
tensors (float ones differentiable).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

import tracegrad as tg

from .core import (C64, C128, F32, F64, I64, ErrorInput, OpInfo, Sample, complexify, cuniform,
                   distinct, grid, ints, nonzero, positive, uniform)
from .core import (ComplexEdgeGrad, ComplexForwardAD, ComplexSecondOrder,  # point-check records
                   ComplexTorchGrad, Subgradient, Z00)

F = tg.nn.functional
CONV_TOLS = {F32: (1e-5, 1e-4), F64: (1e-10, 1e-9), C64: (1e-5, 1e-4), C128: (1e-10, 1e-9)}


def _is_jax(xp) -> bool:
    return xp is not np


def _stop_gradient(xp, x):
    if not _is_jax(xp):
        return x
    import jax
    return jax.lax.stop_gradient(x)


def _ntuple(v, n: int) -> tuple:
    return (v,) * n if isinstance(v, int) else tuple(v)


def _f(*shape) -> np.ndarray:
    return np.ones(shape, np.float32)


# ---- convolution --------------------------------------------------------------------------
def _conv_ref(xp, x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Cross-correlation as one einsum per kernel offset over strided slices of the input."""
    nd = w.ndim - 2
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = x[None]
    stride, dilation, k = _ntuple(stride, nd), _ntuple(dilation, nd), w.shape[2:]
    if padding == "valid":
        pads = [(0, 0)] * nd
    elif padding == "same":
        total = [d * (kk - 1) for kk, d in zip(k, dilation)]
        pads = [(t // 2, t - t // 2) for t in total]
    else:
        pads = [(p, p) for p in _ntuple(padding, nd)]
    xpad = xp.pad(x, [(0, 0), (0, 0)] + pads)
    n, o, cg = x.shape[0], w.shape[0], w.shape[1]
    out = [(s - d * (kk - 1) - 1) // st + 1
           for s, kk, d, st in zip(xpad.shape[2:], k, dilation, stride)]
    xg = xpad.reshape((n, groups, cg) + xpad.shape[2:])
    wg = w.reshape((groups, o // groups, cg) + k)
    total = 0
    for off in itertools.product(*map(range, k)):
        sl = tuple(slice(f * d, f * d + (m - 1) * st + 1, st)
                   for f, d, m, st in zip(off, dilation, out, stride))
        total = total + xp.einsum("ngc...,goc->ngo...", xg[(slice(None),) * 3 + sl],
                                  wg[(slice(None),) * 3 + off])
    y = total.reshape((n, o) + tuple(out))
    if bias is not None:
        y = y + bias.reshape((1, o) + (1,) * nd)
    return y[0] if unbatched else y


def _conv_transpose_ref(xp, x, w, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                        dilation=1):
    """The adjoint of conv by its definition: each input element scatter-adds w * x."""
    nd = w.ndim - 2
    unbatched = x.ndim == nd + 1
    if unbatched:
        x = x[None]
    stride, padding = _ntuple(stride, nd), _ntuple(padding, nd)
    output_padding, dilation = _ntuple(output_padding, nd), _ntuple(dilation, nd)
    n, size, k = x.shape[0], x.shape[2:], w.shape[2:]
    cin_g, cout_g = w.shape[0] // groups, w.shape[1]
    full = tuple((s - 1) * st + d * (kk - 1) + 1 + op
                 for s, st, d, kk, op in zip(size, stride, dilation, k, output_padding))
    out = xp.zeros((n, groups, cout_g) + full, dtype=x.dtype)
    xg = x.reshape((n, groups, cin_g) + size)
    wg = w.reshape((groups, cin_g, cout_g) + k)
    for off in itertools.product(*map(range, k)):
        contrib = xp.einsum("ngc...,gco->ngo...", xg, wg[(slice(None),) * 3 + off])
        sl = (slice(None),) * 3 + tuple(slice(f * d, f * d + (s - 1) * st + 1, st)
                                        for f, d, s, st in zip(off, dilation, size, stride))
        if _is_jax(xp):
            out = out.at[sl].add(contrib)
        else:
            out[sl] += contrib
    sizes = [(s - 1) * st - 2 * p + d * (kk - 1) + op + 1 for s, st, p, d, kk, op in
             zip(size, stride, padding, dilation, k, output_padding)]
    crop = tuple(slice(p, p + m) for p, m in zip(padding, sizes))
    y = out[(slice(None),) * 3 + crop].reshape((n, groups * cout_g) + tuple(sizes))
    if bias is not None:
        y = y + bias.reshape((1, -1) + (1,) * nd)
    return y[0] if unbatched else y


def _conv2d_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -1, 1)  # noqa: E731
    return [Sample((u(2, 3, 6, 6), u(4, 3, 3, 3), u(4))),
            Sample((u(2, 3, 6, 6), u(4, 3, 3, 3), None, 2, 1)),
            Sample((u(1, 3, 7, 6), u(6, 1, 3, 2), u(6)),
                   {"padding": (1, 2), "dilation": (2, 1), "groups": 3}),
            Sample((u(1, 2, 5, 5), u(3, 2, 2, 3)), {"padding": "same", "dilation": 2}),
            Sample((u(2, 5, 5), u(3, 2, 2, 2)), {"padding": "valid"}),          # unbatched
            Sample((u(1, 2, 4, 4), u(2, 2, 3, 3)), {"padding": 4, "stride": 3})]  # pad > kernel


def _conv2d_errors():
    x = _f(2, 3, 6, 6)
    return [
        ErrorInput((x, _f(4, 2, 3, 3)), ValueError,
                   ("conv2d", "f32[4,2,3,3]", "f32[2,3,6,6]", "groups=1")),
        ErrorInput((x, _f(4, 3, 7, 7)), ValueError, ("conv2d", "too small", "(7, 7)")),
        ErrorInput((x, _f(4, 3, 3, 3)), ValueError, ("conv2d", "same", "strided"),
                   {"padding": "same", "stride": 2}),
        ErrorInput((x, _f(4, 3, 3, 3)), ValueError, ("conv2d", "invalid padding", "'full'"),
                   {"padding": "full"}),
        ErrorInput((x, _f(4, 3, 3, 3)), ValueError, ("conv2d", "negative padding"),
                   {"padding": -1}),
        ErrorInput((x, _f(4, 3, 3, 3)), ValueError, ("conv2d", "non-positive stride"),
                   {"stride": 0}),
        ErrorInput((x, _f(4, 3, 3, 3)), ValueError, ("conv2d", "list of 2 values"),
                   {"padding": (1, 2, 3)}),
        ErrorInput((x.astype(np.float64), _f(4, 3, 3, 3)), TypeError,
                   ("conv2d", "f64[2,3,6,6]", "f32[4,3,3,3]", "dtype")),
        ErrorInput((x, _f(4, 3, 3, 3), _f(3)), ValueError, ("conv2d", "bias", "(4,)", "f32[3]")),
        ErrorInput((x, _f(4, 1, 3, 3)), ValueError, ("conv2d", "groups=3", "divisible"),
                   {"groups": 3}),
        ErrorInput((_f(6, 6), _f(4, 3, 3, 3)), ValueError,
                   ("conv2d", "3-D (unbatched) or 4-D (batched)", "f32[6,6]")),
    ]


def _conv1d_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -1, 1)  # noqa: E731
    return [Sample((u(2, 4, 9), u(6, 2, 3), u(6), 2, 1, 2, 2)),
            Sample((u(3, 7), u(2, 3, 4)), {"padding": "same"})]


def _conv_transpose2d_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -1, 1)  # noqa: E731
    return [Sample((u(2, 3, 4, 4), u(3, 2, 3, 3), u(2))),
            Sample((u(2, 3, 3, 4), u(3, 2, 3, 2)),
                   {"stride": 2, "padding": 1, "output_padding": 1}),
            Sample((u(1, 4, 3, 3), u(4, 3, 3, 2), u(6)),
                   {"stride": (2, 3), "padding": (2, 1), "output_padding": (1, 0), "groups": 2,
                    "dilation": (2, 1)}),
            Sample((u(1, 2, 4, 4), u(2, 2, 3, 3)), {"stride": 3, "padding": 3}),
            Sample((u(3, 2, 3), u(3, 2, 2, 2)), {"stride": 2})]                  # unbatched


def _conv_transpose2d_errors():
    x = _f(2, 3, 4, 4)
    return [
        ErrorInput((x, _f(3, 2, 3, 3)), ValueError,
                   ("conv_transpose2d", "output padding must be smaller", "stride"),
                   {"stride": 2, "output_padding": 2}),
        ErrorInput((x, _f(4, 2, 3, 3)), ValueError,
                   ("conv_transpose2d", "f32[4,2,3,3]", "f32[2,3,4,4]")),
        ErrorInput((x, _f(3, 2, 3, 3)), ValueError, ("conv_transpose2d", "too small"),
                   {"padding": 5}),
    ]


# ---- pooling ------------------------------------------------------------------------------
def _pool_out(size, k, s, p, d, ceil_mode):
    """torch's pooling_output_shape."""
    span = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = span // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_args(kernel_size, stride, padding, dilation=1):
    k = _ntuple(kernel_size, 2)
    s = k if stride is None else _ntuple(stride, 2)
    return k, s, _ntuple(padding, 2), _ntuple(dilation, 2)


def _max_pool2d_ref(xp, x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                    return_indices=False):
    """Per output position: argmax over the window's in-bounds elements in scan order."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = _pool_args(kernel_size, stride, padding, dilation)
    n, c, h, w = x.shape
    oh, ow = _pool_out(h, kh, sh, ph, dh, ceil_mode), _pool_out(w, kw, sw, pw, dw, ceil_mode)
    flat = x.reshape(n, c, h * w)
    vals, idxs = [], []
    for i, j in itertools.product(range(oh), range(ow)):
        rows = [i * sh - ph + a * dh for a in range(kh) if 0 <= i * sh - ph + a * dh < h]
        cols = [j * sw - pw + b * dw for b in range(kw) if 0 <= j * sw - pw + b * dw < w]
        pos = np.array([r * w + q for r in rows for q in cols])
        win = flat[:, :, pos]
        arg = xp.argmax(win, axis=-1)
        vals.append(xp.take_along_axis(win, arg[..., None], axis=-1)[..., 0])
        idxs.append(xp.asarray(pos)[arg])
    values = xp.stack(vals, -1).reshape(n, c, oh, ow)
    indices = xp.stack(idxs, -1).reshape(n, c, oh, ow).astype(np.int64)
    if unbatched:
        values, indices = values[0], indices[0]
    return (values, indices) if return_indices else values


def _max_pool2d_samples(rng, dtype):
    d = lambda *s: distinct(rng, s, dtype)  # noqa: E731
    ties = grid(rng, (1, 2, 4, 4), dtype)
    out = [Sample((d(2, 3, 6, 6), 2)),
           Sample((d(2, 3, 7, 6), 3, 2, 1), {"return_indices": True}),
           Sample((d(2, 2, 8, 7), (3, 2), 2, (1, 0), (1, 2)),
                  {"ceil_mode": True, "return_indices": True}),
           Sample((d(1, 2, 5, 5), 2), {"ceil_mode": True}),
           Sample((d(2, 4, 4), 2, 1), {"return_indices": True}),                  # unbatched
           Sample((ties, 2, 1), {"return_indices": True}, fd=False)]              # ties
    if dtype is F32:
        out.append(Sample((ints(rng, (1, 2, 4, 4)), 2), {"return_indices": True}, dtype=I64))
    return out


def _max_pool2d_errors():
    x = _f(2, 3, 6, 6)
    return [ErrorInput((x, 3), ValueError, ("max_pool2d", "pad should be at most half",
                                            "pad=2"), {"padding": 2}),
            ErrorInput((x, 7), ValueError, ("max_pool2d", "too small")),
            ErrorInput((x, (2, 2, 2)), ValueError, ("max_pool2d", "kernel_size")),
            ErrorInput((np.ones((2, 3, 4, 4), bool), 2), TypeError, ("max_pool", "bool"))]


def _avg_pool2d_ref(xp, x, kernel_size, stride=None, padding=0, ceil_mode=False,
                    count_include_pad=True, divisor_override=None):
    """torch's avg_pool2d CPU kernel: window sums over in-bounds elements, torch's divisor."""
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    (kh, kw), (sh, sw), (ph, pw), _ = _pool_args(kernel_size, stride, padding)
    h, w = x.shape[2:]
    oh, ow = _pool_out(h, kh, sh, ph, 1, ceil_mode), _pool_out(w, kw, sw, pw, 1, ceil_mode)
    vals = []
    for i, j in itertools.product(range(oh), range(ow)):
        h0, w0 = i * sh - ph, j * sw - pw
        h1, w1 = min(h0 + kh, h + ph), min(w0 + kw, w + pw)
        pool = (h1 - h0) * (w1 - w0)
        h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, h), min(w1, w)
        div = divisor_override or (pool if count_include_pad else (h1 - h0) * (w1 - w0))
        vals.append(xp.sum(x[:, :, h0:h1, w0:w1], axis=(2, 3)) / div)
    y = xp.stack(vals, -1).reshape(x.shape[:2] + (oh, ow))
    return y[0] if unbatched else y


def _avg_pool2d_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(2, 3, 6, 6), 2)),
            Sample((u(2, 3, 7, 6), 3, 2, 1)),
            Sample((u(2, 3, 7, 6), 3, 2, 1), {"count_include_pad": False}),
            Sample((u(1, 3, 8, 6), 3, 2, 1), {"ceil_mode": True}),
            Sample((u(1, 3, 8, 6), (3, 2), 2, 1),
                   {"ceil_mode": True, "count_include_pad": False}),
            Sample((u(1, 2, 4, 4), 2), {"divisor_override": 3}),
            Sample((u(2, 5, 5), 2, 1))]                                           # unbatched


def _avg_pool2d_errors():
    return [ErrorInput((_f(2, 3, 6, 6), 3), ValueError, ("avg_pool2d", "pad should be"),
                       {"padding": 2}),
            ErrorInput((np.ones((1, 1, 4, 4), np.int64), 2), NotImplementedError,
                       ("avg_pool2d", "integer", "i64[1,1,4,4]"))]


def _adaptive_avg_pool2d_ref(xp, x, output_size):
    unbatched = x.ndim == 3
    if unbatched:
        x = x[None]
    h, w = x.shape[2:]
    oh, ow = (output_size, output_size) if isinstance(output_size, int) else output_size
    oh, ow = oh or h, ow or w
    vals = []
    for i, j in itertools.product(range(oh), range(ow)):
        h0, h1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        w0, w1 = (j * w) // ow, -((-(j + 1) * w) // ow)
        vals.append(xp.mean(x[:, :, h0:h1, w0:w1], axis=(2, 3)))
    y = xp.stack(vals, -1).reshape(x.shape[:2] + (oh, ow))
    return y[0] if unbatched else y


def _adaptive_avg_pool2d_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(2, 3, 6, 6), (3, 2))), Sample((u(2, 3, 7, 6), (4, 5))),
            Sample((u(1, 2, 5, 3), (None, 1))), Sample((u(2, 5, 3), 2))]


CONV_OPS = [
    # complex: conv does not conjugate (torch); each gradient conjugates the other operand
    OpInfo("conv2d", F.conv2d, _conv_ref, _conv2d_samples, tols=CONV_TOLS,
           error_inputs=_conv2d_errors, covers=("conv2d", "conv"), executor_samples=(0, 2),
           complex_samples=(2, 0)),
    OpInfo("conv1d", F.conv1d, _conv_ref, _conv1d_samples, tols=CONV_TOLS, complex_samples=2,
           error_inputs=lambda: [ErrorInput((_f(1, 2, 3, 6), _f(4, 3, 3)), ValueError,
                                            ("conv1d", "2-D (unbatched)", "f32[1,2,3,6]"))],
           point_checks=(
               ComplexTorchGrad("conv1d",
                                lambda a, b: F.conv1d(a.reshape(1, 1, 3),
                                                      b[:2].reshape(1, 1, 2)).reshape(2),
                                2,
                                [[0.5 + 0.25j, 0.96 - 0.92j, 0.46 + 0.09j],
                                 [-0.09 - 2.69j, -0.66 + 0.42j, 0j]]),
               ComplexSecondOrder("conv1d",
                                  lambda z, w: F.conv1d(z.reshape(1, 1, 3),
                                                        (z * w)[:2].reshape(1, 1, 2))),
               ComplexForwardAD("conv1d",
                                lambda z: F.conv1d(z.reshape(1, 1, 3),
                                                   z[:2].reshape(1, 1, 2)).reshape(2),
                                lambda z: np.array([z[0] * z[0] + z[1] * z[1],
                                                    z[1] * z[0] + z[2] * z[1]])),
           )),
    OpInfo("conv_transpose2d", F.conv_transpose2d, _conv_transpose_ref,
           _conv_transpose2d_samples, tols=CONV_TOLS, error_inputs=_conv_transpose2d_errors,
           executor_samples=(2,), complex_samples=(1, 4, 2),
           point_checks=(
               ComplexTorchGrad("conv_transpose2d",
                                lambda a, b: F.conv_transpose2d(a.reshape(1, 1, 1, 3),
                                            b[:2].reshape(1, 1, 1, 2)).reshape(4)[:3], 2,
                                [[0.96 + 0.34j, -0.33 + 1.73j, -0.61 + 0.02j],
                                 [-1.68 - 2.76j, 1.35 - 0.69j, 0j]]),
           )),
    OpInfo("max_pool2d", F.max_pool2d, _max_pool2d_ref, _max_pool2d_samples,
           error_inputs=_max_pool2d_errors, covers=("max_pool2d", "max_pool"),
           executor_samples=(2,),
           notes="ties: the whole gradient goes to the first maximum in the window's scan "
                 "order (row by row), as torch",
           point_checks=(
               Subgradient("max_pool2d_ties", "nn.functional.max_pool2d",
                           lambda x: F.max_pool2d(x, 2), ([[[[1.0, 1.0], [1.0, 0.0]]]],),
                           ([[[[1.0, 0.0], [0.0, 0.0]]]],),
                           "a tied window gives all to the first maximum"),
           )),
    OpInfo("avg_pool2d", F.avg_pool2d, _avg_pool2d_ref, _avg_pool2d_samples,
           error_inputs=_avg_pool2d_errors, executor_samples=(4,)),
    OpInfo("adaptive_avg_pool2d", F.adaptive_avg_pool2d, _adaptive_avg_pool2d_ref,
           _adaptive_avg_pool2d_samples, executor_samples=(1,),
           error_inputs=lambda: [ErrorInput((_f(2, 3, 4, 4), (1, 2, 3)), ValueError,
                                            ("adaptive_avg_pool2d", "output_size"))]),
]


# ---- losses -------------------------------------------------------------------------------
def _log_softmax(xp, x, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


def _reduce(xp, loss, reduction):
    return {"none": loss, "sum": xp.sum(loss), "mean": xp.mean(loss)}[reduction]


def _nll_ref(xp, logp, t, w=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    """torch's nll_loss (+ cross_entropy's label-smoothing term) on log-probabilities."""
    unbatched = logp.ndim == 1
    if unbatched:
        logp, t = logp[None], t[None]
    c = logp.shape[1]
    valid = t != ignore_index
    safe = np.where(valid, t, 0)
    picked = xp.take_along_axis(logp, safe[:, None], axis=1)[:, 0]
    wt = (1.0 if w is None else w[safe]) * valid
    wc = 1.0 if w is None else w.reshape((1, c) + (1,) * (logp.ndim - 2))
    nll, smooth = -picked * wt, -xp.sum(logp * wc, axis=1) * valid
    if reduction == "mean":
        nll, smooth = xp.sum(nll) / xp.sum(wt), xp.sum(smooth) / xp.sum(wt)
    elif reduction == "sum":
        nll, smooth = xp.sum(nll), xp.sum(smooth)
    elif unbatched:
        nll, smooth = nll[0], smooth[0]
    return (1 - label_smoothing) * nll + label_smoothing / c * smooth


def _ce_ref(xp, x, t, w=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    cdim = 0 if x.ndim == 1 else 1
    logp = _log_softmax(xp, x, cdim)
    if t.shape != x.shape:
        return _nll_ref(xp, logp, t, w, ignore_index, reduction, label_smoothing)
    c = x.shape[cdim]
    t = t * (1 - label_smoothing) + label_smoothing / c
    wc = 1.0 if w is None else w.reshape(tuple(c if i == cdim else 1 for i in range(x.ndim)))
    loss = -xp.sum(logp * t * wc, axis=cdim)
    return xp.sum(loss) / (x.size // c) if reduction == "mean" else _reduce(xp, loss, reduction)


def _ce_fn(x, t, w=None, **kw):
    return F.cross_entropy(x, t, weight=w, **kw)


def _ce_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -3, 3)  # noqa: E731
    t = ints(rng, (6,), 0, 5)
    t[1] = 2                                            # ignore_index=2 below: ignored rows
    probs = rng.dirichlet(np.ones(5), 4).astype(dtype.numpy)
    return [Sample((u(6, 5), t, positive(rng, (5,), dtype)),
                   {"ignore_index": 2, "label_smoothing": 0.2}),
            Sample((u(6, 5), t, positive(rng, (5,), dtype)),
                   {"ignore_index": 2, "label_smoothing": 0.2, "reduction": "none"}),
            Sample((u(6, 5), t), {"reduction": "sum", "label_smoothing": 0.1}),
            Sample((u(2, 4, 3), ints(rng, (2, 3), 0, 4))),                   # (N, C, d)
            Sample((u(2, 4, 3, 2), ints(rng, (2, 3, 2), 0, 4)), {"label_smoothing": 0.1}),
            Sample((u(4,), np.array(2))),                                    # unbatched
            Sample((u(4, 5), probs, positive(rng, (5,), dtype)), {"label_smoothing": 0.25}),
            Sample((u(2, 5, 3), rng.dirichlet(np.ones(5), (2, 3)).transpose(0, 2, 1)
                    .astype(dtype.numpy)), {"reduction": "none"})]


def _ce_errors():
    x = _f(3, 4)
    return [ErrorInput((x, np.array([0, 1, 2])), ValueError, ("cross_entropy", "foo",
                                                              "reduction"), {"reduction": "foo"}),
            ErrorInput((x, np.array([0, 1, 2]), _f(3)), ValueError,
                       ("cross_entropy", "4 classes", "f32[3]")),
            ErrorInput((x, np.array([0, 1, 2]), np.ones(4)), TypeError,
                       ("cross_entropy", "f64[4]", "dtype")),
            ErrorInput((x, np.array([0, 1, 2])), ValueError, ("cross_entropy", "label_smoothing",
                                                              "1.5"), {"label_smoothing": 1.5}),
            ErrorInput((x, np.full((3, 4), 0.25, np.float32)), NotImplementedError,
                       ("cross_entropy", "ignore_index"), {"ignore_index": 1}),
            ErrorInput((x, np.array([0, 1, 2], np.int32)), TypeError,
                       ("cross_entropy", "int32")),
            ErrorInput((x, np.zeros((3, 4), np.int64)), TypeError,
                       ("cross_entropy", "probabilities", "i64[3,4]"))]


def _nll_fn(x, t, w=None, **kw):
    return F.nll_loss(x, t, weight=w, **kw)


def _nll_samples(rng, dtype):
    logp = lambda *s: uniform(rng, s, dtype, -3, 0)  # noqa: E731
    t = ints(rng, (5,), 0, 3)
    t[0] = 1
    return [Sample((logp(5, 3), t, positive(rng, (3,), dtype))),
            Sample((logp(5, 3), t), {"ignore_index": 1, "reduction": "sum"}),
            Sample((logp(2, 3, 4), ints(rng, (2, 4), 0, 3)), {"reduction": "none"})]


def _nll_errors():
    x = _f(3, 4)
    return [ErrorInput((x, _f(3, 4)), TypeError, ("nll_loss", "class indices", "float32")),
            ErrorInput((x, np.zeros((3, 2), np.int64)), ValueError,
                       ("nll_loss", "(3, 4)", "(3, 2)")),
            ErrorInput((x, np.array([0, 5, 1])), IndexError, ("nll_loss", "Target 5",
                                                              "out of bounds"))]


def _pointwise_samples(extra_kwargs=(), weight=False):
    def samples(rng, dtype):
        u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
        out = [Sample((u(3, 4), u(3, 4)), dict(extra_kwargs)),
               Sample((u(3, 4), u(4)), {"reduction": "none", **dict(extra_kwargs)}),
               Sample((u(2, 3), u(2, 3)), {"reduction": "sum", **dict(extra_kwargs)})]
        if weight:
            out.append(Sample((u(3, 4), u(3, 4), positive(rng, (3, 4), dtype)),
                              dict(extra_kwargs)))
        return out
    return samples


def _weighted_ref(loss_fn, weighted_mean=True):
    def ref(xp, x, y, w=None, reduction="mean", **kw):
        loss = loss_fn(xp, x - y, **kw)
        if w is None:
            return _reduce(xp, loss, reduction)
        if reduction == "mean" and weighted_mean:
            return xp.sum(loss * w) / xp.sum(w)
        return _reduce(xp, loss * w, reduction)
    return ref


def _smooth_l1(xp, d, beta=1.0):
    if beta == 0:
        return d * xp.sign(d)
    a = d * xp.sign(d)
    return xp.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


def _huber(xp, d, delta=1.0):
    a = d * xp.sign(d)
    return xp.where(a < delta, 0.5 * d * d, delta * (a - 0.5 * delta))


def _l1_samples(rng, dtype):
    out = _pointwise_samples(weight=True)(rng, dtype)
    x = uniform(rng, (5,), dtype)
    y = x.copy()
    y[::2] += 1.0
    out.append(Sample((x, y), fd=False))               # d = 0: gradient 0 (sign), as torch
    return out


def _l1(xp, d):
    # torch's subgradient 0 at d == 0: sign(d) for real, sgn(d) = d / |d| for complex
    if d.dtype.kind != "c":
        return d * xp.sign(d)
    zero = d == 0
    return xp.where(zero, 0.0, xp.abs(xp.where(zero, 1.0, d)))


def _l1_complex(rng, dtype):
    """|input - target| is real (float32 for complex64): plain, broadcast, a real weight, and
    input == target at some entries (gradient 0 there)."""
    real = dtype.to_real()
    x = cuniform(rng, (5,), dtype)
    y = x.copy()
    y[::2] += 1.0 - 0.5j
    return complexify(_pointwise_samples(), 2, real_out=True)(rng, dtype) + [
        Sample((cuniform(rng, (3, 4), dtype), cuniform(rng, (3, 4), dtype),
                positive(rng, (3, 4), real)), dtype=real),
        Sample((x, y), dtype=real, fd=False)]


def _loss_errors(name, weight_arg=True):
    x = _f(3, 4)
    out = [ErrorInput((x, _f(5)), ValueError, (name, "f32[3,4]", "f32[5]")),
           ErrorInput((x, x), ValueError, (name, "bad", "reduction"), {"reduction": "bad"})]
    if weight_arg:
        out.append(ErrorInput((x, x, _f(4)), ValueError, (name, "Weights and input")))
    return out


def _bce_ref(xp, x, t, w=None, reduction="mean"):
    loss = -(t * xp.maximum(xp.log(x), -100.0) + (1 - t) * xp.maximum(xp.log(1 - x), -100.0))
    return _reduce(xp, loss if w is None else loss * w, reduction)


def _bce_samples(rng, dtype):
    p = lambda *s: uniform(rng, s, dtype, 0.05, 0.95)  # noqa: E731
    return [Sample((p(3, 4), p(3, 4))),
            Sample((p(3, 4), p(3, 4), positive(rng, (4,), dtype)), {"reduction": "none"}),
            Sample((p(5,), (rng.random(5) > 0.5).astype(dtype.numpy)), {"reduction": "sum"})]


def _bce_logits_ref(xp, x, t, w=None, pos_weight=None, reduction="mean"):
    """-(pw t log sigmoid(x) + (1 - t) log sigmoid(-x)), log sigmoid(x) = -logaddexp(0, -x)."""
    pw = 1.0 if pos_weight is None else pos_weight
    loss = pw * t * xp.logaddexp(0.0, -x) + (1 - t) * xp.logaddexp(0.0, x)
    return _reduce(xp, loss if w is None else loss * w, reduction)


def _bce_logits_fn(x, t, w=None, pw=None, **kw):
    return F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw, **kw)


def _bce_logits_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -3, 3)  # noqa: E731
    p = lambda *s: uniform(rng, s, dtype, 0.05, 0.95)  # noqa: E731
    big = np.array([-40.0, -20.0, 0.0, 20.0, 40.0], dtype.numpy)      # no overflow
    return [Sample((u(3, 4), p(3, 4))),
            Sample((u(3, 4), p(3, 4), positive(rng, (3, 4), dtype), positive(rng, (4,), dtype)),
                   {"reduction": "sum"}),
            Sample((big, p(5)), {"reduction": "none"}),
            Sample((u(2, 3), p(2, 3), None, positive(rng, (3,), dtype)))]


def _bce_errors(name):
    x = np.full((3,), 0.5, np.float32)
    out = [ErrorInput((x, np.full((4,), 0.5, np.float32)), ValueError,
                      (name, "(4,)", "(3,)"))]
    if name == "binary_cross_entropy":
        out.append(ErrorInput((x + 1, x), ValueError, (name, "between 0 and 1")))
    return out


def _kl_ref(xp, x, t, reduction="mean", log_target=False):
    if log_target:
        loss = xp.exp(t) * (t - x)
    else:
        loss = t * xp.log(t) - t * x              # targets > 0 here; 0 log 0 = 0 in the op
    if reduction == "batchmean":
        return xp.sum(loss) / x.shape[0]
    return _reduce(xp, loss, reduction)


def _kl_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    p = lambda *s: uniform(rng, s, dtype, 0.05, 1.0)  # noqa: E731
    return [Sample((u(3, 4), p(3, 4)), {"reduction": "batchmean"}),
            Sample((u(3, 4), p(3, 4))),
            Sample((u(3, 4), u(3, 4)), {"reduction": "sum", "log_target": True}),
            Sample((u(2, 3), p(3)), {"reduction": "none"})]


LOSS_OPS = [
    OpInfo("cross_entropy_options", _ce_fn, _ce_ref, _ce_samples, error_inputs=_ce_errors,
           covers=("cross_entropy",), executor_samples=(0, 6),
           notes="class indices or probabilities; a batch whose targets are all ignore_index "
                 "gives NaN with gradient 0, as torch"),
    OpInfo("nll_loss", _nll_fn, lambda xp, *a, **kw: _nll_ref(xp, *a, **kw), _nll_samples,
           error_inputs=_nll_errors),
    OpInfo("mse_loss_options", lambda x, y, w=None, **kw: F.mse_loss(x, y, weight=w, **kw),
           _weighted_ref(lambda xp, d: d * d), _pointwise_samples(weight=True),
           error_inputs=lambda: _loss_errors("mse_loss"), covers=("mse_loss",)),
    OpInfo("l1_loss", lambda x, y, w=None, **kw: F.l1_loss(x, y, weight=w, **kw),
           _weighted_ref(_l1), _l1_samples, complex_samples=_l1_complex,
           error_inputs=lambda: _loss_errors("l1_loss"),
           notes="gradient 0 where input == target, as torch",
           point_checks=(
               Subgradient("l1_loss_tie", "nn.functional.l1_loss",
                           lambda x, y: F.l1_loss(x, y, reduction="sum"), ([1.0, 2.0], [1.0, 1.0]),
                           ([0.0, 1.0], [0.0, -1.0]), "0 where input == target"),
               ComplexTorchGrad("l1_loss", lambda a, b: F.l1_loss(a, b).reshape(1), 2,
                                [[0.093333333333 + 0.32j, -0.331050201441 - 0.038947082522j,
                                  0.2 - 0.266666666667j], [-0.093333333333 - 0.32j,
                                                           0.331050201441 + 0.038947082522j,
                                                           -0.2 + 0.266666666667j]]),
               ComplexEdgeGrad("l1_loss_equal",
                               lambda z: F.l1_loss(z, tg.tensor(np.array([1 + 1j, 2j]))),
                               [1 + 1j, 2j], [0, 0]),
           )),
    OpInfo("smooth_l1_loss", F.smooth_l1_loss, _weighted_ref(_smooth_l1),
           lambda rng, dtype: (_pointwise_samples((("beta", 0.5),))(rng, dtype)
                               + [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype)),
                                         {"beta": 0.0, "reduction": "none"})]),
           error_inputs=lambda: _loss_errors("smooth_l1_loss", False) + [
               ErrorInput((_f(3), _f(3)), ValueError, ("smooth_l1_loss", "negative", "beta")
                          , {"beta": -1.0})],
           notes="beta = 0 is l1_loss (gradient 0 where input == target)",
           point_checks=(
               Subgradient("smooth_l1_loss_tie", "nn.functional.smooth_l1_loss",
                           lambda x, y: F.smooth_l1_loss(x, y, reduction="sum"),
                           ([1.0, 3.0], [1.0, 2.0]), ([0.0, 1.0], [0.0, -1.0]),
                           "0 at input == target, 1 at |diff| == beta"),
           )),
    OpInfo("huber_loss", lambda x, y, w=None, **kw: F.huber_loss(x, y, weight=w, **kw),
           _weighted_ref(_huber, weighted_mean=False), _pointwise_samples((("delta", 0.7),), True),
           error_inputs=lambda: _loss_errors("huber_loss") + [
               ErrorInput((_f(3), _f(3)), ValueError, ("huber_loss", "non-positive", "delta"),
                          {"delta": 0.0})],
           notes="with weight, reduction='mean' is the plain mean of weight * loss, as torch"),
    OpInfo("binary_cross_entropy",
           lambda x, t, w=None, **kw: F.binary_cross_entropy(x, t, w, **kw), _bce_ref,
           _bce_samples, error_inputs=lambda: _bce_errors("binary_cross_entropy"),
           notes="each log is clamped at -100 (torch): finite loss and gradient at 0 and 1"),
    OpInfo("binary_cross_entropy_with_logits", _bce_logits_fn, _bce_logits_ref,
           _bce_logits_samples, error_inputs=lambda: _bce_errors("binary_cross_entropy_with_logits"),
           executor_samples=(1,)),
    OpInfo("kl_div", F.kl_div, _kl_ref, _kl_samples,
           error_inputs=lambda: [ErrorInput((_f(3), _f(3)), ValueError, ("kl_div", "reduction"),
                                            {"reduction": "avg"})],
           notes="gradient w.r.t. a zero target is NaN (0 / 0 in xlogy), as torch"),
]


# ---- similarity, normalization, linear, embedding, one_hot, attention ------------------------
def _cosine_ref(xp, x1, x2, dim=1, eps=1e-8):
    x1, x2 = xp.broadcast_arrays(x1, x2)
    n1 = xp.maximum(xp.sqrt(xp.sum(x1 * x1, axis=dim, keepdims=True)), eps)
    n2 = xp.maximum(xp.sqrt(xp.sum(x2 * x2, axis=dim, keepdims=True)), eps)
    return xp.sum((x1 / n1) * (x2 / n2), axis=dim)


def _normalize_ref(xp, x, p=2.0, dim=1, eps=1e-12):
    cplx = x.dtype.kind == "c"   # complex samples stay away from 0 (|z| is real)
    if p == 2:     # sqrt guarded at 0: torch's norm has gradient 0 at a zero slice
        sq = xp.real(x) ** 2 + xp.imag(x) ** 2 if cplx else x * x
        ss = xp.sum(sq, axis=dim, keepdims=True)
        n = xp.where(ss > 0, xp.sqrt(xp.where(ss > 0, ss, 1.0)), 0.0)
    else:
        a = xp.abs(x) if cplx else x * xp.sign(x)
        n = xp.sum(a ** p, axis=dim, keepdims=True) ** (1.0 / p)
    return x / xp.maximum(n, eps)


def _normalize_samples(rng, dtype):
    x = nonzero(rng, (3, 4), dtype)
    z = uniform(rng, (3, 4), dtype)
    z[0] = 0.0                                        # a zero row: output 0, gradient 1/eps
    return [Sample((x,)), Sample((x, 1.0, 0)), Sample((x, 3, -1)),
            Sample((z,), {"eps": 1e-3}, fd=False)]


def _standardize(xp, x, axes, eps):
    mean = xp.mean(x, axis=axes, keepdims=True)
    var = xp.mean((x - mean) ** 2, axis=axes, keepdims=True)
    return (x - mean) / xp.sqrt(var + eps)


def _layer_norm_ref(xp, x, shape, w=None, b=None, eps=1e-5):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    y = _standardize(xp, x, tuple(range(x.ndim - len(shape), x.ndim)), eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


def _rms_norm_ref(xp, x, shape, w=None, eps=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    eps = float(np.finfo(np.float32 if x.dtype != np.float64 else np.float64).eps) \
        if eps is None else eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    y = x / xp.sqrt(xp.mean(x * x, axis=axes, keepdims=True) + eps)
    return y * (1 if w is None else w)


def _group_norm_ref(xp, x, groups, w=None, b=None, eps=1e-5):
    y = _standardize(xp, x.reshape(x.shape[0], groups, -1), (2,), eps).reshape(x.shape)
    view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(view)) + (0 if b is None else b.reshape(view))


def _batch_norm_ref(xp, x, w=None, b=None, running_mean=None, running_var=None,
                    training=False, eps=1e-5):
    view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        y = _standardize(xp, x, (0,) + tuple(range(2, x.ndim)), eps)
    else:
        y = (x - running_mean.reshape(view)) / xp.sqrt(running_var.reshape(view) + eps)
    return y * (1 if w is None else w.reshape(view)) + (0 if b is None else b.reshape(view))


def _batch_norm_fn(x, w=None, b=None, running_mean=None, running_var=None, **kw):
    """Running statistics come as arrays (constants: torch does not differentiate them);
    training samples update fresh copies."""
    return F.batch_norm(x, tg.tensor(running_mean), tg.tensor(running_var), w, b, **kw)


def _norm_samples(kind):
    def samples(rng, dtype):
        u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
        if kind == "layer":
            return [Sample((u(2, 3, 4), (4,), u(4), u(4))), Sample((u(2, 3, 4), (3, 4)),
                                                                  {"eps": 1e-3}),
                    Sample((u(5,), 5, u(5)))]
        if kind == "rms":
            return [Sample((u(2, 3, 4), (4,), u(4))), Sample((u(2, 3, 4), (3, 4)), {"eps": 0.1})]
        if kind == "group":
            return [Sample((u(2, 6, 3), 2, u(6), u(6))), Sample((u(2, 6, 2, 2), 3)),
                    Sample((u(3, 4), 4, None, u(4)))]
        stats = {"running_mean": uniform(rng, (3,), dtype), "running_var": positive(rng, (3,), dtype)}
        return [Sample((u(4, 3, 2, 2), u(3), u(3)), {"training": True, **stats}),
                Sample((u(4, 3, 2), u(3), u(3)), {"training": False, **stats}),
                Sample((u(5, 3),), {"training": True, "eps": 1e-3, **stats})]
    return samples


def _norm_errors(name):
    x = _f(2, 6, 4)
    if name == "layer_norm":
        return [ErrorInput((x, (3,)), ValueError, ("layer_norm", "normalized_shape=[3]",
                                                   "f32[2,6,4]")),
                ErrorInput((x, (4,), _f(3)), ValueError, ("layer_norm", "weight", "f32[3]"))]
    if name == "group_norm":
        return [ErrorInput((x, 4), ValueError, ("group_norm", "divisible", "num_groups=4")),
                ErrorInput((x, 3, _f(3)), ValueError, ("group_norm", "weight", "f32[3]"))]
    if name == "rms_norm":
        return [ErrorInput((x, (3,)), ValueError, ("rms_norm", "normalized_shape=[3]"))]
    stats = {"running_mean": _f(3), "running_var": _f(3)}
    return [ErrorInput((_f(1, 3),), ValueError, ("batch_norm", "more than 1 value per channel"),
                       {"training": True, **stats}),
            ErrorInput((_f(2, 3),), ValueError, ("batch_norm", "running_mean", "3 elements"),
                       {"running_mean": _f(4), "running_var": _f(4)})]


def _linear_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype)  # noqa: E731
    return [Sample((u(2, 3), u(4, 3), u(4))), Sample((u(2, 5, 3), u(4, 3))),
            Sample((u(3,), u(4, 3), u(4))), Sample((u(2, 3), u(3)))]


def _linear_ref(xp, x, w, b=None):
    y = xp.matmul(x, w.T if w.ndim == 2 else w)
    return y if b is None else y + b


def _embedding_ref(xp, idx, w, padding_idx=None):
    if padding_idx is not None:       # torch: the padding row gets no gradient
        keep = (np.arange(w.shape[0]) != padding_idx % w.shape[0])[:, None]
        w = xp.where(keep, w, _stop_gradient(xp, w))
    return w[idx]


def _embedding_samples(rng, dtype):
    w = uniform(rng, (5, 3), dtype)
    idx = ints(rng, (2, 4), 0, 5)
    idx[0, :2] = 3                                      # repeated rows accumulate
    # the padding row's gradient is 0 by design (not the derivative): no finite differences
    return [Sample((idx, w)), Sample((idx, w), {"padding_idx": 3}, fd=False),
            Sample((ints(rng, (4,), 0, 5), w), {"padding_idx": -2}, fd=False),
            Sample((np.array(1), w))]


def _embedding_errors():
    w = _f(3, 2)
    return [ErrorInput((np.array([1.0]), w), TypeError, ("embedding", "int64", "f64[1]")),
            ErrorInput((np.array([3]), w), IndexError, ("embedding", "out of bounds")),
            ErrorInput((np.array([1]), w), ValueError, ("embedding", "padding_idx", "3"),
                       {"padding_idx": 3}),
            ErrorInput((np.array([1]), w), NotImplementedError, ("embedding", "max_norm"),
                       {"max_norm": 1.0})]


def _one_hot_ref(xp, t, num_classes=-1):
    n = int(t.max()) + 1 if num_classes == -1 else num_classes
    return (t[..., None] == np.arange(n)).astype(np.int64)


def _one_hot_errors():
    return [ErrorInput((np.array([1, 3]), 3), ValueError, ("one_hot", "smaller than num_classes")),
            ErrorInput((np.array([1, -1]), 3), ValueError, ("one_hot", "non-negative")),
            ErrorInput((np.array([1.0]), 3), TypeError, ("one_hot", "int64", "f64[1]")),
            ErrorInput((np.zeros((0,), np.int64),), ValueError, ("one_hot", "empty"))]


def _sdpa_ref(xp, q, k, v, mask=None, is_causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = xp.matmul(q, xp.swapaxes(k, -1, -2)) * scale
    if is_causal:
        mask = np.tril(np.ones((q.shape[-2], k.shape[-2]), bool))
    if mask is not None:
        s = xp.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    e = xp.exp(s - xp.max(s, axis=-1, keepdims=True))
    return xp.matmul(e / xp.sum(e, axis=-1, keepdims=True), v)


def _sdpa_fn(q, k, v, mask=None, **kw):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, **kw)


def _sdpa_samples(rng, dtype):
    u = lambda *s: uniform(rng, s, dtype, -1, 1)  # noqa: E731
    mask = rng.random((3, 5)) > 0.4
    mask[:, 0] = True                                   # every query attends somewhere
    return [Sample((u(2, 3, 4), u(2, 5, 4), u(2, 5, 6))),
            Sample((u(2, 2, 3, 4), u(2, 2, 5, 4), u(2, 2, 5, 6)),
                   {"is_causal": True, "scale": 0.3}),
            Sample((u(2, 3, 4), u(2, 5, 4), u(2, 5, 6), mask)),
            Sample((u(2, 3, 4), u(2, 5, 4), u(2, 5, 6), u(3, 5)))]


def _sdpa_errors():
    q, k = _f(2, 3, 4), _f(2, 5, 4)
    return [ErrorInput((q, k, _f(2, 5, 6), np.ones((3, 5), bool)), ValueError,
                       ("scaled_dot_product_attention", "is_causal"), {"is_causal": True}),
            ErrorInput((q, _f(2, 5, 3), _f(2, 5, 6)), ValueError,
                       ("scaled_dot_product_attention", "f32[2,5,3]")),
            ErrorInput((q, k, _f(2, 5, 6)), ValueError,
                       ("scaled_dot_product_attention", "dropout_p", "1.5"), {"dropout_p": 1.5}),
            ErrorInput((q, k, _f(2, 5, 6), np.ones((3, 5))), TypeError,
                       ("scaled_dot_product_attention", "attn_mask", "f64[3,5]"))]


OTHER_OPS = [
    OpInfo("cosine_similarity", F.cosine_similarity, _cosine_ref,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3, 4), dtype))),
                               Sample((uniform(rng, (2, 3, 4), dtype), uniform(rng, (4,), dtype)),
                                      {"dim": -1})],
           error_inputs=lambda: [ErrorInput((_f(3, 4), _f(5)), ValueError,
                                            ("cosine_similarity", "f32[3,4]", "f32[5]"))],
           notes="norms below eps are clamped to eps with gradient 0 there (torch clamps "
                 "under no_grad and keeps the norm's gradient)"),
    OpInfo("normalize", F.normalize, _normalize_ref, _normalize_samples,
           complex_samples=(0, 2),
           notes="a zero slice gives 0 with gradient 1 / eps (the clamped norm has gradient 0),"
                 " as torch",
           point_checks=(
               ComplexTorchGrad("normalize", lambda a: F.normalize(a, dim=0), 1,
                                [[0.466828644304 - 0.008565663198j,
                                  0.068097022426 + 0.102359675219j,
                                  -0.200864801999 + 0.277955770783j]]),
               ComplexEdgeGrad("normalize_at_0_abs",
                               lambda z: F.normalize(z.reshape(1, 2), dim=1).abs().sum(), Z00,
                               [0, 0]),
               # 1 / eps
               ComplexEdgeGrad("normalize_at_0_real",
                               lambda z: F.normalize(z.reshape(1, 2), dim=1).real.sum(), Z00,
                               [1e12, 1e12]),
           )),
    OpInfo("layer_norm", F.layer_norm, _layer_norm_ref, _norm_samples("layer"),
           error_inputs=lambda: _norm_errors("layer_norm"),
           low_precision={tg.bfloat16: (6e-2, 6e-2)}),
    OpInfo("rms_norm", F.rms_norm, _rms_norm_ref, _norm_samples("rms"),
           error_inputs=lambda: _norm_errors("rms_norm"),
           notes="eps=None: the machine epsilon of float32 (float64 inputs: of float64), as "
                 "torch computes half inputs in float32"),
    OpInfo("group_norm", F.group_norm, _group_norm_ref, _norm_samples("group"),
           error_inputs=lambda: _norm_errors("group_norm")),
    OpInfo("batch_norm", _batch_norm_fn, _batch_norm_ref, _norm_samples("batch"),
           error_inputs=lambda: _norm_errors("batch_norm"), executor_samples=(0, 1),
           notes="training: batch statistics (biased variance); eval: running statistics"),
    OpInfo("linear", F.linear, _linear_ref, _linear_samples,
           error_inputs=lambda: [ErrorInput((_f(2, 3), _f(4, 3), _f(5)), ValueError,
                                            ("linear", "bias", "f32[5]"))], complex_samples=2),
    OpInfo("embedding", F.embedding, _embedding_ref, _embedding_samples,
           error_inputs=_embedding_errors, executor_samples=(1,),
           notes="the padding_idx row gets no gradient; repeated indices accumulate, as torch"),
    OpInfo("one_hot", F.one_hot, _one_hot_ref,
           lambda rng, dtype: [Sample((ints(rng, (2, 3), 0, 5), 6)),
                               Sample((ints(rng, (4,), 0, 5),)),
                               Sample((np.array(2), 4))],
           differentiable=False, out_dtype=I64, dtypes=(F32,), error_inputs=_one_hot_errors),
    OpInfo("scaled_dot_product_attention", _sdpa_fn, _sdpa_ref, _sdpa_samples,
           error_inputs=_sdpa_errors, executor_samples=(2,)),
]

OPS = CONV_OPS + LOSS_OPS + OTHER_OPS
