"""torch.optim-shaped optimizers and learning-rate schedulers (`tracegrad.optim.lr_scheduler`).

The hyper-parameters schedules change (lr, momentum, betas, weight_decay) reach compiled
steps as data, so a new learning rate every step does not retrace (see optimizer.py).
`LBFGS` runs eagerly only; `SparseAdam` is refused (no sparse gradients).
"""
from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam, RAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "lr_scheduler",
           "swa_utils"]
