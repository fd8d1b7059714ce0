"""torch.autograd-shaped namespace: backward, grad, grad modes, the tape's Node."""
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .graph import AccumulateGrad, Node

__all__ = ["AccumulateGrad", "Node", "backward", "enable_grad", "grad", "is_grad_enabled",
           "no_grad", "set_grad_enabled"]
