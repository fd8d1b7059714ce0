"""Executors for IR graphs (the NumPy interpreter and the JAX lowering), plus torch.backends'
flag modules `cuda`, `cudnn` and `mps` (recorded for ported scripts; they change nothing)."""
from . import cuda, cudnn, mps  # noqa: F401  (tg.backends.cudnn.benchmark = True ...)
