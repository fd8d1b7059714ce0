"""torch.nn.functional's losses as decompositions: cross_entropy, nll_loss, the pointwise
regression losses, binary cross-entropies and kl_div.

Every loss follows its torch.nn.functional namesake, argument for argument (the legacy
`size_average`/`reduce` pair included).  Checks that need values (class indices in range,
probabilities in [0, 1]) run when the value is known (eagerly), as torch's do.
"""
from __future__ import annotations

import math

from .. import types as T
from ..errors import DTypeError, ShapeError
from ..registry import AUTOCAST_FP32, COMPLEX, defcomposite
from .conv import _fail, _ttype
from .index import checked_index
from ._nn_common import _bcast, _channels_view, _reduce, _reduction, _same_dtype, _tensor


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


defcomposite("cross_entropy",
             "input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, "
             "ignore_index=-100, reduce=None, reduction='mean', label_smoothing=0.0",
             _cross_entropy, ref="torch.nn.functional.cross_entropy", node_name="NllLossBackward0",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32})


def _nll_loss(ops, input, target, weight=None, size_average=None, ignore_index=-100,
              reduce=None, reduction="mean"):
    name = "nll_loss"
    _tensor(ops, name, input, "input", floating=True)
    _tensor(ops, name, target, "target")
    reduction = _reduction(ops, name, reduction, size_average, reduce)
    _same_dtype(ops, name, input, weight, "weight")
    _check_index_shapes(ops, name, input, target)
    return _nll(ops, name, input, target, weight, ignore_index, reduction)


defcomposite("nll_loss",
             "input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, "
             "ignore_index=-100, reduce=None, reduction='mean'",
             _nll_loss, ref="torch.nn.functional.nll_loss", node_name="NllLossBackward0",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32}, node_inputs=("input",))


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


# torch's loss signature: the deprecated size_average / reduce flags before `reduction`
def _UNWEIGHTED(args):   # node_inputs: with a weight, torch's loss is several nodes too
    return None if args["weight"] is not None else ("input", "target")


_LOSS = "input: Tensor, target: Tensor, size_average=None, reduce=None, reduction='mean', "
defcomposite("mse_loss",
             _LOSS + "weight: Tensor | None = None",
             _mse_loss, ref="torch.nn.functional.mse_loss",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32}, node_inputs=_UNWEIGHTED)
# complex: the mean of |input - target| (real, unless the weight is complex), as torch
defcomposite("l1_loss",
             _LOSS + "weight: Tensor | None = None",
             _l1_loss, ref="torch.nn.functional.l1_loss", flags=COMPLEX, node_name="MeanBackward0",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32})
defcomposite("smooth_l1_loss",
             _LOSS + "beta=1.0",
             _smooth_l1_loss, ref="torch.nn.functional.smooth_l1_loss",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32},
             node_inputs=("input", "target"))
defcomposite("huber_loss",
             "input: Tensor, target: Tensor, reduction='mean', delta=1.0, "
             "weight: Tensor | None = None",
             _huber_loss, ref="torch.nn.functional.huber_loss",
             autocast={"cpu": AUTOCAST_FP32}, node_inputs=_UNWEIGHTED)


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


defcomposite("binary_cross_entropy",
             "input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, "
             "reduce=None, reduction='mean'",
             _binary_cross_entropy, ref="torch.nn.functional.binary_cross_entropy",
             autocast={"cpu": AUTOCAST_FP32}, node_inputs=("input", "target"))


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


defcomposite("binary_cross_entropy_with_logits",
             "input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None, "
             "reduce=None, reduction='mean', pos_weight: Tensor | None = None",
             _bce_with_logits, ref="torch.nn.functional.binary_cross_entropy_with_logits",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32},
             node_inputs=("input", "target"))


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


defcomposite("kl_div",
             _LOSS + "log_target=False",
             _kl_div, ref="torch.nn.functional.kl_div",
             autocast={"cpu": AUTOCAST_FP32, "cuda": AUTOCAST_FP32})
