"""Loss modules (torch.nn): each calls its tg.nn.functional namesake; class weights are buffers."""
from __future__ import annotations

from .. import functional as F
from .module import Module


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    return "none" if reduce is False else ("mean" if size_average else "sum")


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax + NLL; class indices or probabilities (torch.nn.CrossEntropyLoss)."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class SmoothL1Loss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class MarginRankingLoss(_Loss):
    """max(0, -y * (x1 - x2) + margin) (torch.nn.MarginRankingLoss)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class CosineEmbeddingLoss(MarginRankingLoss):
    """1 - cos where y = 1, max(0, cos - margin) where y = -1 (torch.nn.CosineEmbeddingLoss)."""

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class HingeEmbeddingLoss(MarginRankingLoss):
    """x where y = 1, max(0, margin - x) where y = -1 (torch.nn.HingeEmbeddingLoss)."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-y * x)) (torch.nn.SoftMarginLoss)."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0) (torch.nn.TripletMarginLoss)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                     self.eps, self.swap, reduction=self.reduction)
