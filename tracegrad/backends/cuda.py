"""torch.backends.cuda's flags, kept so that ported scripts can set and read them.

``matmul.allow_tf32`` and friends change nothing here (eager matmuls are NumPy float32;
compiled ones follow XLA's default precision); ``is_built()`` is False as in a
CPU-only torch build.
"""


class _MatmulFlags:
    """torch.backends.cuda.matmul: TF32 / reduced-precision flags (recorded, not applied)."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "none"

    def __repr__(self) -> str:
        return f"<tracegrad.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()


def is_built() -> bool:
    """False: tracegrad is not built with CUDA (torch.backends.cuda.is_built)."""
    return False


def flash_sdp_enabled() -> bool:
    return False


def mem_efficient_sdp_enabled() -> bool:
    return False


def math_sdp_enabled() -> bool:
    return True


def enable_flash_sdp(enabled: bool) -> None:
    """Accepted and ignored: scaled_dot_product_attention has one (math) implementation."""


def enable_mem_efficient_sdp(enabled: bool) -> None:
    """Accepted and ignored (see `enable_flash_sdp`)."""


def enable_math_sdp(enabled: bool) -> None:
    """Accepted and ignored (see `enable_flash_sdp`)."""
