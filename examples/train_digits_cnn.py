"""Train a small CNN on scikit-learn's handwritten digits with a compiled training step.

Two conv layers with batch norm and max pooling, dropout before the classifier.  The
compiled step is one program: forward, backward, the SGD update, the batch-norm running
statistics and the dropout generator's key, all written back after each call.
Evaluation runs eagerly in `model.eval()` mode (running statistics, no dropout).
Run with `make demo-cnn`; inspect the compiled step with
`tracegrad dump examples/train_digits_cnn.py::train_step`.
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
EPOCHS = 12
SEED = 0

tg.manual_seed(SEED)
model = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16x4x4
    nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32x2x2
    nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 2 * 2, 10))
opt = tg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)


@tg.compile
def train_step(x, y):
    """One SGD step: x f32[B,1,8,8] in [0,1], y i64[B] class indices; returns the loss."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def example_args():
    """Example inputs for `tracegrad dump`: one batch of the right shapes and dtypes."""
    return tg.zeros(BATCH, 1, 8, 8), tg.zeros(BATCH, dtype=tg.int64)


def load_digits(test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test): the fixed 80/20 split of digits_common."""
    return digits_common.load_digits(SEED, test_fraction, images=True)


def main() -> None:
    train_and_report(model, train_step, load_digits(), epochs=EPOCHS, batch=BATCH, seed=SEED)


if __name__ == "__main__":
    main()
