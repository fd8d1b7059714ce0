"""torch.nn for tracegrad: Module and the layers, losses, `functional` and `init`.

Layers follow torch's constructors, default initializations (drawn from the
tracegrad generator, `tg.manual_seed`), printing, `state_dict()` (parameters and
persistent buffers) and `train()`/`eval()` behaviour.
"""
from . import functional, init, utils
from . import parallel  # noqa: F401  (nn.parallel.DistributedDataParallel, one process)
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from ..tensor import Parameter
from ._not_built import NN_NAMES, refuse
from .parallel import DataParallel  # noqa: F401  (torch.nn.DataParallel)

__all__ = ["DataParallel", "Parameter", "functional", "init", "utils"] + _modules_all


def __getattr__(name: str):
    return refuse("tracegrad.nn", name, NN_NAMES)
