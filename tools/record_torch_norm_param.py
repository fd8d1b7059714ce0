"""Print torch 2.13's values for tests/norm_param_cases.py.

Run with the torch venv (never a dependency of tracegrad):
    /tmp/torch/bin/python tools/record_torch_norm_param.py > /tmp/norm_torch.py
and paste the printed dict into tests/api/test_weight_spectral_norm.py.
"""
import pprint
import sys
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import norm_param_cases  # noqa: E402

warnings.simplefilter("ignore")   # weight_norm's deprecation warning
print("# torch " + torch.__version__)
print("TORCH = " + pprint.pformat(norm_param_cases.run(torch), width=100, compact=True,
                                  sort_dicts=False))
