"""Print torch 2.13's values for tests/swa_cases.py.

Run with the torch venv (never a dependency of tracegrad):
    /tmp/torch/bin/python tools/record_torch_swa.py > /tmp/swa_torch.py
and paste the printed dict into tests/api/test_swa_utils.py.
"""
import pprint
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import swa_cases  # noqa: E402

print("# torch " + torch.__version__)
print("TORCH = " + pprint.pformat(swa_cases.run(torch), width=100, compact=True,
                                  sort_dicts=False))
