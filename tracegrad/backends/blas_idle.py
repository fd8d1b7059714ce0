"""OpenBLAS's idle threads sleep at once instead of spinning (``import tracegrad``).

Why: after each multi-threaded product OpenBLAS's worker threads busy-wait for their next
job for 2**28 cycles (about 0.1 s) before they sleep.  An eager step alternates NumPy
products with XLA programs (backward programs; the large convs, draws and GELUs that
ir/ops/_xla_handoff.py hands to XLA), so on a 2-core machine a spinning OpenBLAS thread took one of the two cores from XLA's
thread pool.  Measured on the development machine (quiet, medians of 12 eager steps, wall /
process CPU ms; docs/performance.md, "Conv nets and eager steps"): MNIST 181 /
352 -> 120 / 189, the transformer 249 / 488 -> 222 / 327, minGPT 111 / 222 -> 95 / 103,
the MLP 60 / 117 -> 55 / 73; the MNIST step's backward program alone ran in 58 ms, in
the step in 108.  OpenBLAS reads ``OPENBLAS_THREAD_TIMEOUT`` (its wait, 2**N cycles, N in
4..30) when it starts its threads, so:

- NumPy not loaded yet: setting the variable is enough.
- Loaded (the user imported NumPy first): its OpenBLAS re-reads its environment
  (``openblas_read_env``) and stops its threads (``blas_thread_shutdown_``, OpenBLAS's
  own fork handler); the next product starts them with the new wait.

A user's own ``OPENBLAS_THREAD_TIMEOUT`` wins (OpenBLAS's default is 28).  Other BLAS
libraries (MKL, Accelerate) and OpenBLAS builds without these symbols are left alone.
"""
from __future__ import annotations

import os
import sys

ENV = "OPENBLAS_THREAD_TIMEOUT"
TIMEOUT = "4"   # 2**4 cycles: the threads sleep right after a job


def apply() -> bool:
    """Set the wait (see the module docstring); whether tracegrad set it."""
    if ENV in os.environ:
        return False
    os.environ[ENV] = TIMEOUT
    if "numpy" in sys.modules:
        _restart_loaded_openblas()
    return True


def _restart_loaded_openblas() -> None:
    import ctypes
    try:
        import threadpoolctl
        libs = [c.filepath for c in threadpoolctl.ThreadpoolController().lib_controllers
                if c.internal_api == "openblas"]
    except Exception:   # noqa: BLE001 - no threadpoolctl / unknown libraries: nothing to do
        return
    for path in libs:
        try:
            lib = ctypes.CDLL(path)   # the loaded library (dlopen counts a second reference)
            read_env, shutdown = lib.openblas_read_env, lib.blas_thread_shutdown_
        except (OSError, AttributeError):
            continue
        read_env()
        shutdown()
