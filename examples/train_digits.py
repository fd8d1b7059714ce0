"""Train an MLP on scikit-learn's handwritten digits with a compiled training step.

The data (1,797 8x8 images, 10 classes) ships inside scikit-learn: no download.
Run with `make demo`; inspect the compiled step with
`tracegrad dump examples/train_digits.py::train_step`.
"""
from __future__ import annotations

import os
import sys

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # digits_common: next to this file
import digits_common  # noqa: E402
from digits_common import train_and_report  # noqa: E402

BATCH = 64
EPOCHS = 40
SEED = 0

tg.manual_seed(SEED)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = tg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)


@tg.compile
def train_step(x, y):
    """One SGD step on a batch: x f32[B,64] in [0,1], y i64[B] class indices; returns the loss."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def example_args():
    """Example inputs for `tracegrad dump`: one batch of the right shapes and dtypes."""
    return tg.zeros(BATCH, 64), tg.zeros(BATCH, dtype=tg.int64)


def load_digits(test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test): the fixed 80/20 split of digits_common."""
    return digits_common.load_digits(SEED, test_fraction, images=False)


def main() -> None:
    train_and_report(model, train_step, load_digits(), epochs=EPOCHS, batch=BATCH, seed=SEED)


if __name__ == "__main__":
    main()
