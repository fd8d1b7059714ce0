"""Print torch 2.13's losses for the ported programs (the literals in tests/api/test_ported_*).

    /tmp/torch/bin/python tests/api/ported/run_torch.py [program ...]

Points the names `tracegrad`, `tracegrad.nn`, ... at torch's modules and imports each
program, so the very file the tests run under tracegrad runs here under torch.
"""
import importlib
import pathlib
import sys
import time

import torch
import torch.distributions
import torch.nn
import torch.nn.functional
import torch.nn.modules.module
import torch.nn.parameter
import torch.optim
import torch.optim.lr_scheduler
import torch.utils.data

sys.modules.update({"tracegrad": torch, "tracegrad.nn": torch.nn,
                    "tracegrad.nn.functional": torch.nn.functional,
                    "tracegrad.nn.modules.module": torch.nn.modules.module,
                    "tracegrad.nn.parameter": torch.nn.parameter,
                    "tracegrad.optim": torch.optim,
                    "tracegrad.optim.lr_scheduler": torch.optim.lr_scheduler,
                    "tracegrad.distributions": torch.distributions,
                    "tracegrad.utils": torch.utils, "tracegrad.utils.data": torch.utils.data})
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from _cases import CASES  # noqa: E402

print(f"torch {torch.__version__}")
for name in sys.argv[1:] or CASES:
    t0 = time.perf_counter()
    losses = CASES[name]()
    print(name, [v if isinstance(v, str) else float(f"{v:.8g}") for v in losses], f"{time.perf_counter() - t0:.2f}s")
