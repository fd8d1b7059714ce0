"""torch.nn.functional's similarity and normalization composites: cosine_similarity,
normalize, layer_norm, rms_norm, group_norm and batch_norm."""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_FP32, COMPLEX, INTERNAL, defcomposite
from ._common import norm_dim
from .conv import _fail, _ttype
from ._nn_common import _channels_view, _same_dtype, _tensor


# ---- similarity and normalization ------------------------------------------------------------------
def _l2_norm(ops, x, dim: int):
    """sqrt(sum(|x|^2, dim)) kept as a size-1 dim (real for complex x); gradient 0 at a zero
    vector, as torch."""
    sq = ops.real(ops.mul(x, ops.conj(x))) if x.dtype.is_complex else ops.mul(x, x)
    ss = ops.sum(sq, (dim,), True)
    nonzero = ops.gt(ss, 0.0)
    return ops.where(nonzero, ops.sqrt(ops.where(nonzero, ss, 1.0)), 0.0)


def _cosine_similarity(ops, x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps), dim), as torch 2.x computes it.

    torch clamps the norms under no_grad, so below `eps` its gradient treats the clamp as
    the identity; here the clamped norm has gradient 0 there (norms below 1e-8 only).
    """
    name = "cosine_similarity"
    _tensor(ops, name, x1, "x1", floating=True)
    _tensor(ops, name, x2, "x2", floating=True)
    shape = T.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    if shape is None:
        raise _fail(ops, ShapeError(f"{name}: x1 {_ttype(x1)} and x2 {_ttype(x2)} do not "
                                    "broadcast"))
    try:
        d = norm_dim(name, dim, len(shape))
    except (IndexError, TypeError) as e:
        raise _fail(ops, e) from None
    x1, x2 = ops.expand(x1, shape), ops.expand(x2, shape)
    n1, n2 = _l2_norm(ops, x1, d), _l2_norm(ops, x2, d)
    n1, n2 = ops.where(ops.ge(n1, eps), n1, eps), ops.where(ops.ge(n2, eps), n2, eps)
    return ops.sum(ops.mul(ops.div(x1, n1), ops.div(x2, n2)), (d,))


defcomposite("cosine_similarity", "x1: Tensor, x2: Tensor, dim=1, eps=1e-08", _cosine_similarity,
             ref="torch.nn.functional.cosine_similarity", node_name="SumBackward1",
             autocast={"cuda": AUTOCAST_FP32})


def _normalize(ops, input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / clamp_min(norm_p(input, dim), eps) (torch.nn.functional.normalize)."""
    name = "normalize"
    _tensor(ops, name, input, "input")
    if not input.dtype.is_differentiable:
        raise _fail(ops, DTypeError(f"{name}: expected a floating-point or complex input, got "
                                    f"{_ttype(input)}"))
    if out is not None:
        raise _fail(ops, NotImplementedError(f"{name}: the out= argument is not supported"))
    try:
        d = norm_dim(name, dim, len(input.shape))
    except (IndexError, TypeError) as e:
        raise _fail(ops, e) from None
    if p == 2:
        n = _l2_norm(ops, input, d)
    else:
        n = ops.linalg_vector_norm(input, p, (d,), True)
    return ops.div(input, ops.where(ops.ge(n, eps), n, eps))


# complex: divided by the (real) norm of |input|
defcomposite("normalize", "input: Tensor, p=2.0, dim=1, eps=1e-12, out: Tensor | None = None",
             _normalize, ref="torch.nn.functional.normalize", flags=COMPLEX,
             node_name="DivBackward0",
             autocast={"cuda": AUTOCAST_FP32})


def _upcast(ops, x):
    """Normalizations compute half/bfloat16 inputs in float32, as torch's CPU kernels do."""
    return ops.convert(x, T.float32) if x.dtype.itemsize < 4 else x


def _cast(ops, x, dtype):
    return x if x.dtype is dtype else ops.convert(x, dtype)


def _standardize(ops, x, dims, eps):
    """(x - mean) / sqrt(biased var + eps) over `dims` (two-pass, stable)."""
    xc = ops.sub(x, ops.mean(x, dims, True))
    var = ops.mean(ops.mul(xc, xc), dims, True)
    return ops.mul(xc, ops.rsqrt(ops.add(var, eps)))


def _affine(ops, y, weight, bias, shape):
    if weight is not None:
        y = ops.mul(y, ops.reshape(weight, shape))
    if bias is not None:
        y = ops.add(y, ops.reshape(bias, shape))
    return y


def _normalized_dims(ops, name, input, normalized_shape, weight, bias=None):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if not 0 < k <= len(input.shape) or tuple(input.shape[len(input.shape) - k:]) != shape:
        raise _fail(ops, ShapeError(f"{name}: given normalized_shape={list(shape)}, expected "
                                    f"input with shape [*, {', '.join(map(str, shape))}], got "
                                    f"{_ttype(input)}"))
    for arg, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise _fail(ops, ShapeError(f"{name}: expected {arg} of shape {list(shape)} "
                                        f"(normalized_shape), got {_ttype(t)}"))
        _same_dtype(ops, name, input, t, arg)
    return shape, tuple(range(len(input.shape) - k, len(input.shape)))


def _layer_norm(ops, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    _tensor(ops, "layer_norm", input, "input", floating=True)
    shape, dims = _normalized_dims(ops, "layer_norm", input, normalized_shape, weight, bias)
    y = _standardize(ops, _upcast(ops, input), dims, eps)
    return _cast(ops, _affine(ops, y, weight, bias, shape), input.dtype)


defcomposite("layer_norm",
             "input: Tensor, normalized_shape, weight: Tensor | None = None, "
             "bias: Tensor | None = None, eps=1e-05",
             _layer_norm, ref="torch.nn.functional.layer_norm",
             node_name="NativeLayerNormBackward0",
             autocast={"cuda": AUTOCAST_FP32}, node_inputs=("input", "weight", "bias"))


def _rms_norm(ops, input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight; eps None: the dtype's machine epsilon (torch)."""
    _tensor(ops, "rms_norm", input, "input", floating=True)
    shape, dims = _normalized_dims(ops, "rms_norm", input, normalized_shape, weight)
    if eps is None:   # the epsilon of the dtype computed in (float32 for half inputs)
        eps = float(np.finfo(np.float64 if input.dtype is T.float64 else np.float32).eps)
    x = _upcast(ops, input)
    y = ops.mul(x, ops.rsqrt(ops.add(ops.mean(ops.mul(x, x), dims, True), eps)))
    return _cast(ops, _affine(ops, y, weight, None, shape), input.dtype)


defcomposite("rms_norm", "input: Tensor, normalized_shape, weight: Tensor | None = None, eps=None",
             _rms_norm, ref="torch.nn.functional.rms_norm", node_name="MulBackward0")


def _group_norm(ops, input, num_groups, weight=None, bias=None, eps=1e-5):
    name = "group_norm"
    _tensor(ops, name, input, "input", floating=True)
    shape = tuple(input.shape)
    if len(shape) < 2 or num_groups < 1 or shape[1] % num_groups:
        raise _fail(ops, ShapeError(f"{name}: expected number of channels in input to be "
                                    f"divisible by num_groups, got input {_ttype(input)} and "
                                    f"num_groups={num_groups}"))
    c = shape[1]
    for arg, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise _fail(ops, ShapeError(f"{name}: expected {arg} to be a vector of size {c} "
                                        f"(the channels of input {_ttype(input)}), got "
                                        f"{_ttype(t)}"))
        _same_dtype(ops, name, input, t, arg)
    x = ops.reshape(_upcast(ops, input), (shape[0], num_groups, -1))
    y = ops.reshape(_standardize(ops, x, (2,), eps), shape)
    y = _affine(ops, y, weight, bias, _channels_view(input, 1, c))
    return _cast(ops, y, input.dtype)


defcomposite("group_norm",
             "input: Tensor, num_groups, weight: Tensor | None = None, bias: Tensor | None = None, "
             "eps=1e-05",
             _group_norm, ref="torch.nn.functional.group_norm",
             node_name="NativeGroupNormBackward0",
             autocast={"cuda": AUTOCAST_FP32}, node_inputs=("input", "weight", "bias"))


def _batch_norm(ops, input, running_mean=None, running_var=None, weight=None, bias=None,
                training=False, momentum=0.1, eps=1e-5):
    """Normalize per channel (dim 1) with batch statistics (training) or the running ones.

    Pure: the running statistics are read, never updated; tg.nn.functional.batch_norm
    updates them in place as torch does.
    """
    name = "batch_norm"
    _tensor(ops, name, input, "input", floating=True)
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise _fail(ops, ShapeError(f"{name}: expected input (N, C, *), got {_ttype(input)}"))
    c = shape[1]
    for arg, t in (("running_mean", running_mean), ("running_var", running_var),
                   ("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != (c,):
            raise _fail(ops, ShapeError(f"{name}: {arg} should contain {c} elements, got "
                                        f"{_ttype(t)}"))
    view = _channels_view(input, 1, c)
    x = _upcast(ops, input)
    if training or running_mean is None or running_var is None:
        if not training:
            raise _fail(ops, ValueError(f"{name}: running_mean and running_var must be defined "
                                        "in evaluation mode"))
        if math.prod(shape) // max(c, 1) <= 1:
            raise _fail(ops, ValueError(f"{name}: expected more than 1 value per channel when "
                                        f"training, got input {_ttype(input)}"))
        y = _standardize(ops, x, (0,) + tuple(range(2, len(shape))), eps)
    else:
        mean = ops.reshape(_cast(ops, running_mean, x.dtype), view)
        var = ops.reshape(_cast(ops, running_var, x.dtype), view)
        y = ops.mul(ops.sub(x, mean), ops.rsqrt(ops.add(var, eps)))
    y = _affine(ops, y, weight, bias, view)
    return _cast(ops, y, input.dtype)


# INTERNAL: torch.batch_norm orders its arguments differently; tg.nn.functional.batch_norm
# is the public spelling (and updates the running statistics).
defcomposite("batch_norm",
             "input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None, "
             "weight: Tensor | None = None, bias: Tensor | None = None, training=False, "
             "momentum=0.1, eps=1e-05",
             _batch_norm, flags=INTERNAL, ref="torch.nn.functional.batch_norm",
             node_name="NativeBatchNormBackward0", node_inputs=("input", "weight", "bias"))
