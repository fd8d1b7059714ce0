"""torch.optim-shaped optimizers and learning-rate schedulers (`tracegrad.optim.lr_scheduler`).

The hyper-parameters schedules change (lr, momentum, betas, weight_decay) reach compiled
steps as data, so a new learning rate every step does not retrace (see optimizer.py).
"""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]
