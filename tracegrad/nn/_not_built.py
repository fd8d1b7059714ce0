"""torch.nn and torch.nn.functional names tracegrad does not build (torch 2.13's public
names minus ours): asking for one raises NotImplementedError that says so and what to use
instead, never an AttributeError a ported script cannot act on."""
from __future__ import annotations

_COMPOSE = ("write it as an nn.Module / function from tracegrad ops (composites get "
            "gradients and tg.compile for free)")
_LAZY = "give the input size explicitly (nn.Linear / nn.Conv2d / nn.BatchNorm2d ...)"
_3D = "only 1-d/2-d convolution and pooling ops are built (conv1d, conv2d, max_pool2d, ...)"

HINTS = {
    **{n: _LAZY for n in ("LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
                          "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
                          "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
                          "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d",
                          "UninitializedParameter", "UninitializedBuffer")},
    **{n: _3D for n in ("Conv3d", "ConvTranspose1d", "ConvTranspose3d", "MaxPool3d",
                        "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool3d",
                        "FractionalMaxPool3d", "conv3d", "conv_transpose1d", "conv_transpose3d",
                        "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
                        "lp_pool3d", "fractional_max_pool3d", "conv_tbc")},
    "SyncBatchNorm": "nn.BatchNorm1d/2d/3d (tracegrad runs one process; "
                     "tg.compile(step, mesh=...) shards the batch)",
    "EmbeddingBag": "nn.Embedding followed by .sum(1) / .mean(1) (or index_add for offsets)",
    "embedding_bag": "F.embedding followed by .sum(1) / .mean(1)",
    "Buffer": "module.register_buffer(name, tensor)",
    "Container": "nn.Module (torch's Container is deprecated)",
    "NLLLoss2d": "nn.NLLLoss (it takes (N, C, H, W) inputs)",
    "upsample": "F.interpolate", "upsample_nearest": "F.interpolate(mode='nearest')",
    "upsample_bilinear": "F.interpolate(mode='bilinear', align_corners=True)",
    "multi_head_attention_forward": "nn.MultiheadAttention",
}

NN_NAMES = frozenset(
    "AdaptiveAvgPool3d AdaptiveLogSoftmaxWithLoss AdaptiveMaxPool1d AdaptiveMaxPool2d "
    "AdaptiveMaxPool3d AlphaDropout AvgPool3d Buffer CTCLoss ChannelShuffle Container Conv3d "
    "ConvTranspose1d ConvTranspose3d CrossMapLRN2d EmbeddingBag FeatureAlphaDropout "
    "FractionalMaxPool2d FractionalMaxPool3d GaussianNLLLoss LPPool1d LPPool2d LPPool3d "
    "LazyBatchNorm1d LazyBatchNorm2d LazyBatchNorm3d LazyConv1d LazyConv2d LazyConv3d "
    "LazyConvTranspose1d LazyConvTranspose2d LazyConvTranspose3d LazyInstanceNorm1d "
    "LazyInstanceNorm2d LazyInstanceNorm3d LazyLinear LinearCrossEntropyLoss LocalResponseNorm "
    "MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d MultiLabelMarginLoss "
    "MultiLabelSoftMarginLoss MultiMarginLoss NLLLoss2d PoissonNLLLoss RReLU SyncBatchNorm "
    "TripletMarginWithDistanceLoss UninitializedBuffer UninitializedParameter".split())

FUNCTIONAL_NAMES = frozenset(
    "adaptive_avg_pool3d adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d "
    "alpha_dropout channel_shuffle conv3d conv_tbc conv_transpose1d conv_transpose3d ctc_loss "
    "embedding_bag feature_alpha_dropout fractional_max_pool2d fractional_max_pool3d "
    "gaussian_nll_loss gumbel_softmax local_response_norm lp_pool1d lp_pool2d lp_pool3d "
    "max_pool3d max_unpool1d max_unpool2d max_unpool3d multi_head_attention_forward "
    "multi_margin_loss multilabel_margin_loss multilabel_soft_margin_loss pdist "
    "poisson_nll_loss rrelu triplet_margin_with_distance_loss upsample upsample_bilinear "
    "upsample_nearest linear_cross_entropy".split())


class NotBuiltError(NotImplementedError, AttributeError):
    """Also an AttributeError, so that probes (``hasattr``, pickle's ``whichmodule``) read
    a name that is not built as missing."""


def refuse(module: str, name: str, known: frozenset, hint=None):
    """The module-level ``__getattr__`` answer for `name` in `module`: NotBuiltError for a
    torch name in `known` (what to do instead from ``hint(name)``, default this module's
    HINTS), else the plain AttributeError."""
    if name in known:
        instead = hint(name) if hint is not None else HINTS.get(name, _COMPOSE)
        raise NotBuiltError(f"{module}.{name} is not built in tracegrad: {instead}. "
                            f"docs/porting.md lists what exists")
    raise AttributeError(f"module '{module}' has no attribute '{name}'")
