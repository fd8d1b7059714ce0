"""The matmul kernels' product: NumPy's matmul with the BLAS thread count chosen by the size of
the product, and jax's with the dot precision chosen by the operand dtype (`product`).

Why: OpenBLAS splits every GEMM over all of its threads.  For the small products of an
eager step (an LSTM cell's 32x64 @ 64x256, a small MLP's layers) the split costs more than
the work, and when the cores are busy (other processes, or XLA's worker threads in this
process after a backward program ran on jax) the threads wait on each other.  Measured on
the 2-core development machine under load: a 32x128 @ 128x512 float32 product took
1.3-12.8 ms on OpenBLAS's 2 threads and 0.12-0.16 ms on one, and the eager steps of the
LSTM example went from 0.87 to 0.19 s.  So products of fewer than `SMALL` multiply-adds
run on one thread and larger ones keep the library's count.  threadpoolctl finds the BLAS
NumPy loaded and switches its count (about 1.5 us a switch); without one, nothing changes.
"""
from __future__ import annotations

import math

import numpy as np

SMALL = 1 << 22   # multiply-adds; above it the large GEMMs of a transformer step use every thread

_libs = None   # the BLAS controllers NumPy uses, found on the first product (all of them:
# a count of 1 now may be raised later by tg.set_num_threads, so it is read per product)


def _blas() -> list:
    global _libs
    if _libs is None:
        try:
            import threadpoolctl   # found lazily: scanning the loaded libraries takes ms
            _libs = [lib for lib in threadpoolctl.ThreadpoolController().lib_controllers
                     if lib.user_api == "blas"]
        except Exception:   # no threadpoolctl or an unknown BLAS: the library's own choice
            _libs = []
    return _libs


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.matmul(a, b)``, on one BLAS thread when the product is small."""
    macs = math.prod(a.shape) * b.shape[-1]
    libs = _blas() if macs < SMALL else ()
    if not libs:
        return np.matmul(a, b)
    counts = [lib.num_threads for lib in libs]
    if max(counts) <= 1:
        return np.matmul(a, b)
    for lib in libs:
        lib.set_num_threads(1)
    try:
        return np.matmul(a, b)
    finally:
        for lib, n in zip(libs, counts):
            lib.set_num_threads(n)


# The half-precision floating dtypes whose jax dot accumulates in float32 (`product`).
_HALF = frozenset(("bfloat16", "float16"))


def product(xp, a, b):
    """``a @ b`` with `a`'s dtype (a, b: arrays of one dtype, ``[..., M, K] @ [..., K, N]``),
    on NumPy (`matmul`: BLAS threads by size) or jax.numpy (`xp`).

    A bfloat16 / float16 product on jax is a dot with float32 results
    (``preferred_element_type``), rounded once to the operand dtype: what torch's autocast
    GEMMs compute.  Why not the plain half-precision dot: XLA CPU rewrites it to converts of
    both operands to float32, a float32 dot and a convert back, while the mixed dot
    (bf16 x bf16 -> f32) runs on the native bf16 GEMM.  Measured on the 2-core
    development machine (interleaved, median CPU time; docs/performance.md, "Mixed
    precision (bf16)"): (1024,256)@(256,1024) bf16 2.7 ms against 8.6 ms plain (f32: 7.1),
    the transformer's other GEMMs 1.6-4.6x; its compiled bf16-autocast step went from 1.30x
    to 1.06-1.08x the CPU time of its float32 step (22 of its 39 dots on the bf16 GEMM; XLA
    still runs a dot whose operand is a transpose in float32).  float16 has no native CPU
    GEMM (both forms ran at the float32 speed) and takes the same form for the same float32
    accumulation.  NumPy's bfloat16 matmul (ml_dtypes) returns float32; it is cast back.
    """
    if xp is np:
        out = matmul(a, b)
    elif a.dtype.name in _HALF:
        return xp.matmul(a, b, preferred_element_type=xp.float32).astype(a.dtype)
    else:
        out = xp.matmul(a, b)
    return out if out.dtype == a.dtype else out.astype(a.dtype)
