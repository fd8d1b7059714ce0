"""The examples' first steps from fixed weights and data: what tracegrad must match torch on.

`lstm_case` and `gpt_case` build the model of `train_char_lstm.py` / `train_nanogpt.py`
with dropout off, overwrite every parameter with values drawn from a seeded NumPy
generator (so both libraries start from the same numbers), and return the losses of the
first steps on fixed NumPy batches.  Only the torch API is used:
`tools/torch_example_losses.py` runs this module with `tracegrad` aliased to torch, and
tests/api/test_examples_match_torch.py compares tracegrad's losses (eager and compiled)
with the ones it recorded.
"""
from __future__ import annotations

import numpy as np

import train_char_lstm
import train_nanogpt

VOCAB = 40


def reference_weights(model, seed: int, std: float = 0.1) -> None:
    """Every parameter from NumPy: LayerNorm-style ``*.weight`` vectors 1, other vectors and
    matrices normal with std `std` (the same draws in tracegrad and torch)."""
    rng = np.random.default_rng(seed)
    for name, p in model.named_parameters():
        shape = tuple(p.shape)
        if len(shape) == 1 and name.endswith("weight"):
            value = np.ones(shape, np.float32)
        else:
            value = (std * rng.standard_normal(shape)).astype(np.float32)
        p.data.copy_(p.new_tensor(value))


def lstm_case(step=train_char_lstm.train_step, steps: int = 4) -> list:
    """2-layer LSTM (emb 8, hidden 16), batch 3, bptt 5, SGD lr 0.5, clip 0.25."""
    model = train_char_lstm.CharLSTM(VOCAB, 8, 16, 2, dropout=0.0)
    reference_weights(model, 0)
    stream = np.random.default_rng(1).integers(0, VOCAB, (3, steps * 5 + 1))
    return train_char_lstm.first_losses(model, stream, steps, 5, lr=0.5, clip=0.25, step=step)


def gpt_case(step=train_nanogpt.train_step, steps: int = 4) -> list:
    """nanoGPT shape (2 layers, 2 heads, n_embd 16, block 8, tied embeddings), batch 3,
    AdamW groups (decay 0.1), warm-up 2 iterations then cosine to step 4, clip 1.0."""
    model = train_nanogpt.GPT(VOCAB, 8, 2, 2, 16, dropout=0.0)
    reference_weights(model, 0)
    optimizer = model.configure_optimizers(0.1, 1e-2, (0.9, 0.99))
    rng = np.random.default_rng(2)
    batches = []
    for _ in range(steps):
        w = rng.integers(0, VOCAB, (3, 9))
        batches.append((w[:, :-1].copy(), w[:, 1:].copy()))
    lr_args = dict(learning_rate=1e-2, min_lr=1e-3, warmup_iters=2, lr_decay_iters=steps)
    return train_nanogpt.first_losses(model, optimizer, batches, lr_args, step=step)
