"""Fusion's effect on the interpreter: peak memory (tracemalloc) and median time of the
transformer's backward program, fused vs unfused.

Peak memory is measured in a fresh process per variant, so neither sees the other's
allocations.  Time is measured in one process with the two programs' runs interleaved
(unfused, fused, unfused, ...): both see the same machine load and allocator state, which
matters more than the difference itself when each variant runs in its own process
(process-to-process spread is about ±5% on a 2-core machine).

    python -m benchmarks.fusion [--repeats N]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

_SETUP = r"""
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
programs = {"unfused": interpreter.Schedule(r.backward), "fused": interpreter.Schedule(fuse(r.backward)[0])}
"""

_PEAK = _SETUP + r"""
run = programs[sys.argv[1]].run
run(ins)
tracemalloc.start()
run(ins)
print(json.dumps(tracemalloc.get_traced_memory()[1]))
"""

_TIME = _SETUP + r"""
times = {k: [] for k in programs}
for k, p in programs.items():
    p.run(ins)   # warm-up
for _ in range(int(sys.argv[1])):
    for k, p in programs.items():
        t = time.perf_counter()
        p.run(ins)
        times[k].append(time.perf_counter() - t)
print(json.dumps({k: 1e3 * float(np.median(v)) for k, v in times.items()}))
"""


def _child(code: str, *args) -> object:
    res = subprocess.run([sys.executable, "-c", code, *map(str, args)],
                         capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure(repeats: int = 15) -> dict:
    """{"unfused"|"fused": {"peak_bytes": int, "median_ms": float}}."""
    medians = _child(_TIME, repeats)
    return {v: {"peak_bytes": _child(_PEAK, v), "median_ms": medians[v]}
            for v in ("unfused", "fused")}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15, help="timed runs of each program")
    r = measure(ap.parse_args().repeats)
    for k, v in r.items():
        print(f"{k:8} peak {v['peak_bytes'] / 1e6:6.1f} MB   median {v['median_ms']:7.1f} ms")
    print(f"fused/unfused time {r['fused']['median_ms'] / r['unfused']['median_ms']:.3f}")
