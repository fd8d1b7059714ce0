"""Train an MLP on scikit-learn's handwritten digits with a compiled training step.

The data (1,797 8x8 images, 10 classes) ships inside scikit-learn: no download.
Run with `make demo`; inspect the compiled step with
`tracegrad dump examples/train_digits.py::train_step`.
"""
from __future__ import annotations

import time

import numpy as np

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F

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
    from sklearn.datasets import load_digits as sk_load

    data = sk_load()
    x = (data.data / 16.0).astype(np.float32)   # pixel values 0..16
    y = data.target.astype(np.int64)
    order = np.random.default_rng(SEED).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def accuracy(x: np.ndarray, y: np.ndarray) -> float:
    with tg.no_grad():
        logits = model(tg.from_numpy(x)).numpy()
    return float((logits.argmax(axis=1) == y).mean())


def main() -> None:
    from tqdm import tqdm

    x_train, y_train, x_test, y_test = load_digits()
    rng = np.random.default_rng(SEED)
    steps_per_epoch = len(x_train) // BATCH          # full batches only: one compiled shape
    start = time.perf_counter()
    bar = tqdm(range(EPOCHS), desc="training", unit="epoch")
    for _ in bar:
        order = rng.permutation(len(x_train))
        total = 0.0
        for i in range(steps_per_epoch):
            idx = order[i * BATCH:(i + 1) * BATCH]
            loss = train_step(tg.from_numpy(x_train[idx]), tg.from_numpy(y_train[idx]))
            total += loss.item()
        bar.set_postfix(loss=f"{total / steps_per_epoch:.4f}")
    elapsed = time.perf_counter() - start
    print(f"trained {EPOCHS} epochs ({EPOCHS * steps_per_epoch} steps) in {elapsed:.1f} s; "
          f"compiled step traced {train_step.traces} times")
    print(f"train accuracy: {accuracy(x_train, y_train):.4f}")
    print(f"test accuracy: {accuracy(x_test, y_test):.4f}")


if __name__ == "__main__":
    main()
