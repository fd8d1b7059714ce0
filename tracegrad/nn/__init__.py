"""Enough of torch.nn to write real training steps: Module, Linear, ReLU, Sequential, functional."""
from . import functional
from .modules import Linear, Module, ReLU, Sequential, Tanh, Sigmoid
from ..tensor import Parameter

__all__ = ["Linear", "Module", "Parameter", "ReLU", "Sequential", "Sigmoid", "Tanh", "functional"]
