"""The benchmark runner: python -m benchmarks [--quick] [--only NAME] [--json FILE] ...

Each workload runs under every available implementation in one process,
interleaved (A B A B ...), after a warm-up; the table shows medians with
min-max, every figure's ratio to the hand-written JAX row of the same
workload, and each of the issue's targets with its limit and ✓/✗.  The first
step's loss must agree across implementations before anything is timed.
PyTorch rows appear when torch is importable (the ``bench`` extra); torch is
imported only then.  Method and results: docs/performance.md.

Workloads: mlp, cnn, transformer, transformer_bf16 (bf16 autocast), lstm (training steps),
mnist, dcgan, resnet, mingpt, vae, makemore, word_lm, nanogpt (ported PyTorch programs,
eager against torch eager: programs.py, programs_more.py), per_op (eager overhead),
scaling (compiler time vs tape size), memory (saved bytes, XLA temp bytes),
dispatch (a cached compiled call on tiny inputs).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

from ._cpus import early_cpus, pin

# as a script, --cpus takes effect before the imports below load NumPy
_PINNED = early_cpus(sys.argv[1:]) if __name__ == "__main__" else None
if _PINNED:
    pin(_PINNED)

from . import harness, memory, micro, programs, torch_models, training  # noqa: E402

WORKLOADS = ("mlp", "cnn", "transformer", "transformer_bf16", "lstm", *programs.NAMES, "per_op",
             "scaling", "memory", "dispatch")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run in seconds, whose figures mean nothing: few steps, MLP "
                         "batch 16, small tapes, no transformer step, no torch.compile; "
                         "the programs only with --only, small batches, no tg.compile")
    ap.add_argument("--only", choices=WORKLOADS, action="append",
                    help="run this workload (repeatable); default: all")
    ap.add_argument("--steps", type=int, help="timed steps per implementation "
                    "(default 30, 3 with --quick)")
    ap.add_argument("--no-torch", action="store_true", help="leave out the PyTorch rows")
    ap.add_argument("--torch-python", help="the python of a virtual environment with torch "
                    "(e.g. /tmp/torch/bin/python): its site-packages are appended to sys.path")
    ap.add_argument("--cpus", type=int, help="run on the first N CPUs only (process affinity; "
                    "torch gets N threads): per-core comparisons on a shared machine")
    ap.add_argument("--json", help="write the records (a JSON list) here")
    ap.add_argument("--markdown", help="write the table into this file, between the markers "
                    f"{harness.BEGIN} and {harness.END} (appended when absent)")
    ap.add_argument("--block", default="", help="with --markdown: the block's name, for "
                    "several tables in one file (markers <!-- bench:begin NAME -->)")
    ns = ap.parse_args(argv)
    steps = ns.steps or (3 if ns.quick else 30)
    if ns.cpus and ns.cpus != _PINNED:   # called as a function: NumPy's threads are unpinned
        pin(ns.cpus)
    # PyTorch's OpenMP threads otherwise spin ~200 ms after each parallel region, on the
    # cores the next implementation in the interleaved loop needs (docs/performance.md)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if ns.torch_python and not ns.no_torch:
        torch_models.add_site(ns.torch_python)
    use_torch = not ns.no_torch and torch_models.available()
    if use_torch and ns.cpus:
        import torch
        torch.set_num_threads(ns.cpus)
    want = set(ns.only or WORKLOADS)
    if ns.quick and not ns.only:
        want.difference_update(("cnn", "transformer", "transformer_bf16", "lstm", *programs.NAMES))
    records: list[dict] = []
    started = time.perf_counter()

    def progress(name):
        print(f"[{time.perf_counter() - started:6.1f}s] {name} ...", file=sys.stderr, flush=True)

    for name in ("mlp", "cnn", "transformer", "lstm"):
        if name in want:
            progress(name)
            records += training.run(name, steps, use_torch=use_torch,
                                    torch_compile=use_torch and not ns.quick,
                                    batch=16 if ns.quick else None)
    if "transformer_bf16" in want:   # the transformer step under bfloat16 autocast
        progress("transformer_bf16")
        records += training.run_bf16(steps, use_torch=use_torch, torch_compile=use_torch)
    for name in programs.NAMES:
        if name in want:
            progress(name)
            records += programs.run(name, steps, use_torch=use_torch, compile=not ns.quick,
                                    batch=programs.PROGRAMS[name]["quick_batch"]
                                    if ns.quick else None)
    if "per_op" in want:
        progress("per_op")
        records += micro.per_op(max(steps, 5), use_torch)
    if "scaling" in want:
        progress("scaling")
        records += micro.scaling((30, 100, 300) if ns.quick else (100, 1000, 10_000),
                                 repeats=1 if ns.quick else 3)
    if "memory" in want:
        progress("memory")
        records += memory.run(("mlp",) if ns.quick else ("mlp", "transformer"),
                              use_torch=use_torch, batch=16 if ns.quick else None)
    if "dispatch" in want:
        progress("dispatch")
        records += micro.dispatch(max(steps, 5))
    harness.add_ratios(records)
    checks = harness.targets(records)
    print(harness.table(records, checks))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(records + [dict(workload="targets", impl="check", **c) for c in checks],
                      f, indent=1)
    if ns.markdown:
        import jax
        torch_v = ""
        if use_torch:
            import torch
            torch_v = f", torch {torch.__version__}"
        args = list(argv if argv is not None else sys.argv[1:])
        named = ("--markdown", "--json", "--block", "--torch-python")
        skip = {i + 1 for i, a in enumerate(args) if a in named}
        flags = " ".join(a for i, a in enumerate(args) if i not in skip and a not in named)
        header = (f"Generated by `python -m benchmarks{' ' + flags if flags else ''}` "
                  f"({steps} steps; CPUs: {len(os.sched_getaffinity(0))}; "
                  f"{platform.machine()}, Python {platform.python_version()}, "
                  f"jax {jax.__version__}{torch_v}; {time.strftime('%Y-%m-%d')}).")
        harness.write_markdown(ns.markdown, harness.markdown(records, checks, header), ns.block)
    return 0


if __name__ == "__main__":
    sys.exit(main())
