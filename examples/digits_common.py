"""What the digits examples share: the data split, the training loop, accuracy.

The data (1,797 8x8 images, 10 classes) ships inside scikit-learn: no download.
"""
from __future__ import annotations

import time

import numpy as np

import tracegrad as tg


def load_digits(seed: int, test_fraction: float = 0.2, images: bool = False):
    """(x_train, y_train, x_test, y_test), a fixed 80/20 split.

    x is f32 in [0, 1]: [N, 64] rows, or [N, 1, 8, 8] images with `images=True`;
    y is i64[N] class indices.
    """
    from sklearn.datasets import load_digits as sk_load

    data = sk_load()
    pixels = data.images[:, None] if images else data.data
    x = (pixels / 16.0).astype(np.float32)   # pixel values 0..16
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def accuracy(model, x: np.ndarray, y: np.ndarray) -> float:
    """Accuracy in eval mode (running statistics, no dropout); restores the previous mode."""
    was_training = model.training
    model.eval()
    with tg.no_grad():
        logits = model(tg.from_numpy(x)).numpy()
    model.train(was_training)
    return float((logits.argmax(axis=1) == y).mean())


def train_and_report(model, train_step, data, *, epochs: int, batch: int, seed: int) -> None:
    """Shuffled full batches (one compiled shape: drop_last) from a `tg.utils.data`
    DataLoader, with a tqdm bar, then the accuracies."""
    from tqdm import tqdm

    from tracegrad.utils.data import DataLoader, TensorDataset

    x_train, y_train, x_test, y_test = data
    loader = DataLoader(TensorDataset(tg.from_numpy(x_train), tg.from_numpy(y_train)),
                        batch_size=batch, shuffle=True, drop_last=True,
                        generator=tg.Generator().manual_seed(seed))
    steps_per_epoch = len(loader)
    model.train()
    start = time.perf_counter()
    bar = tqdm(range(epochs), desc="training", unit="epoch")
    for _ in bar:
        total = 0.0
        for xb, yb in loader:
            loss = train_step(xb, yb)
            total += loss.item()
        bar.set_postfix(loss=f"{total / steps_per_epoch:.4f}")
    elapsed = time.perf_counter() - start
    print(f"trained {epochs} epochs ({epochs * steps_per_epoch} steps) in {elapsed:.1f} s; "
          f"compiled step traced {train_step.traces} times")
    print(f"train accuracy: {accuracy(model, x_train, y_train):.4f}")
    print(f"test accuracy: {accuracy(model, x_test, y_test):.4f}")
