"""@tg.compile: trace a Python function with abstract tensors into one XLA program."""
from .compile import compile
from .persistent_cache import from_environment as _cache_from_environment
from .persistent_cache import set_persistent_cache

__all__ = ["compile", "set_persistent_cache"]

_cache_from_environment()   # TRACEGRAD_COMPILATION_CACHE
