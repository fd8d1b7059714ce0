"""Print torch 2.13's values for the cases of tests/surface_ops4_cases.py.

Run with the torch venv (never a dependency of tracegrad):
    /tmp/torch/bin/python tools/record_torch_surface_ops4.py > /tmp/ops4_torch.py
and paste the printed dicts into tests/api/test_surface_ops4.py.
"""
import pprint
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import surface_more_cases as helpers  # noqa: E402
import surface_ops4_cases as cases  # noqa: E402

helpers.GRAD_CASES, helpers.VALUE_CASES = cases.GRAD_CASES, cases.VALUE_CASES


def _round(v):
    """Nested lists with 9 significant digits (float64 cases; the test compares at 1e-7)."""
    if isinstance(v, list):
        return [_round(x) for x in v]
    if isinstance(v, tuple):
        return tuple(_round(x) for x in v)
    if isinstance(v, complex):
        return complex(_round(v.real), _round(v.imag))
    return float(np.format_float_positional(v, 9, fractional=False)) if isinstance(v, float) else v


warnings.simplefilter("ignore")
print("# torch " + torch.__version__)
print("TORCH_GRAD = " + pprint.pformat({c: _round(helpers.run_grad_case(torch, c))
                                        for c in cases.GRAD_CASES},
                                       width=100, compact=True, sort_dicts=False))
print("TORCH_VALUES = " + pprint.pformat({c: _round(helpers.run_value_case(torch, c))
                                          for c in cases.VALUE_CASES},
                                         width=100, compact=True, sort_dicts=False))
