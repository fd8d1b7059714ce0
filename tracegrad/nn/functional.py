"""torch.nn.functional names, backed by the op registry."""
from .._ops import cross_entropy, log_softmax, mse_loss, relu, sigmoid, softmax, tanh

__all__ = ["cross_entropy", "log_softmax", "mse_loss", "relu", "sigmoid", "softmax", "tanh"]
