"""torch.nn.functional's distance and margin losses (siamese / metric-learning programs):
pairwise_distance, triplet_margin_loss, margin_ranking_loss, cosine_embedding_loss,
hinge_embedding_loss, soft_margin_loss; and max_pool1d / avg_pool1d /
adaptive_avg_pool1d as their 2-d ops over a unit height.

Composites of registry ops; formulas and reductions as torch's (ATen's Loss.cpp and
Distance.cpp), each following its torch.nn.functional namesake.
"""
from __future__ import annotations

from .. import _ops
from ..tensor import Tensor

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(name: str, loss: Tensor, reduction: str) -> Tensor:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: {reduction} is not a valid value for reduction")
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def pairwise_distance(x1, x2, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    """||x1 - x2 + eps||_p over the last dim (torch.nn.functional.pairwise_distance)."""
    return _ops.norm(x1 - x2 + eps, p, -1, keepdim)


def triplet_margin_loss(anchor, positive, negative, margin: float = 1.0, p: float = 2,
                        eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with pairwise distances (Schroff et al., 2015;
    torch.nn.functional.triplet_margin_loss; `swap` uses min(d(a, n), d(p, n)))."""
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _ops.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce("triplet_margin_loss", _ops.clamp_min(margin + d_pos - d_neg, 0.0), reduction)


def margin_ranking_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean"):
    """max(0, -target * (input1 - input2) + margin), target +-1
    (torch.nn.functional.margin_ranking_loss)."""
    loss = _ops.clamp_min(-target * (input1 - input2) + margin, 0.0)
    return _reduce("margin_ranking_loss", loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where -1; cos over
    the last dim with torch's 1e-12 guard (torch.nn.functional.cosine_embedding_loss)."""
    prod = (input1 * input2).sum(-1)
    mag = ((input1 * input1).sum(-1) + 1e-12) * ((input2 * input2).sum(-1) + 1e-12)
    cos = prod / mag.sqrt()
    zeros = cos * 0.0
    pos = _ops.where(target == 1, 1.0 - cos, zeros)
    neg = _ops.where(target == -1, _ops.clamp_min(cos - margin, 0.0), zeros)
    return _reduce("cosine_embedding_loss", pos + neg, reduction)


def hinge_embedding_loss(input, target, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean"):
    """x where target is 1, max(0, margin - x) where -1
    (torch.nn.functional.hinge_embedding_loss)."""
    zeros = input * 0.0
    loss = (_ops.where(target != 1, _ops.clamp_min(margin - input, 0.0), zeros)
            + _ops.where(target != -1, input, zeros))
    return _reduce("hinge_embedding_loss", loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction: str = "mean"):
    """log(1 + exp(-target * input)) (torch.nn.functional.soft_margin_loss)."""
    return _reduce("soft_margin_loss", _ops.softplus(-target * input), reduction)


def _pool1d(pool2d, input, kernel_size, stride, padding, *rest):
    one = (lambda v: (1, v[0] if isinstance(v, (tuple, list)) else v))
    stride = kernel_size if stride is None or stride == () else stride
    out = pool2d(input.unsqueeze(-2), one(kernel_size), one(stride),
                 (0, padding[0] if isinstance(padding, (tuple, list)) else padding), *rest)
    if isinstance(out, tuple):          # max_pool2d with return_indices
        return tuple(o.squeeze(-2) for o in out)
    return out.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over windows of the last dim of (N, C, L) or (C, L) (torch's max_pool1d)."""
    d = dilation[0] if isinstance(dilation, (tuple, list)) else dilation
    return _pool1d(_ops.max_pool2d, input, kernel_size, stride, padding, (1, d), ceil_mode,
                   return_indices)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True):
    """Mean over windows of the last dim of (N, C, L) or (C, L) (torch's avg_pool1d)."""
    return _pool1d(_ops.avg_pool2d, input, kernel_size, stride, padding, ceil_mode,
                   count_include_pad)


def adaptive_avg_pool1d(input, output_size):
    """Mean over `output_size` adaptive windows of the last dim (torch's adaptive_avg_pool1d)."""
    size = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    return _ops.adaptive_avg_pool2d(input.unsqueeze(-2), (1, size)).squeeze(-2)


__all__ = ["adaptive_avg_pool1d", "avg_pool1d", "cosine_embedding_loss", "hinge_embedding_loss",
           "margin_ranking_loss", "max_pool1d", "pairwise_distance", "soft_margin_loss",
           "triplet_margin_loss"]
