"""Print torch 2.13's values for the recurrent-layer cases of tests/rnn_cases.py.

Run with the torch venv (never a dependency of tracegrad):
    /tmp/torch/bin/python tools/record_torch_rnn.py > /tmp/rnn_torch.py
and paste the printed `TORCH` dict into tests/api/test_rnn.py.
"""
import pprint
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from rnn_cases import CASES, run_case  # noqa: E402  (the tests' case table, pure NumPy)

torch.set_default_dtype(torch.float64)
print("TORCH = " + pprint.pformat({case: run_case(torch, case) for case in CASES},
                                   width=100, compact=True, sort_dicts=False))
