"""Fusion's effect on the interpreter: peak memory (tracemalloc) and median time of the
transformer's backward program, fused vs unfused, each measured in a fresh process.

    python -m benchmarks.fusion
"""
from __future__ import annotations

import json
import subprocess
import sys

_CHILD = r"""
import json, sys, time, tracemalloc
import numpy as np
import tracegrad as tg
from benchmarks import models
from tracegrad.backends import interpreter
from tracegrad.passes.fuse import fuse
tg.manual_seed(0)
m = models.Transformer()
idx, tgt = models.transformer_batch()
r = tg.explain(lambda a, b: models.transformer_loss(m, a, b), idx, tgt)
ins = r.backward_inputs()
g = fuse(r.backward)[0] if sys.argv[1] == "fused" else r.backward
interpreter.run(g, ins)
tracemalloc.start()
interpreter.run(g, ins)
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    interpreter.run(g, ins)
    times.append(time.perf_counter() - t)
print(json.dumps({"peak_bytes": peak, "median_ms": 1e3 * float(np.median(times))}))
"""


def measure(repeats: int = 5) -> dict:
    out = {}
    for variant in ("unfused", "fused"):
        res = subprocess.run([sys.executable, "-c", _CHILD, variant, str(repeats)],
                             capture_output=True, text=True, check=True)
        out[variant] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


if __name__ == "__main__":
    r = measure()
    for k, v in r.items():
        print(f"{k:8} peak {v['peak_bytes'] / 1e6:6.1f} MB   median {v['median_ms']:7.1f} ms")
