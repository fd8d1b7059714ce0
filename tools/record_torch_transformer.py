"""Print torch 2.13's values for the attention and transformer cases of tests/transformer_cases.py.

Run with the torch venv (never a dependency of tracegrad):
    /tmp/torch/bin/python tools/record_torch_transformer.py > /tmp/transformer_torch.py
and paste the printed `TORCH` dict into tests/api/test_transformer.py.
"""
import pprint
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from transformer_cases import CASES, run_case  # noqa: E402  (the tests' case table, pure NumPy)

torch.set_default_dtype(torch.float64)
print("TORCH = " + pprint.pformat({case: run_case(torch, case) for case in CASES},
                                   width=100, compact=True, sort_dicts=False))
