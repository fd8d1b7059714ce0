"""torch.backends.mps's queries: tracegrad has no Metal device."""


def is_available() -> bool:
    """False (torch.backends.mps.is_available off macOS)."""
    return False


def is_built() -> bool:
    """False: tracegrad is not built with MPS."""
    return False
