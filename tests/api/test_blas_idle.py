"""`import tracegrad` makes OpenBLAS's idle threads sleep at once (backends/blas_idle.py),
also when NumPy was imported and its threads running before; a user's setting wins."""
import os
import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent("""
    import ctypes, os, sys
    import numpy as np
    a = np.arange(512 * 512, dtype=np.float64).reshape(512, 512) % 7
    a @ a                      # OpenBLAS's threads run, with the wait it read at load
    import tracegrad
    import threadpoolctl
    libs = [c for c in threadpoolctl.ThreadpoolController().lib_controllers
            if c.internal_api == "openblas"]
    if not libs:
        print("no-openblas"); sys.exit(0)
    got = {ctypes.CDLL(c.filepath).openblas_thread_timeout() for c in libs}
    b = a @ a                  # the restarted threads compute the same product
    ref = np.einsum("ij,jk->ik", a, a)
    assert np.array_equal(b, ref), "product changed after the restart"
    print(os.environ.get("OPENBLAS_THREAD_TIMEOUT"), sorted(got))
""")


def _run(env_extra: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    env.update(env_extra)
    out = subprocess.run([sys.executable, "-c", CHECK], env=env, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


def test_numpy_first_then_tracegrad_restarts_openblas_with_the_short_wait():
    got = _run({})
    if got == "no-openblas":
        pytest.skip("NumPy does not use OpenBLAS here")
    assert got == "4 [4]"


def test_the_users_own_wait_wins():
    got = _run({"OPENBLAS_THREAD_TIMEOUT": "20"})
    if got == "no-openblas":
        pytest.skip("NumPy does not use OpenBLAS here")
    assert got == "20 [20]"
