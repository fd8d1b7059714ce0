"""torch.nn's layers, one module per family (container, linear, conv, pooling, norm, ...)."""
from .activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, Mish, ReLU, ReLU6, SiLU,
                         Sigmoid, Softmax, Softplus, Tanh)
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module
from .norm import BatchNorm1d, BatchNorm2d, BatchNorm3d, GroupNorm, LayerNorm, RMSNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
# recurrent and transformer layers (issue 16)
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .sparse import Embedding
from .param_containers import ParameterDict, ParameterList
from .spatial import (Bilinear, Fold, PixelShuffle, PixelUnshuffle, Unfold, Upsample,
                      UpsamplingBilinear2d, UpsamplingNearest2d)
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .padding import PADDING_LAYERS
from .activation_composite import ACTIVATIONS
from .activation_composite import (CELU, GLU, SELU, Hardshrink, Hardsigmoid,  # noqa: F401
                                   Hardswish, LogSigmoid, PReLU, Softmax2d, Softmin,
                                   Softshrink, Softsign, Tanhshrink, Threshold)
from .distance import CosineSimilarity, PairwiseDistance
from .loss import (CosineEmbeddingLoss, HingeEmbeddingLoss, MarginRankingLoss,  # noqa: F401
                   SoftMarginLoss, TripletMarginLoss)
from .pooling import AdaptiveAvgPool1d, AvgPool1d, MaxPool1d
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: F401
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d",
           "BatchNorm2d", "Conv1d", "Conv2d", "ConvTranspose2d", "CrossEntropyLoss", "Dropout",
           "ELU", "Embedding", "Flatten", "GELU", "GroupNorm", "Hardtanh", "HuberLoss",
           "Identity", "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax",
           "MSELoss", "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList",
           "MultiheadAttention", "NLLLoss", "NonDynamicallyQuantizableLinear", "RMSNorm", "ReLU",
           "ReLU6", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softplus", "Tanh",
           "Unflatten",
           "Bilinear", "Dropout1d", "Dropout2d", "Dropout3d", "ParameterDict", "ParameterList",
           "PixelShuffle", "PixelUnshuffle", "Upsample",
           # recurrent and transformer layers (issue 16)
           "GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase",
           "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", *PADDING_LAYERS, *ACTIVATIONS,
           "AdaptiveAvgPool1d", "AvgPool1d", "CosineEmbeddingLoss", "CosineSimilarity",
           "HingeEmbeddingLoss", "MarginRankingLoss", "MaxPool1d", "PairwiseDistance",
           "SoftMarginLoss", "TripletMarginLoss", "BatchNorm3d", "Fold", "Unfold",
           "UpsamplingBilinear2d", "UpsamplingNearest2d"]
