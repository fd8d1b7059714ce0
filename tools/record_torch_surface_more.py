"""Print torch 2.13's values for the cases of tests/surface_more_cases.py.

Run with the torch venv (never a dependency of tracegrad):
    /tmp/torch/bin/python tools/record_torch_surface_more.py > /tmp/surface_torch.py
and paste the printed dicts into tests/api/test_surface_ops_more.py.
"""
import pprint
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from surface_more_cases import (GRAD_CASES, VALUE_CASES, run_grad_case,  # noqa: E402
                                run_value_case)


def _round(v):
    """Nested lists with 9 significant digits (float64 cases; the test compares at 1e-7)."""
    if isinstance(v, list):
        return [_round(x) for x in v]
    return float(np.format_float_positional(v, 9, fractional=False)) if isinstance(v, float) else v


print("# torch " + torch.__version__)
print("TORCH_GRAD = " + pprint.pformat({c: _round(run_grad_case(torch, c)) for c in GRAD_CASES},
                                        width=100, compact=True, sort_dicts=False))
print("TORCH_VALUES = " + pprint.pformat({c: _round(run_value_case(torch, c))
                                          for c in VALUE_CASES},
                                         width=100, compact=True, sort_dicts=False))
