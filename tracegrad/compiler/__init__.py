"""@tg.compile: trace a Python function with abstract tensors into one XLA program."""
from .compile import compile

__all__ = ["compile"]
