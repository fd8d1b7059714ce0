"""torch.backends.cudnn's flags, kept so that ported scripts can set and read them.

tracegrad runs no cuDNN kernels (convolutions are NumPy eagerly, XLA when compiled), so
the flags change nothing; ``is_available()`` is False as in a CPU-only torch build.
"""
benchmark = False
deterministic = False
enabled = True
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    """False: no cuDNN (torch.backends.cudnn.is_available on a CPU-only build)."""
    return False


def version():
    """None, as torch without cuDNN."""
    return None
