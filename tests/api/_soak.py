"""A training loop whose memory test_soak.py watches, run in a subprocess of its own.

    python tests/api/_soak.py MODE SHAPES WARMUP STEPS [EVERY]

MODE: ``compile`` (a `tg.compile`d step) or an eager executor (``auto``, ``jax``,
``interpreter``).  SHAPES: ``fixed`` (batch 16 every step) or ``change`` (a batch size never
seen before on every step).  After WARMUP steps the loop runs STEPS more, reading the
resident set size every EVERY steps without collecting garbage itself (what the program's
own collections leave), then collects and counts the live objects.  Prints one JSON object:
``rss_mib`` (the readings), ``objects`` (live objects after the warm-up and at the end,
each after a full collection), ``seconds`` (the measured steps), ``step_seconds`` (the mean
step time of each reading's window) and ``executables`` (XLA executables jax still holds at
the end, before that collection: each ~1-2 MiB of native memory the collector cannot see).

The backward-program cache is cut to 32 programs (``TRACEGRAD_SOAK_PROGRAMS``) so that its
plateau comes within a short warm-up; tg.compile keeps its default 8 programs.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import time
import warnings


def rss_mib() -> float:
    """The resident set size now (Linux); elsewhere the peak, which bounds growth as well."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except OSError:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2 ** 20 if sys.platform == "darwin" else peak / 2 ** 10


def main(mode: str, shapes: str, warmup: int, steps: int, every: int = 50) -> dict:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from helpers import classification_step   # tests/helpers.py

    import tracegrad as tg
    from tracegrad.autograd import backward_program

    warnings.simplefilter("ignore")   # tg.compile warns on every recompile past its cache
    backward_program.CACHE_SIZE = int(os.environ.get("TRACEGRAD_SOAK_PROGRAMS", "32"))
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(8, 32), tg.nn.ReLU(), tg.nn.Linear(32, 4))
    step = classification_step(model, tg.optim.SGD(model.parameters(), lr=0.01, momentum=0.9))

    if mode == "compile":
        run = tg.compile(step)
    else:
        tg.set_executor(mode)
        run = step

    def call(i):
        n = i + 1 if shapes == "change" else 16
        run(tg.randn(n, 8), tg.randint(0, 4, (n,)))

    for i in range(warmup):
        call(i)
    gc.collect()
    objects = [len(gc.get_objects())]
    readings, step_seconds = [rss_mib()], []
    start = last = time.perf_counter()
    for i in range(warmup, warmup + steps):
        call(i)
        if (i - warmup + 1) % every == 0:
            readings.append(rss_mib())
            now = time.perf_counter()
            step_seconds.append(round((now - last) / every, 4))
            last = now
            # progress on stderr, so that a run stopped early still tells its curve
            print(f"step {i + 1 - warmup}: {readings[-1]:.1f} MiB", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - start
    executables = xla_executables()
    gc.collect()
    objects.append(len(gc.get_objects()))
    return {"rss_mib": readings, "objects": objects, "seconds": seconds,
            "step_seconds": step_seconds, "executables": executables}


def xla_executables() -> int:
    """XLA executables in jax's compilation cache (a private attribute of jax 0.10; -1 when
    jax is not imported or has moved it).  Its entries are keyed weakly by the lowered
    module, so the count is what some live object still holds."""
    pxla = sys.modules.get("jax._src.interpreters.pxla")
    cache = getattr(pxla, "_cached_compilation", None)
    return cache.cache_info().currsize if hasattr(cache, "cache_info") else -1


if __name__ == "__main__":
    mode, shapes, warmup, steps, *rest = sys.argv[1:]
    print(json.dumps(main(mode, shapes, int(warmup), int(steps), *map(int, rest))))
