"""Neural-network ops: softmax, log_softmax, embedding, and torch.nn.functional's losses,
normalizations and attention as decompositions over them.

Every composite follows its torch.nn.functional namesake, argument for argument (the
legacy `size_average`/`reduce` pair included).  Checks that need values (class indices
in range, probabilities in [0, 1]) run when the value is known (eagerly), as torch's do.
"""
from __future__ import annotations

import math

import numpy as np

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import COMPLEX, INTERNAL, REQUIRED, defop
from ._common import norm_dim, require_float
from .conv import _fail, _ttype
from .index import checked_index


def _float_infer(name):
    def infer(types, **_):
        require_float(name, types[0])
        return types[0]
    return infer


def _canon_dim(name):
    return lambda types, *, dim: {"dim": norm_dim(name, dim, types[0].ndim)}


def _softmax_kernel(xp, x, *, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    e = xp.exp(z)
    return e / xp.sum(e, axis=dim, keepdims=True)


def _log_softmax_kernel(xp, x, *, dim):
    z = x - xp.max(x, axis=dim, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=dim, keepdims=True))


# d softmax: y * (ct - sum(ct * y));  d log_softmax: ct - exp(y) * sum(ct)
defop("softmax", "input", attrs=(("dim", -1),), canon=_canon_dim("softmax"),
      infer=_float_infer("softmax"), kernel=_softmax_kernel, ref="torch.softmax",
      vjp=lambda b, ct, x, out, *, dim: [
          b.mul(out, b.sub(ct, b.sum(b.mul(ct, out), (dim,), True)))],
          jvp=lambda b, t, x, out, *, dim: b.mul(out, b.sub(t, b.sum(b.mul(t, out), (dim,), True))))

defop("log_softmax", "input", attrs=(("dim", -1),), canon=_canon_dim("log_softmax"),
      infer=_float_infer("log_softmax"), kernel=_log_softmax_kernel, ref="torch.log_softmax",
      vjp=lambda b, ct, x, out, *, dim: [
          b.sub(ct, b.mul(b.exp(out), b.sum(ct, (dim,), True)))],
          jvp=lambda b, t, x, out, *, dim: b.sub(t, b.sum(b.mul(b.exp(out), t), (dim,), True)))


# ---- shared checks ----------------------------------------------------------------------------
def _tensor(ops, name: str, x, arg: str, floating: bool = False):
    if not ops.is_operand(x):
        raise _fail(ops, TypeError(f"{name}(): argument '{arg}' must be a tensor, got "
                                   f"{type(x).__name__}"))
    if floating and not x.dtype.is_floating_point:
        raise _fail(ops, DTypeError(f"{name}: expected a floating-point {arg}, got {_ttype(x)}"))
    return x


def _same_dtype(ops, name: str, x, other, arg: str):
    if other is not None and other.dtype is not x.dtype:
        raise _fail(ops, DTypeError(f"{name}: {arg} {_ttype(other)} must have the dtype of the "
                                    f"input {_ttype(x)} (torch does not promote it)"))


def _reduction(ops, name: str, reduction: str, size_average=None, reduce=None,
               extra: tuple = ()) -> str:
    """torch's reduction argument; the legacy `size_average`/`reduce` pair overrides it."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduction = "none" if reduce is False else ("mean" if size_average else "sum")
    if reduction not in ("none", "mean", "sum") + extra:
        raise _fail(ops, ValueError(f"{name}: {reduction} is not a valid value for reduction"))
    return reduction


def _reduce(ops, loss, reduction: str):
    if reduction == "none":
        return loss
    return ops.sum(loss) if reduction == "sum" else ops.mean(loss)


def _bcast(ops, name: str, x, y):
    if T.broadcast_shapes(tuple(x.shape), tuple(y.shape)) is None:
        raise _fail(ops, ShapeError(f"{name}: input {_ttype(x)} and target {_ttype(y)} do not "
                                    "broadcast"))


def _channels_view(x, c_dim: int, n: int):
    """Shape putting a size-`n` vector on dim `c_dim` of `x`, 1 elsewhere (broadcast)."""
    return tuple(n if i == c_dim else 1 for i in range(len(x.shape)))


# ---- class-index losses -----------------------------------------------------------------------
def _check_targets(ops, name: str, target, classes: int, ignore_index: int):
    """`target` checked to hold class indices in [0, classes) or `ignore_index`."""
    return checked_index(ops, name, target, classes, None, ignore=ignore_index)


def _check_index_shapes(ops, name: str, input, target) -> None:
    xs, ts = tuple(input.shape), tuple(target.shape)
    if target.dtype not in (T.int64, T.uint8):
        raise _fail(ops, DTypeError(f"{name}: target must hold class indices (int64 or uint8), "
                                    f"got {target.dtype.name} {ts}"))
    ok = (len(xs) == 1 and ts == ()) or (len(xs) >= 2 and ts == xs[:1] + xs[2:])
    if not ok:
        raise _fail(ops, ShapeError(f"{name}: expected input (N, C, d1, ...) and target "
                                    f"(N, d1, ...) (or (C,) and ()), got {xs} and {ts}"))


def _pick(ops, logp, target):
    """logp[n, target[n, ...], ...] for logp (N, C, *d) and target (N, *d)."""
    nd = len(logp.shape)
    c = logp.shape[1]
    last = ops.permute(logp, (0,) + tuple(range(2, nd)) + (1,)) if nd > 2 else logp
    m = math.prod(target.shape)
    flat = ops.add(ops.mul(ops.arange(0, m, 1, T.int64), c), ops.reshape(target, (m,)))
    return ops.reshape(ops.index_take(ops.reshape(last, (m * c,)), flat, 0), tuple(target.shape))


def _weighted_mean(ops, loss, w):
    """sum(loss) / sum(w): NaN when every target is ignored, with gradient 0 then (torch)."""
    total = ops.sum(w)
    empty = ops.eq(total, 0.0)
    return ops.where(empty, float("nan"), ops.div(ops.sum(loss), ops.where(empty, 1.0, total)))


def _nll(ops, name, logp, target, weight, ignore_index, reduction, label_smoothing=0.0):
    """Weighted NLL of class indices, with ignore_index and torch's label smoothing."""
    unbatched = len(logp.shape) == 1
    if target.dtype is not T.int64:    # uint8 targets: compare with ignore_index in int64
        target = ops.convert(target, T.int64)
    if unbatched:
        logp, target = ops.unsqueeze(logp, 0), ops.unsqueeze(target, 0)
    c = logp.shape[1]
    if weight is not None and tuple(weight.shape) != (c,):
        raise _fail(ops, ShapeError(f"{name}: weight tensor should be defined either for all "
                                    f"{c} classes or no classes, got {_ttype(weight)}"))
    target = _check_targets(ops, name, target, c, ignore_index)
    valid = ops.ne(target, ignore_index)
    safe = ops.where(valid, target, 0)
    w = ops.convert(valid, logp.dtype)
    if weight is not None:
        w = ops.mul(ops.index_take(weight, safe, 0), w)
    loss = ops.neg(ops.mul(_pick(ops, logp, safe), w))
    if reduction == "mean":
        loss = _weighted_mean(ops, loss, w)
    elif reduction == "sum":
        loss = ops.sum(loss)
    if label_smoothing > 0:
        per_class = logp if weight is None else ops.mul(
            logp, ops.reshape(weight, _channels_view(logp, 1, c)))
        smooth = ops.where(valid, ops.neg(ops.sum(per_class, 1)), 0.0)
        if reduction == "mean":
            smooth = _weighted_mean(ops, smooth, w)
        elif reduction == "sum":
            smooth = ops.sum(smooth)
        loss = ops.add(ops.mul(loss, 1.0 - label_smoothing),
                       ops.mul(smooth, label_smoothing / c))
    return ops.squeeze(loss, 0) if unbatched and reduction == "none" else loss


def _cross_entropy(ops, input, target, weight=None, size_average=None, ignore_index=-100,
                   reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dim (1, or 0 for unbatched input), then NLL.

    A target of the input's shape holds class probabilities; otherwise class indices.
    """
    name = "cross_entropy"
    _tensor(ops, name, input, "input", floating=True)
    _tensor(ops, name, target, "target")
    reduction = _reduction(ops, name, reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise _fail(ops, ValueError(f"{name}: label_smoothing must be between 0.0 and 1.0, got "
                                    f"{label_smoothing}"))
    if len(input.shape) == 0:
        raise _fail(ops, ShapeError(f"{name}: input must have a class dimension, got "
                                    f"{_ttype(input)}"))
    _same_dtype(ops, name, input, weight, "weight")
    c_dim = 0 if len(input.shape) == 1 else 1
    c = input.shape[c_dim]
    logp = ops.log_softmax(input, c_dim)
    if tuple(target.shape) != tuple(input.shape):
        _check_index_shapes(ops, name, input, target)
        return _nll(ops, name, logp, target, weight, ignore_index, reduction, label_smoothing)
    if not target.dtype.is_floating_point:
        raise _fail(ops, DTypeError(f"{name}: a target of the input's shape holds class "
                                    f"probabilities and must be floating point, got "
                                    f"{_ttype(target)}"))
    if ignore_index >= 0:
        raise _fail(ops, NotImplementedError(
            f"{name}: ignore_index is not supported for floating point target (as in torch)"))
    if label_smoothing > 0:
        target = ops.add(ops.mul(target, 1.0 - label_smoothing), label_smoothing / c)
    prod = ops.mul(logp, target)
    if weight is not None:
        if tuple(weight.shape) != (c,):
            raise _fail(ops, ShapeError(f"{name}: weight tensor should be defined for all {c} "
                                        f"classes, got {_ttype(weight)}"))
        prod = ops.mul(prod, ops.reshape(weight, _channels_view(input, c_dim, c)))
    loss = ops.neg(ops.sum(prod, c_dim))
    if reduction == "mean":
        return ops.div(ops.sum(loss), float(max(1, math.prod(input.shape) // max(c, 1))))
    return _reduce(ops, loss, reduction)


defop("cross_entropy", "input, target",
      attrs=(("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
             ("reduction", "mean"), ("label_smoothing", 0.0)),
      decomp=_cross_entropy, ref="torch.nn.functional.cross_entropy",
      node_name="NllLossBackward0")


def _nll_loss(ops, input, target, weight=None, size_average=None, ignore_index=-100,
              reduce=None, reduction="mean"):
    name = "nll_loss"
    _tensor(ops, name, input, "input", floating=True)
    _tensor(ops, name, target, "target")
    reduction = _reduction(ops, name, reduction, size_average, reduce)
    _same_dtype(ops, name, input, weight, "weight")
    _check_index_shapes(ops, name, input, target)
    return _nll(ops, name, input, target, weight, ignore_index, reduction)


defop("nll_loss", "input, target",
      attrs=(("weight", None), ("size_average", None), ("ignore_index", -100), ("reduce", None),
             ("reduction", "mean")),
      decomp=_nll_loss, ref="torch.nn.functional.nll_loss",
      node_name="NllLossBackward0")


# ---- pointwise regression losses ---------------------------------------------------------------
def _weighted(ops, name, loss, weight, input, reduction):
    """torch 2.13's optional elementwise weight: mean = sum(w * loss) / sum(w)."""
    if weight is None:
        return _reduce(ops, loss, reduction)
    if tuple(weight.shape) != tuple(input.shape):
        raise _fail(ops, ShapeError(f"{name}: Weights and input must have the same size, got "
                                    f"{_ttype(weight)} and {_ttype(input)}"))
    loss = ops.mul(loss, weight)
    if reduction == "mean":
        return ops.div(ops.sum(loss), ops.sum(weight))
    return _reduce(ops, loss, reduction)


def _diff(ops, name, input, target):
    _tensor(ops, name, input, "input")
    _tensor(ops, name, target, "target")
    _bcast(ops, name, input, target)
    return ops.sub(input, target)


def _mse_loss(ops, input, target, size_average=None, reduce=None, reduction="mean",
              weight=None):
    reduction = _reduction(ops, "mse_loss", reduction, size_average, reduce)
    d = _diff(ops, "mse_loss", input, target)
    return _weighted(ops, "mse_loss", ops.mul(d, d), weight, input, reduction)


def _l1_loss(ops, input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    reduction = _reduction(ops, "l1_loss", reduction, size_average, reduce)
    return _weighted(ops, "l1_loss", ops.abs(_diff(ops, "l1_loss", input, target)), weight,
                     input, reduction)


def _smooth_l1_loss(ops, input, target, size_average=None, reduce=None, reduction="mean",
                    beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - beta / 2 (beta = 0: l1)."""
    reduction = _reduction(ops, "smooth_l1_loss", reduction, size_average, reduce)
    if beta < 0:
        raise _fail(ops, ValueError("smooth_l1_loss: does not support negative values for beta, "
                                    f"got beta={beta}"))
    d = _diff(ops, "smooth_l1_loss", input, target)
    a = ops.abs(d)
    if beta == 0:
        return _reduce(ops, a, reduction)
    loss = ops.where(ops.lt(a, beta), ops.mul(ops.mul(d, d), 0.5 / beta), ops.sub(a, 0.5 * beta))
    return _reduce(ops, loss, reduction)


def _huber_loss(ops, input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta * (|d| - delta / 2)."""
    reduction = _reduction(ops, "huber_loss", reduction)
    if delta <= 0:
        raise _fail(ops, ValueError("huber_loss: does not support non-positive values for "
                                    f"delta, got delta={delta}"))
    d = _diff(ops, "huber_loss", input, target)
    a = ops.abs(d)
    loss = ops.where(ops.lt(a, delta), ops.mul(ops.mul(d, d), 0.5),
                     ops.mul(ops.sub(a, 0.5 * delta), delta))
    if weight is not None:    # torch 2.13: a weighted mean here is the plain mean (not / sum(w))
        _weighted(ops, "huber_loss", loss, weight, input, "none")
        loss = ops.mul(loss, weight)
    return _reduce(ops, loss, reduction)


_LEGACY = (("size_average", None), ("reduce", None), ("reduction", "mean"))
defop("mse_loss", "input, target", attrs=_LEGACY + (("weight", None),), decomp=_mse_loss,
      ref="torch.nn.functional.mse_loss")
# complex: the mean of |input - target| (real, unless the weight is complex), as torch
defop("l1_loss", "input, target", attrs=_LEGACY + (("weight", None),), decomp=_l1_loss,
      ref="torch.nn.functional.l1_loss", flags=COMPLEX,
      node_name="MeanBackward0")
defop("smooth_l1_loss", "input, target", attrs=_LEGACY + (("beta", 1.0),),
      decomp=_smooth_l1_loss, ref="torch.nn.functional.smooth_l1_loss")
defop("huber_loss", "input, target",
      attrs=(("reduction", "mean"), ("delta", 1.0), ("weight", None)), decomp=_huber_loss,
      ref="torch.nn.functional.huber_loss")


# ---- binary and distribution losses --------------------------------------------------------------
def _same_shape(ops, name, input, target):
    if tuple(input.shape) != tuple(target.shape):
        raise _fail(ops, ShapeError(f"{name}: target size {tuple(target.shape)} must be the "
                                    f"same as input size {tuple(input.shape)}"))


def _binary_cross_entropy(ops, input, target, weight=None, size_average=None, reduce=None,
                          reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)), each log clamped at -100 as torch."""
    name = "binary_cross_entropy"
    _tensor(ops, name, input, "input", floating=True)
    _tensor(ops, name, target, "target", floating=True)
    reduction = _reduction(ops, name, reduction, size_average, reduce)
    _same_shape(ops, name, input, target)
    known = ops.known_value(input)
    if known is not None and known.size and not ((known >= 0) & (known <= 1)).all():
        raise _fail(ops, ValueError(f"{name}: all elements of input should be between 0 and 1"))
    log_x = ops.maximum(ops.log(input), -100.0)
    log_1mx = ops.maximum(ops.log1p(ops.neg(input)), -100.0)
    loss = ops.neg(ops.add(ops.mul(target, log_x), ops.mul(ops.rsub(target, 1.0), log_1mx)))
    if weight is not None:
        loss = ops.mul(loss, weight)
    return _reduce(ops, loss, reduction)


defop("binary_cross_entropy", "input, target",
      attrs=(("weight", None),) + _LEGACY, decomp=_binary_cross_entropy,
      ref="torch.nn.functional.binary_cross_entropy")


def _bce_with_logits(ops, input, target, weight=None, size_average=None, reduce=None,
                     reduction="mean", pos_weight=None):
    """(1 - t) x + (1 + (pw - 1) t) (log1p(exp(-|x|)) + max(-x, 0)): never overflows."""
    name = "binary_cross_entropy_with_logits"
    _tensor(ops, name, input, "input", floating=True)
    _tensor(ops, name, target, "target", floating=True)
    reduction = _reduction(ops, name, reduction, size_average, reduce)
    _same_shape(ops, name, input, target)
    # maximum(-x, 0) splits its gradient at x == 0, which makes d/dx exactly sigmoid(0) - t there
    softplus_neg = ops.add(ops.log1p(ops.exp(ops.neg(ops.abs(input)))),
                           ops.maximum(ops.neg(input), 0.0))
    if pos_weight is not None:
        softplus_neg = ops.mul(softplus_neg, ops.add(ops.mul(ops.sub(pos_weight, 1.0), target), 1.0))
    loss = ops.add(ops.mul(ops.rsub(target, 1.0), input), softplus_neg)
    if weight is not None:
        loss = ops.mul(loss, weight)
    return _reduce(ops, loss, reduction)


defop("binary_cross_entropy_with_logits", "input, target",
      attrs=(("weight", None),) + _LEGACY + (("pos_weight", None),), decomp=_bce_with_logits,
      ref="torch.nn.functional.binary_cross_entropy_with_logits")


def _kl_div(ops, input, target, size_average=None, reduce=None, reduction="mean",
            log_target=False):
    """Pointwise target * (log target - input) (0 where target == 0); input holds log-probs."""
    name = "kl_div"
    _tensor(ops, name, input, "input", floating=True)
    _tensor(ops, name, target, "target", floating=True)
    reduction = _reduction(ops, name, reduction, size_average, reduce, extra=("batchmean",))
    _bcast(ops, name, input, target)
    if log_target:
        loss = ops.mul(ops.exp(target), ops.sub(target, input))
    else:
        loss = ops.sub(ops.xlogy(target, target), ops.mul(target, input))
    if reduction == "batchmean":
        total = ops.sum(loss)
        return ops.div(total, float(input.shape[0])) if len(input.shape) else total
    return _reduce(ops, loss, reduction)


defop("kl_div", "input, target", attrs=_LEGACY + (("log_target", False),), decomp=_kl_div,
      ref="torch.nn.functional.kl_div")


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


defop("cosine_similarity", "x1, x2", attrs=(("dim", 1), ("eps", 1e-8)),
      decomp=_cosine_similarity, ref="torch.nn.functional.cosine_similarity",
      node_name="SumBackward1")


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
defop("normalize", "input", attrs=(("p", 2.0), ("dim", 1), ("eps", 1e-12), ("out", None)),
      decomp=_normalize, ref="torch.nn.functional.normalize", flags=COMPLEX,
      node_name="DivBackward0")


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


defop("layer_norm", "input", attrs=(("normalized_shape", REQUIRED), ("weight", None),
                                    ("bias", None), ("eps", 1e-5)),
      decomp=_layer_norm, ref="torch.nn.functional.layer_norm",
      node_name="NativeLayerNormBackward0")


def _rms_norm(ops, input, normalized_shape, weight=None, eps=None):
    """x / sqrt(mean(x^2) + eps) * weight; eps None: the dtype's machine epsilon (torch)."""
    _tensor(ops, "rms_norm", input, "input", floating=True)
    shape, dims = _normalized_dims(ops, "rms_norm", input, normalized_shape, weight)
    if eps is None:   # the epsilon of the dtype computed in (float32 for half inputs)
        eps = float(np.finfo(np.float64 if input.dtype is T.float64 else np.float32).eps)
    x = _upcast(ops, input)
    y = ops.mul(x, ops.rsqrt(ops.add(ops.mean(ops.mul(x, x), dims, True), eps)))
    return _cast(ops, _affine(ops, y, weight, None, shape), input.dtype)


defop("rms_norm", "input", attrs=(("normalized_shape", REQUIRED), ("weight", None),
                                  ("eps", None)),
      decomp=_rms_norm, ref="torch.nn.functional.rms_norm",
      node_name="MulBackward0")


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


defop("group_norm", "input", attrs=(("num_groups", REQUIRED), ("weight", None), ("bias", None),
                                    ("eps", 1e-5)),
      decomp=_group_norm, ref="torch.nn.functional.group_norm",
      node_name="NativeGroupNormBackward0")


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
defop("batch_norm", "input",
      attrs=(("running_mean", None), ("running_var", None), ("weight", None), ("bias", None),
             ("training", False), ("momentum", 0.1), ("eps", 1e-5)),
      decomp=_batch_norm, flags=INTERNAL, ref="torch.nn.functional.batch_norm",
      node_name="NativeBatchNormBackward0")


# ---- linear, embedding, one_hot, attention -----------------------------------------------------
def _linear(ops, input, weight, bias=None):
    """input @ weight.T + bias (torch.nn.functional.linear)."""
    _tensor(ops, "linear", input, "input")
    _tensor(ops, "linear", weight, "weight")
    wt = ops.permute(weight, (1, 0)) if len(weight.shape) == 2 else weight
    y = ops.matmul(input, wt)
    if bias is not None:
        _same_dtype(ops, "linear", input, bias, "bias")
        if T.broadcast_shapes(tuple(bias.shape), tuple(y.shape)) != tuple(y.shape):
            raise _fail(ops, ShapeError(f"linear: bias {_ttype(bias)} does not broadcast to the "
                                        f"output shape {tuple(y.shape)}"))
        y = ops.add(y, bias)
    return y


defop("linear", "input, weight", attrs=(("bias", None),), decomp=_linear,
      ref="torch.nn.functional.linear", flags=COMPLEX,
      node_name="AddmmBackward0")


def _embedding_infer(types, *, padding_idx):
    idx, w = types
    if idx.dtype not in (T.int64, T.int32):
        raise DTypeError(f"embedding: expected indices of dtype int64 or int32, got {idx}")
    if w.ndim != 2:
        raise ShapeError(f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got {w}")
    return T.TensorType(idx.shape + w.shape[1:], w.dtype)


def _embedding_canon(types, *, padding_idx):
    if padding_idx is None:
        return {"padding_idx": None}
    n = types[1].shape[0] if types[1].ndim else 0
    if not -n <= padding_idx < n:
        raise ValueError(f"embedding: padding_idx must be within num_embeddings ({n}), got "
                         f"{padding_idx}")
    return {"padding_idx": padding_idx % n}


def _embedding_vjp(b, ct, idx, w, out, *, padding_idx):
    """Rows of the cotangent added into their index's row; the padding row gets none (torch)."""
    if padding_idx is not None:
        keep = b.unsqueeze(b.ne(idx, padding_idx), -1)
        ct = b.where(keep, ct, 0.0)
    return [None, b.index_take_backward(ct, idx, w.shape, 0)]


# INTERNAL: torch.embedding takes (weight, indices); tg.nn.functional.embedding is the public op.
defop("embedding", "input, weight", attrs=(("padding_idx", None),), canon=_embedding_canon,
      infer=_embedding_infer, kernel=lambda xp, idx, w, *, padding_idx: xp.take(w, idx, axis=0),
      vjp=_embedding_vjp, flags=INTERNAL, ref="torch.nn.functional.embedding")


def _one_hot(ops, tensor, num_classes=-1):
    """Long tensor of shape (*, num_classes): 1 at each class index (not differentiable)."""
    name = "one_hot"
    _tensor(ops, name, tensor, "tensor")
    if tensor.dtype is not T.int64:
        raise _fail(ops, DTypeError(f"{name}: is only applicable to index tensors of dtype "
                                    f"int64, got {_ttype(tensor)}"))
    known = ops.known_value(tensor)
    if num_classes == -1:
        if known is None:
            raise _fail(ops, ValueError(f"{name}: num_classes=-1 needs the tensor's values; "
                                        "pass num_classes inside tg.compile"))
        if not known.size:
            raise _fail(ops, ValueError(f"{name}: can not infer the total number of classes "
                                        "from an empty tensor"))
        num_classes = int(known.max()) + 1
    if known is not None and known.size:
        if known.min() < 0:
            raise _fail(ops, ValueError(f"{name}: class values must be non-negative"))
        if known.max() >= num_classes:
            raise _fail(ops, ValueError(f"{name}: class values must be smaller than "
                                        f"num_classes ({num_classes})"))
    classes = ops.arange(0, num_classes, 1, T.int64)
    return ops.convert(ops.eq(ops.unsqueeze(tensor, -1), classes), T.int64)


defop("one_hot", "tensor", attrs=(("num_classes", -1),), decomp=_one_hot,
      ref="torch.nn.functional.one_hot")


def _attention_bias(ops, name, q, k, attn_mask, is_causal):
    """The additive score mask (bool masks: True = attend), or None."""
    length, source = q.shape[-2], k.shape[-2]
    if is_causal:
        if attn_mask is not None:
            raise _fail(ops, ValueError(f"{name}: explicit attn_mask should not be set when "
                                        "is_causal=True"))
        rows = ops.unsqueeze(ops.arange(0, length, 1, T.int64), 1)
        return ops.ge(rows, ops.arange(0, source, 1, T.int64))     # tril: j <= i
    if attn_mask is not None and attn_mask.dtype is not T.bool_ \
            and attn_mask.dtype is not q.dtype:
        raise _fail(ops, DTypeError(f"{name}: expected attn_mask dtype to be bool or to match "
                                    f"query dtype, got {_ttype(attn_mask)} and {_ttype(q)}"))
    return attn_mask


def _scaled_dot_product_attention(ops, query, key, value, attn_mask=None, dropout_p=0.0,
                                  is_causal=False, scale=None, enable_gqa=False):
    """softmax(q @ k^T * scale + mask) @ v over (..., L, E), (..., S, E), (..., S, Ev)."""
    name = "scaled_dot_product_attention"
    for arg, t in (("query", query), ("key", key), ("value", value)):
        _tensor(ops, name, t, arg, floating=True)
    if dropout_p:
        raise _fail(ops, NotImplementedError(
            f"{name}: dropout_p > 0 is not supported; apply tg.nn.functional.dropout to the "
            "attention weights (nn.MultiheadAttention does)"))
    if enable_gqa:
        raise _fail(ops, NotImplementedError(f"{name}: enable_gqa=True is not supported"))
    if len(query.shape) < 2 or len(key.shape) < 2 or query.shape[-1] != key.shape[-1] \
            or key.shape[-2] != value.shape[-2]:
        raise _fail(ops, ShapeError(f"{name}: expected query (..., L, E), key (..., S, E) and "
                                    f"value (..., S, Ev), got {_ttype(query)}, {_ttype(key)} "
                                    f"and {_ttype(value)}"))
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    nk = len(key.shape)
    kt = ops.permute(key, tuple(range(nk - 2)) + (nk - 1, nk - 2))
    scores = ops.mul(ops.matmul(query, kt), scale)
    mask = _attention_bias(ops, name, query, key, attn_mask, is_causal)
    if mask is not None:
        scores = (ops.where(mask, scores, float("-inf")) if mask.dtype is T.bool_
                  else ops.add(scores, mask))
    return ops.matmul(ops.softmax(scores, -1), value)


defop("scaled_dot_product_attention", "query, key, value",
      attrs=(("attn_mask", None), ("dropout_p", 0.0), ("is_causal", False), ("scale", None),
             ("enable_gqa", False)),
      decomp=_scaled_dot_product_attention,
      ref="torch.nn.functional.scaled_dot_product_attention (the math backend)",
      node_name="UnsafeViewBackward0")
