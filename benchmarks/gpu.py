"""The GPU check of issue 17: ``python -m benchmarks.gpu [--steps N]`` on a machine whose
jax has a GPU.

Runs the MLP and transformer training steps as `training.run` does (interleaved, medians),
without torch or the interpreter, and prints each row's step time against the jax.jit row.
On a GPU, jax's default device is the GPU, so ``tg.compile`` of host tensors copies the
parameters to it and back every step, ``tg.compile, xla tensors`` keeps them there
(device-resident, donated), and ``tracegrad eager`` runs NumPy kernels with its backward
programs on the GPU.  Exits with status 2, saying so, where jax has no GPU.
"""
from __future__ import annotations

import argparse
import sys

from . import harness, training


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.gpu", description=__doc__)
    ap.add_argument("--steps", type=int, default=20, help="timed steps per implementation")
    ns = ap.parse_args(argv)
    import jax
    if jax.default_backend() != "gpu":
        print(f"benchmarks.gpu: jax's default backend is {jax.default_backend()!r}, not a GPU",
              file=sys.stderr)
        return 2
    print(f"devices: {jax.devices()}")
    records = []
    for name in ("mlp", "transformer"):
        records += training.run(name, ns.steps, use_torch=False, torch_compile=False,
                                interpreter=False)
    harness.add_ratios(records)
    print(harness.table(records, harness.targets(records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
