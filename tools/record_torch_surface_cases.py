"""Print torch 2.13's values for the cases of a tests/surface_*_cases.py module.

Run with the torch venv (never a dependency of tracegrad), naming the cases module:
    /tmp/torch/bin/python tools/record_torch_surface_cases.py surface_ops4_cases > /tmp/t.py
and paste the printed dicts into its test file (surface_more_cases: test_surface_ops_more.py,
surface_ops3_cases: test_surface_ops3.py, surface_ops4_cases: test_surface_ops4.py).
"""
import importlib
import pprint
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import surface_more_cases as helpers  # noqa: E402
cases = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "surface_more_cases")


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
print("TORCH_GRAD = " + pprint.pformat({c: _round(helpers.run_grad_case(torch, case))
                                        for c, case in cases.GRAD_CASES.items()},
                                       width=100, compact=True, sort_dicts=False))
print("TORCH_VALUES = " + pprint.pformat({c: _round(helpers.run_value_case(torch, case))
                                          for c, case in cases.VALUE_CASES.items()},
                                         width=100, compact=True, sort_dicts=False))
