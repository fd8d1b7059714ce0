"""``--cpus N`` of the benchmark scripts: pin the process before any thread pool starts.

No NumPy here: this module runs before NumPy is imported.
"""
from __future__ import annotations

import os


def pin(cpus: int) -> None:
    """Run on the first `cpus` CPUs: process affinity, and one thread per CPU for the
    OpenMP / OpenBLAS / MKL pools.  Must come before NumPy, jax or torch start their
    threads: a thread inherits the affinity of the thread that creates it, and OpenBLAS
    reads its thread count when it loads."""
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:cpus])
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(cpus)


def early_cpus(argv: list[str]) -> int | None:
    """The value of ``--cpus N`` / ``--cpus=N`` in `argv` (None when absent or invalid)."""
    for i, a in enumerate(argv):
        value = a.split("=", 1)[1] if a.startswith("--cpus=") else (
            argv[i + 1] if a == "--cpus" and i + 1 < len(argv) else None)
        if value is not None and value.isdigit() and int(value) > 0:
            return int(value)
    return None
