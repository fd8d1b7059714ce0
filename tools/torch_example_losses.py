"""Print torch's first losses of the examples' reference cases (examples/reference_cases.py).

Run with a Python that has torch (never a dependency of tracegrad or its tests):

    /tmp/torch/bin/python tools/torch_example_losses.py

The examples' model and step code is written against the torch API, so this script only
points the names `tracegrad`, `tracegrad.nn` and `tracegrad.nn.functional` at torch's
modules before importing them.  The printed losses are what
tests/api/test_examples_match_torch.py records, with the torch version beside them.
"""
import pathlib
import sys

import torch
import torch.nn
import torch.nn.functional

sys.modules.update({"tracegrad": torch, "tracegrad.nn": torch.nn,
                    "tracegrad.nn.functional": torch.nn.functional})
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "examples"))

import reference_cases  # noqa: E402

print(f"torch {torch.__version__}")
print("lstm", [float(f"{v:.8g}") for v in reference_cases.lstm_case()])
print("gpt ", [float(f"{v:.8g}") for v in reference_cases.gpt_case()])
