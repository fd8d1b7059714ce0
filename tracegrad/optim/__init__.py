"""torch.optim-shaped optimizers."""
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD"]
