"""torch.nn.parameter: where pygcn-style code imports `Parameter` from
(``from torch.nn.parameter import Parameter``); the same class as `tg.nn.Parameter`."""
from ..tensor import Parameter
from ._not_built import NN_NAMES, refuse

__all__ = ["Parameter"]


def __getattr__(name: str):
    # Buffer / UninitializedParameter / UninitializedBuffer: refused by name, saying what
    # to use instead, as tg.nn refuses them
    return refuse("tracegrad.nn.parameter", name, NN_NAMES)
