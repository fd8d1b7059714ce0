"""Convolution and pooling: the N-d `conv` and `max_pool` primitives, torch's functional ops on top.

`conv` follows ``jax.lax.conv_general_dilated`` with NCHW input and OIHW
weight: window strides, explicit ``(lo, hi)`` padding per spatial dim
(negative = crop), input (lhs) dilation, kernel (rhs) dilation and feature
groups.  Its VJP is two more convs, as in jax: the input gradient is a
transposed conv (the cotangent dilated by the stride, correlated with the
flipped, regrouped weight) and the weight gradient a conv of the input with
the cotangent as kernel, so gradients of every order are convs again.
`max_pool` returns values and torch's flat indices; its VJP scatters the
cotangent to those indices.  conv1d/conv2d/conv_transpose2d, the pools and
adaptive_avg_pool2d are decompositions.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import attr_kinds as K
from .. import types as T
from ..builder import with_location
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_LOWER, COMPLEX, INTERNAL, REQUIRED, defcomposite, defop
from . import _xla_handoff as handoff
from ._common import bilinear_jvp, conj_if_complex, zero_slope_dep
from ._conv_gemm import (_conv_col2im, _conv_im2col, _dilated, _out_size, _pad_np,
                         _prefer_col2im)
from ._cost import CONV, POOL


def _window(offset, dilation, stride, out):
    """Slices picking, for one kernel offset, the input element of every output position."""
    return tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                 for o, d, s, n in zip(offset, dilation, stride, out))


def _ttype(x) -> T.TensorType:
    return T.TensorType(tuple(x.shape), x.dtype)


def _fail(ops, e: Exception) -> Exception:
    return with_location(e, ops.location())


# ---- conv ---------------------------------------------------------------------------------
def _conv_infer(types, *, stride, padding, dilation, lhs_dilation, groups):
    x, w = types
    nd = x.ndim - 2
    if nd < 1 or w.ndim != x.ndim:
        raise ShapeError(f"conv: expected input (N, C, *spatial) and weight (O, C/groups, *kernel) "
                         f"of one rank, got {x} and {w}")
    if not len(stride) == len(padding) == len(dilation) == len(lhs_dilation) == nd:
        raise ValueError(f"conv: stride, padding, dilation and lhs_dilation need {nd} entries "
                         f"for {x}")
    if x.dtype is not w.dtype or not x.dtype.is_differentiable:
        raise DTypeError(f"conv: input and weight must share one floating-point or complex "
                         f"dtype, got {x} and {w}")
    if groups < 1 or w.shape[0] % groups or x.shape[1] != w.shape[1] * groups:
        raise ShapeError(f"conv: weight {w} with groups={groups} does not fit input {x}")
    out = tuple(_out_size(s, p, k, st, d, ld) for s, p, k, st, d, ld in
                zip(x.shape[2:], padding, w.shape[2:], stride, dilation, lhs_dilation))
    if any(o < 1 for o in out):
        raise ShapeError(f"conv: input {x} (padding {padding}) is smaller than the dilated "
                         f"kernel of weight {w}")
    return T.TensorType((x.shape[0], w.shape[0]) + out, x.dtype)


# The NumPy kernels of conv and max_pool hand large float32/float64 inputs to XLA (jax on
# the CPU): im2col materializes a copy of the input per kernel offset and its batched matmul
# runs one GEMM per image, which OpenBLAS threads on a busy machine can make 100x slower
# ((64, 27) @ (32, 27, 1024): 1 ms alone, 130-450 ms of CPU under load); the pool's window
# passes are memory-bound NumPy loops.  On the benchmark CNN's layers XLA was 3-20x faster
# (docs/performance.md, "Convolution").  NumPy stays for tiny contractions only (C/groups x
# kernel: a 3x3 kernel over 1 channel took NumPy 1.2-2.7 ms, XLA 9-15 ms), whatever the
# array size: a small conv with a larger contraction goes to XLA too, at ~0.4 s of compile
# per new shape, because NumPy was slower in steady state there as well (a small DCGAN's
# convs forced onto NumPy: 76-86 ms of CPU per step against 21-46 on XLA, issue 17).
# Pooling has a size threshold (XLA_MIN_POOL_SIZE elements): its NumPy passes are cheap.
XLA_MIN_CONTRACTION = 16
XLA_MIN_POOL_SIZE = 1 << 16


def _conv_numpy(xp, x, w, *, stride, padding, dilation, lhs_dilation, groups):
    """One GEMM per group: im2col (windows gathered from the padded input) or, for transposed
    convs (input gradients, conv_transpose2d), GEMM then col2im (`_conv_col2im`).

    Real float32/float64 convs with a contraction of at least XLA_MIN_CONTRACTION run on
    XLA instead (`_xla_handoff`).  Half-precision inputs accumulate in float32 (as the jax
    kernel and torch do).
    """
    dtype = x.dtype
    if (dtype in handoff.FLOATS and math.prod(w.shape[1:]) >= XLA_MIN_CONTRACTION and x.size
            and handoff.usable()):
        return handoff.run(_conv_jax, (x, w), dict(
            stride=stride, padding=padding, dilation=dilation, lhs_dilation=lhs_dilation,
            groups=groups))
    if dtype.itemsize < 4:
        x, w = x.astype(np.float32), w.astype(np.float32)
    if _prefer_col2im(x.shape, w.shape, stride, padding, dilation, lhs_dilation):
        y = _conv_col2im(x, w, padding, dilation, lhs_dilation, groups)
    else:
        y = _conv_im2col(_pad_np(x, padding, lhs_dilation), w, stride, dilation, groups)
    return y.astype(dtype, copy=False)


def _conv_jax(xp, x, w, *, stride, padding, dilation, lhs_dilation, groups):
    """XLA's convolution, or im2col + one dot_general for a contraction (C/groups x kernel)
    under XLA_MIN_CONTRACTION: XLA CPU's conv over one input channel took 9-13 ms of CPU for
    the benchmark CNN's first layer, im2col 2.5-3.7 ms; from a contraction of 25 on XLA's
    conv was as fast or faster, on the CNN's other layers 3-10x (docs/performance.md,
    "Convolution")."""
    from jax import lax  # jax loads on first use (start-up time)
    acc = xp.float32 if x.dtype.itemsize < 4 else x.dtype
    if math.prod(w.shape[1:]) < XLA_MIN_CONTRACTION and x.size:
        return _conv_im2col_jax(xp, x, w, acc, stride, padding, dilation, lhs_dilation, groups)
    spec = tuple(range(x.ndim))
    return lax.conv_general_dilated(
        x, w, window_strides=stride, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=dilation, dimension_numbers=lax.ConvDimensionNumbers(spec, spec, spec),
        feature_group_count=groups, precision=lax.Precision.HIGHEST,
        preferred_element_type=acc).astype(x.dtype)


def _conv_im2col_jax(xp, x, w, acc, stride, padding, dilation, lhs_dilation, groups):
    """`_conv_numpy`'s im2col in jax: the padded, dilated input sliced once per kernel offset,
    then one dot_general per group."""
    from jax import lax  # jax loads on first use (start-up time)
    x = lax.pad(x, xp.zeros((), x.dtype), ((0, 0, 0), (0, 0, 0)) + tuple(
        (lo, hi, f - 1) for (lo, hi), f in zip(padding, lhs_dilation)))
    n, c = x.shape[:2]
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    out = tuple((s - _dilated(k, d)) // st + 1
                for s, k, d, st in zip(x.shape[2:], kernel, dilation, stride))
    cols = []
    for off in itertools.product(*map(range, kernel)):
        start = tuple(f * d for f, d in zip(off, dilation))
        limit = tuple(b + (m - 1) * st + 1 for b, m, st in zip(start, out, stride))
        cols.append(lax.slice(x, (0, 0) + start, (n, c) + limit, (1, 1) + tuple(stride)))
    patches = xp.stack(cols, axis=2).reshape(n, groups, cg * len(cols), math.prod(out))
    y = lax.dot_general(w.reshape(groups, o // groups, cg * len(cols)), patches,
                        (((2,), (2,)), ((0,), (1,))), precision=lax.Precision.HIGHEST,
                        preferred_element_type=acc)            # (groups, O/groups, N, out)
    return y.transpose(2, 0, 1, 3).reshape((n, o) + out).astype(x.dtype)


def _flip(b, x, dims):
    dims = tuple(d for d in dims if x.shape[d] > 1)
    return b.flip(x, dims) if dims else x


def _conv_input_grad(b, ct, x, w, stride, padding, dilation, lhs_dilation, groups):
    """A transposed conv: the cotangent, dilated by the stride, with the flipped regrouped weight."""
    nd = len(stride)
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    spatial = tuple(range(3, 3 + nd))
    wt = b.reshape(w, (groups, o // groups, cg) + kernel)
    wt = b.reshape(b.permute(wt, (0, 2, 1) + spatial), (groups * cg, o // groups) + kernel)
    wt = _flip(b, wt, range(2, 2 + nd))
    pads = []
    for i in range(nd):
        dk = _dilated(kernel[i], dilation[i])
        before = dk - padding[i][0] - 1
        after = (_dilated(x.shape[2 + i], lhs_dilation[i]) + dk - 1
                 - _dilated(ct.shape[2 + i], stride[i]) - before)
        pads.append((before, after))
    return b.conv(ct, wt, lhs_dilation, tuple(pads), dilation, stride, groups)


def _conv_weight_grad(b, ct, x, w, stride, padding, dilation, lhs_dilation, groups):
    if groups == 1 and all(s == 1 for s in stride) and any(f > 1 for f in lhs_dilation):
        return _dilated_input_weight_grad(b, ct, x, w, padding, dilation, lhs_dilation)
    return _generic_weight_grad(b, ct, x, w, stride, padding, dilation, lhs_dilation, groups)


def _generic_weight_grad(b, ct, x, w, stride, padding, dilation, lhs_dilation, groups):
    """A conv of the input (channels as batch, batch as channels) with the cotangent as kernel."""
    nd = len(stride)
    n, c, size = x.shape[0], x.shape[1], x.shape[2:]
    cg = c // groups
    spatial = tuple(range(3, 3 + nd))
    xt = b.reshape(x, (n, groups, cg) + size)
    xt = b.reshape(b.permute(xt, (2, 1, 0) + spatial), (cg, groups * n) + size)
    ctt = b.permute(ct, (1, 0) + tuple(range(2, 2 + nd)))
    pads = []
    for i in range(nd):
        lo = padding[i][0]
        hi = (_dilated(ct.shape[2 + i], stride[i]) - _dilated(size[i], lhs_dilation[i])
              + _dilated(w.shape[2 + i], dilation[i]) - lo - 1)
        pads.append((lo, hi))
    g = b.conv(xt, ctt, dilation, tuple(pads), stride, lhs_dilation, groups)
    return b.permute(g, (1, 0) + tuple(range(2, 2 + nd)))


def _dilated_input_weight_grad(b, ct, x, w, padding, dilation, lhs_dilation):
    """The weight gradient of a stride-1 conv of an lhs-dilated input (conv_transpose2d's
    forward), as a conv of the cotangent (out-channels as batch) with the undilated input
    as kernel, dilated by the lhs dilation, then flipped: per tap t,
    ``dW[o, c, t] = sum_{n, m} x[n, c, m] * ct[n, o, s*m + lo - t*d]``.  The generic form
    convolves the dilated input, zeros included, with the cotangent as a kernel: on XLA CPU
    DCGAN's generator layers took 61 / 69 / 15 ms that way against 2.7 / 4.3 / 1.9 (its
    whole eager step: docs/performance.md, "Conv nets and eager steps")."""
    nd = len(dilation)
    spatial = tuple(range(2, 2 + nd))
    kernel = w.shape[2:]
    pads = []
    for i in range(nd):
        lo = (kernel[i] - 1) * dilation[i] - padding[i][0]
        hi = ((kernel[i] - 1) * dilation[i] + _dilated(x.shape[2 + i], lhs_dilation[i])
              - ct.shape[2 + i] - lo)
        pads.append((lo, hi))
    g = b.conv(b.permute(ct, (1, 0) + spatial), b.permute(x, (1, 0) + spatial),
               tuple(dilation), tuple(pads), tuple(lhs_dilation), (1,) * nd, 1)   # (O, C, *k)
    return _flip(b, g, spatial)


def _conv_vjp(b, ct, x, w, out, **attrs):
    # conv is bilinear without conjugation, so for complex operands each gradient takes the
    # conjugate of the other operand (torch's convention, as mul's)
    a = [attrs[k] for k in ("stride", "padding", "dilation", "lhs_dilation", "groups")]
    return [_conv_input_grad(b, ct, x, conj_if_complex(b, w), *a),
            _conv_weight_grad(b, ct, conj_if_complex(b, x), w, *a)]


defop("conv", "input, weight",
      attrs=(("stride", REQUIRED, K.INTS), ("padding", REQUIRED, K.PADDING), ("dilation", REQUIRED, K.INTS),
             ("lhs_dilation", REQUIRED, K.INTS), ("groups", 1, K.SIZE)),
      infer=_conv_infer, kernel=_conv_numpy, kernels={"jax": _conv_jax}, vjp=_conv_vjp,
      flags=INTERNAL | COMPLEX, ref="jax.lax.conv_general_dilated (NCHW, OIHW); torch.convolution",
      jvp=bilinear_jvp("conv"),
      aten_name="aten::convolution", cost=CONV)


# ---- max_pool -------------------------------------------------------------------------------
def _max_pool_infer(types, *, kernel_size, stride, padding, dilation):
    x = types[0]
    if x.dtype is T.bool_:
        raise DTypeError(f"max_pool: not supported for bool tensors, got {x}")
    out = tuple(_out_size(s, p, k, st, d) for s, p, k, st, d in
                zip(x.shape[2:], padding, kernel_size, stride, dilation))
    shape = x.shape[:2] + out
    return T.TensorType(shape, x.dtype), T.TensorType(shape, T.int64)


def _max_pool_kernel(xp, x, *, kernel_size, stride, padding, dilation):
    """Values and torch's indices (flat over the unpadded spatial dims); ties: the first max.

    Large float32/float64 inputs of the NumPy kernel run on XLA (`_xla_handoff`)."""
    if (xp is np and x.dtype in handoff.FLOATS and x.size >= XLA_MIN_POOL_SIZE
            and handoff.usable()):
        return handoff.run(_max_pool_kernel, (x,), dict(kernel_size=kernel_size, stride=stride,
                                                    padding=padding, dilation=dilation))
    nd = len(kernel_size)
    fill = -np.inf if x.dtype.kind == "f" or x.dtype == T.bfloat16.numpy else np.iinfo(x.dtype).min
    xpad = xp.pad(x, ((0, 0), (0, 0)) + tuple(padding), constant_values=fill) \
        if any(map(any, padding)) else x
    size = x.shape[2:]
    out = tuple(_out_size(s, p, k, st, d) for s, p, k, st, d in
                zip(size, padding, kernel_size, stride, dilation))
    offsets = list(itertools.product(*map(range, kernel_size)))
    windows = [xpad[(Ellipsis,) + _window(off, dilation, stride, out)] for off in offsets]
    if xp is np:
        values, arg = _window_argmax(windows)
    else:   # jax: XLA fuses the stack into the reductions
        stacked = xp.stack(windows, axis=-1)          # (N, C, *out, window)
        arg, values = xp.argmax(stacked, axis=-1), xp.max(stacked, axis=-1)
    table = np.asarray(offsets, dtype=np.int64) * np.asarray(dilation, dtype=np.int64)
    flat = 0
    for i in range(nd):
        start = np.arange(out[i], dtype=np.int64) * stride[i] - padding[i][0]
        start = start.reshape((out[i],) + (1,) * (nd - 1 - i))
        flat = flat * size[i] + (xp.asarray(table[:, i])[arg] + start)
    return values, xp.asarray(flat).astype(np.int64)


def _window_argmax(windows):
    """The maximum over `windows` (NumPy arrays of one shape) and the position of the first
    one, NaN counting as the largest: ``argmax`` and ``max`` over their stack, without the
    stack (a copy of every window) and the reductions over its short last axis (on a
    (128, 16, 32, 32) 2x2 pool the stack took 30 ms, these elementwise passes 25)."""
    best = windows[0].copy()
    arg = np.zeros(best.shape, np.int8 if len(windows) < 128 else np.int64)
    floating = best.dtype.kind == "f" or best.dtype == T.bfloat16.numpy
    best_nan = np.isnan(best) if floating else None
    for k, v in enumerate(windows[1:], 1):
        take = v > best
        if floating:   # a NaN wins over numbers, the first NaN over later ones
            v_nan = np.isnan(v)
            take |= v_nan
            take &= ~best_nan
            best_nan |= v_nan
        np.copyto(best, v, where=take)
        np.copyto(arg, k, where=take)
    return best, arg


def _max_pool_vjp(b, ct, x, out, indices, **_):
    """Scatter-add each output's cotangent to the input element its index names."""
    n, c = x.shape[:2]
    plane = math.prod(x.shape[2:])
    rows = b.mul(b.arange(0, n * c, 1, T.int64), plane)
    flat = b.add(indices, b.reshape(rows, (n, c) + (1,) * (len(x.shape) - 2)))
    g = b.index_take_backward(b.reshape(ct[0], (-1,)), b.reshape(flat, (-1,)), (n * c * plane,), 0)
    # a function of x with derivative 0 under create_graph, as torch's
    # max_pool2d_with_indices_backward (zero_slope_dep)
    return [zero_slope_dep(b, b.reshape(g, x.shape), x)]


defop("max_pool", "input",
      attrs=(("kernel_size", REQUIRED, K.INTS), ("stride", REQUIRED, K.INTS), ("padding", REQUIRED, K.PADDING),
             ("dilation", REQUIRED, K.INTS)),
      infer=_max_pool_infer, kernel=_max_pool_kernel, vjp=_max_pool_vjp, flags=INTERNAL,
      ref="torch.nn.functional.max_pool2d(return_indices=True); jax.lax.reduce_window",
      cost=POOL)


# ---- argument normalization shared by the decompositions --------------------------------------
def _ints(name: str, arg: str, value, nd: int, minimum: int) -> tuple[int, ...]:
    """An int or a sequence of `nd` ints (torch's `_pair`), each at least `minimum`."""
    vals = (value,) * nd if isinstance(value, int) else tuple(value)
    if len(vals) == 1:
        vals = vals * nd
    if len(vals) != nd or not all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        raise ValueError(f"{name}: expected {arg} to be a single integer value or a list of {nd} "
                         f"values, got {arg}={value!r}")
    if any(v < minimum for v in vals):
        what = "non-positive" if minimum == 1 else "negative"
        raise ValueError(f"{name}: {what} {arg} is not supported, got {arg}={value!r}")
    return vals


def _batched(ops, name: str, x, nd: int):
    """(x with a batch dim, whether one was added): torch's unbatched (C, *spatial) inputs."""
    rank = len(x.shape)
    if rank not in (nd + 1, nd + 2):
        raise _fail(ops, ShapeError(f"{name}: expected {nd + 1}-D (unbatched) or {nd + 2}-D "
                                    f"(batched) input, got {_ttype(x)}"))
    return (ops.unsqueeze(x, 0), True) if rank == nd + 1 else (x, False)


def _conv_padding(name, padding, kernel, dilation, stride):
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"{name}: invalid padding string {padding!r} "
                             "(expected 'same' or 'valid')")
        if any(s != 1 for s in stride):
            raise ValueError(f"{name}: padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return tuple((t // 2, t - t // 2) for t in total)     # torch puts the odd one on the right
    return tuple((p, p) for p in _ints(name, "padding", padding, nd, 0))


def _check_conv(ops, name, x, w, groups, transposed=False):
    """torch's channel, rank and dtype checks, naming the user's op."""
    if len(w.shape) != len(x.shape):
        raise _fail(ops, ShapeError(f"{name}: weight {_ttype(w)} must have the rank of the "
                                    f"batched input {_ttype(x)}"))
    if x.dtype is not w.dtype or not x.dtype.is_differentiable:
        raise _fail(ops, DTypeError(f"{name}: input {_ttype(x)} and weight {_ttype(w)} must "
                                    "share one floating-point or complex dtype (torch does not "
                                    "promote)"))
    if not isinstance(groups, int) or groups < 1:
        raise _fail(ops, ValueError(f"{name}: non-positive groups is not supported, got {groups}"))
    in_channels = w.shape[0] if transposed else w.shape[1] * groups
    if (w.shape[0] % groups) or x.shape[1] != in_channels:
        raise _fail(ops, ShapeError(f"{name}: weight {_ttype(w)} with groups={groups} expects "
                                    f"{in_channels} input channels (divisible by groups), "
                                    f"got input {_ttype(x)}"))


def _add_bias(ops, name, y, bias, nd):
    if bias is None:
        return y
    c = y.shape[1]
    if tuple(bias.shape) != (c,) or bias.dtype is not y.dtype:
        raise _fail(ops, ShapeError(f"{name}: expected bias of shape ({c},) and dtype "
                                    f"{y.dtype.name}, got {_ttype(bias)}"))
    return ops.add(y, ops.reshape(bias, (1, c) + (1,) * nd))


def _check_out(ops, name, x, pads, kernel, stride, dilation, lhs_dilation=None):
    lhs_dilation = lhs_dilation or (1,) * len(kernel)
    out = [_out_size(s, p, k, st, d, ld) for s, p, k, st, d, ld in
           zip(x.shape[2:], pads, kernel, stride, dilation, lhs_dilation)]
    if any(o < 1 for o in out):
        raise _fail(ops, ShapeError(f"{name}: input {_ttype(x)} gives output size {tuple(out)}, "
                                    f"too small for kernel size {tuple(kernel)} (padding "
                                    f"{tuple(p[0] for p in pads)}, dilation {tuple(dilation)})"))


# ---- conv1d / conv2d / conv_transpose2d -------------------------------------------------------
def _conv_decomp(nd: int, name: str):
    def decomp(ops, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
        x, unbatched = _batched(ops, name, input, nd)
        _check_conv(ops, name, x, weight, groups)
        try:
            stride = _ints(name, "stride", stride, nd, 1)
            dilation = _ints(name, "dilation", dilation, nd, 1)
            pads = _conv_padding(name, padding, weight.shape[2:], dilation, stride)
        except ValueError as e:
            raise _fail(ops, e) from None
        _check_out(ops, name, x, pads, weight.shape[2:], stride, dilation)
        y = ops.conv(x, weight, stride, pads, dilation, (1,) * nd, groups)
        y = _add_bias(ops, name, y, bias, nd)
        return ops.squeeze(y, 0) if unbatched else y
    decomp.__name__ = name
    return decomp


defcomposite("conv1d",
             "input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, "
             "dilation=1, groups=1",
             _conv_decomp(1, "conv1d"), ref="torch.nn.functional.conv1d", flags=COMPLEX,
             node_name="ConvolutionBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER},
             node_inputs=("input", "weight", "bias"))
defcomposite("conv2d",
             "input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, "
             "dilation=1, groups=1",
             _conv_decomp(2, "conv2d"), ref="torch.nn.functional.conv2d", flags=COMPLEX,
             node_name="ConvolutionBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER},
             node_inputs=("input", "weight", "bias"))


def _conv_transpose_decomp(nd: int, name: str):
    def decomp(ops, input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
               dilation=1):
        x, unbatched = _batched(ops, name, input, nd)
        _check_conv(ops, name, x, weight, groups, transposed=True)
        try:
            stride = _ints(name, "stride", stride, nd, 1)
            dilation = _ints(name, "dilation", dilation, nd, 1)
            padding = _ints(name, "padding", padding, nd, 0)
            output_padding = _ints(name, "output_padding", output_padding, nd, 0)
        except ValueError as e:
            raise _fail(ops, e) from None
        if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
            raise _fail(ops, ValueError(
                f"{name}: output padding must be smaller than either stride or dilation, got "
                f"output_padding={output_padding}, stride={stride}, dilation={dilation}"))
        kernel = weight.shape[2:]
        cin_g, cout_g = weight.shape[0] // groups, weight.shape[1]
        spatial = tuple(range(3, 3 + nd))
        # (G*Cin/G, Cout/G, *k) -> (G*Cout/G, Cin/G, *k), flipped: a conv of the dilated input
        w = ops.reshape(weight, (groups, cin_g, cout_g) + kernel)
        w = ops.reshape(ops.permute(w, (0, 2, 1) + spatial), (groups * cout_g, cin_g) + kernel)
        w = _flip(ops, w, range(2, 2 + nd))
        pads = tuple((d * (k - 1) - p, d * (k - 1) - p + op)
                     for k, d, p, op in zip(kernel, dilation, padding, output_padding))
        _check_out(ops, name, x, pads, kernel, (1,) * nd, dilation, stride)
        y = ops.conv(x, w, (1,) * nd, pads, dilation, stride, groups)
        y = _add_bias(ops, name, y, bias, nd)
        return ops.squeeze(y, 0) if unbatched else y
    decomp.__name__ = name
    return decomp


defcomposite("conv_transpose2d",
             "input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, "
             "output_padding=0, groups=1, dilation=1",
             _conv_transpose_decomp(2, "conv_transpose2d"),
             ref="torch.nn.functional.conv_transpose2d", flags=COMPLEX,
             node_name="ConvolutionBackward0",
             autocast={"cpu": AUTOCAST_LOWER, "cuda": AUTOCAST_LOWER},
             node_inputs=("input", "weight", "bias"))


# ---- pooling --------------------------------------------------------------------------------
def _pool_padding(name, size, kernel, stride, padding, dilation, ceil_mode):
    """torch's pooling output size as explicit (lo, hi) padding (the ceil-mode overhang on hi)."""
    pads = []
    for s, k, st, p, d in zip(size, kernel, stride, padding, dilation):
        if 2 * p > _dilated(k, d):
            raise ValueError(f"{name}: pad should be at most half of effective kernel size, "
                             f"but got pad={p}, kernel_size={k} and dilation={d}")
        span = s + 2 * p - _dilated(k, d)
        out = (span + (st - 1 if ceil_mode else 0)) // st + 1
        if ceil_mode and (out - 1) * st >= s + p:
            out -= 1
        pads.append((p, max(p, (out - 1) * st + _dilated(k, d) - s - p)))
    return tuple(pads)


def _pool_args(ops, name, x, kernel_size, stride, padding, dilation, ceil_mode):
    nd = len(x.shape) - 2
    try:
        kernel = _ints(name, "kernel_size", kernel_size, nd, 1)
        stride = kernel if stride is None or stride == () or stride == [] else \
            _ints(name, "stride", stride, nd, 1)
        padding = _ints(name, "padding", padding, nd, 0)
        dilation = _ints(name, "dilation", dilation, nd, 1)
        pads = _pool_padding(name, x.shape[2:], kernel, stride, padding, dilation, ceil_mode)
    except ValueError as e:
        raise _fail(ops, e) from None
    _check_out(ops, name, x, pads, kernel, stride, dilation)
    return kernel, stride, pads, dilation


def _max_pool2d(ops, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
    x, unbatched = _batched(ops, "max_pool2d", input, 2)
    args = _pool_args(ops, "max_pool2d", x, kernel_size, stride, padding, dilation, ceil_mode)
    values, indices = ops.max_pool(x, *args)
    if unbatched:
        values, indices = ops.squeeze(values, 0), ops.squeeze(indices, 0)
    return (values, indices) if return_indices else values


defcomposite("max_pool2d",
             "input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
             "return_indices=False",
             _max_pool2d, ref="torch.nn.functional.max_pool2d (ties: the first maximum)",
             node_name="MaxPool2DWithIndicesBackward0")


def _avg_pool2d(ops, input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    """Window sums as a conv with a ones kernel, divided by torch's per-window divisor."""
    x, unbatched = _batched(ops, "avg_pool2d", input, 2)
    if not x.dtype.is_floating_point:
        raise _fail(ops, NotImplementedError(
            f"avg_pool2d: integer inputs are not supported yet, got {_ttype(x)}"))
    kernel, stride, pads, _ = _pool_args(ops, "avg_pool2d", x, kernel_size, stride, padding, 1,
                                         ceil_mode)
    n, c, h, w = x.shape
    ones = ops.full((1, 1) + kernel, 1.0, x.dtype)
    sums = ops.conv(ops.reshape(x, (n * c, 1, h, w)), ones, stride, pads, (1, 1), (1, 1), 1)
    sums = ops.reshape(sums, (n, c) + tuple(sums.shape[2:]))
    if divisor_override is not None:
        if not divisor_override:
            raise _fail(ops, ValueError("avg_pool2d: divisor must be not zero"))
        out = ops.div(sums, float(divisor_override))
    elif count_include_pad and all(lo == hi for lo, hi in pads):
        out = ops.div(sums, float(math.prod(kernel)))
    else:
        # per-window count of the positions torch divides by: padded ones (count_include_pad),
        # else real ones; never the ceil-mode overhang
        if count_include_pad:
            plane = (1, 1, h + 2 * pads[0][0], w + 2 * pads[1][0])
            count_pads = tuple((0, hi - lo) for lo, hi in pads)
        else:
            plane, count_pads = (1, 1, h, w), pads
        counts = ops.conv(ops.full(plane, 1.0, x.dtype), ones, stride, count_pads, (1, 1),
                          (1, 1), 1)
        out = ops.div(sums, counts)
    return ops.squeeze(out, 0) if unbatched else out


defcomposite("avg_pool2d",
             "input: Tensor, kernel_size, stride=None, padding=0, ceil_mode=False, "
             "count_include_pad=True, divisor_override=None",
             _avg_pool2d, ref="torch.nn.functional.avg_pool2d", node_name="AvgPool2DBackward0",
             node_inputs=("input",))


def _adaptive_avg_pool2d(ops, input, output_size):
    """torch's windows [floor(i*S/out), ceil((i+1)*S/out)) per dim: a reshape-mean when out divides S."""
    x, unbatched = _batched(ops, "adaptive_avg_pool2d", input, 2)
    if not x.dtype.is_floating_point:
        raise _fail(ops, NotImplementedError(
            f"adaptive_avg_pool2d: integer inputs are not supported yet, got {_ttype(x)}"))
    sizes = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 2:
        raise _fail(ops, ValueError(f"adaptive_avg_pool2d: output_size must be an int or 2 "
                                    f"values, got {output_size!r}"))
    for i, dim in ((0, 2), (1, 3)):
        size = x.shape[dim]
        out = size if sizes[i] is None else sizes[i]
        if out < 0 or (out == 0 and size):
            raise _fail(ops, ValueError(f"adaptive_avg_pool2d: invalid output_size "
                                        f"{output_size!r} for input {_ttype(input)}"))
        if out == size:
            continue
        if size % out == 0:
            shape = tuple(x.shape)
            x = ops.mean(ops.reshape(x, shape[:dim] + (out, size // out) + shape[dim + 1:]),
                         dim + 1)
            continue
        parts = []
        for j in range(out):
            lo, hi = (j * size) // out, -((-(j + 1) * size) // out)
            starts = [0] * 4
            stops = list(x.shape)
            starts[dim], stops[dim] = lo, hi
            parts.append(ops.mean(ops.slice(x, tuple(starts), tuple(stops), (1,) * 4), dim, True))
        x = ops.cat(parts, dim)
    return ops.squeeze(x, 0) if unbatched else x


defcomposite("adaptive_avg_pool2d", "input: Tensor, output_size", _adaptive_avg_pool2d,
             ref="torch.nn.functional.adaptive_avg_pool2d", node_name="AdaptiveAvgPool2DBackward0",
             node_inputs=("input",))
