"""Train an LSTM character model on the standard library's docstrings (word_language_model-style).

The PyTorch program this follows is pytorch/examples' word_language_model, at the
character level: the text (`char_data.py`) is one long stream cut into `--batch`
parallel columns; each step reads the next `--bptt` characters of every column
(truncated backpropagation through time), carries the LSTM's hidden state over from
the step before with its history cut (`detach`), clips the gradient norm to `--clip`
and takes a plain SGD step; the learning rate is divided by 4 whenever the validation
loss stops improving, as the original does.  Everything in `CharLSTM`, `repackage`,
`train_step` and `first_losses` is the torch API unchanged: `tools/torch_example_losses.py`
runs the same code under torch 2.13 to record the first losses that
tests/api/test_examples_match_torch.py checks.

The step runs eagerly, as a ported script first does.  `--compile` runs it under
`tg.compile` (one XLA program: the forward through the time loop, backward, clipping,
SGD) with the hidden state as an input and an output; its first call then takes about
35 s, because the IR has no loop primitive yet and the `--bptt` time steps are unrolled
(docs/performance.md), after which a step takes a fraction of the eager one.

Measured: see README ("Examples"); `--quick` is a smoke run of a few seconds.
Run with `make demo-lstm`.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # char_data: next to this file
from char_data import CharData, apply_quick, stdlib_docstrings  # noqa: E402


class CharLSTM(nn.Module):
    """Embedding -> `layers`-layer LSTM (batch_first) -> dropout -> Linear over the vocabulary.

    forward(ids i64[B, T], state (h, c) each f32[layers, B, hidden]) ->
    (logits f32[B, T, vocab], new state).
    """

    def __init__(self, vocab: int, emb: int, hidden: int, layers: int, dropout: float):
        super().__init__()
        self.layers, self.hidden = layers, hidden
        self.encoder = nn.Embedding(vocab, emb)
        self.rnn = nn.LSTM(emb, hidden, layers, dropout=dropout, batch_first=True)
        self.drop = nn.Dropout(dropout)
        self.decoder = nn.Linear(hidden, vocab)

    def init_state(self, batch: int):
        return (tg.zeros(self.layers, batch, self.hidden),
                tg.zeros(self.layers, batch, self.hidden))

    def forward(self, ids, state):
        out, state = self.rnn(self.drop(self.encoder(ids)), state)
        return self.decoder(self.drop(out)), state


def repackage(state):
    """The hidden state with its history cut (word_language_model's `repackage_hidden`)."""
    return tuple(s.detach() for s in state)


def columns(ids: np.ndarray, batch: int) -> np.ndarray:
    """The stream as i64[batch, N // batch]: `batch` contiguous columns (its `batchify`)."""
    n = len(ids) // batch
    return ids[:n * batch].reshape(batch, n)


def train_step(model, params, ids, targets, state, lr: float, clip: float):
    """One truncated-BPTT step: loss, clipped gradients, ``p -= lr * grad``.

    ids/targets i64[B, T]; returns (loss, the new state).  `lr` is read from a Python
    float that the training loop anneals (tg.compile guards it and retraces on a change).
    """
    model.zero_grad()
    logits, state = model(ids, state)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    loss.backward()
    nn.utils.clip_grad_norm_(params, clip)
    with tg.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)
    return loss, state


def first_losses(model, stream: np.ndarray, steps: int, bptt: int, lr: float,
                 clip: float, step=train_step) -> list:
    """The losses of the first `steps` steps over column stream i64[B, N] (the test's and the
    torch twin's common code; `step` is `train_step` or a compiled form of it)."""
    params = list(model.parameters())
    state = model.init_state(stream.shape[0])
    losses = []
    for i in range(steps):
        chunk = tg.from_numpy(stream[:, i * bptt:i * bptt + bptt + 1].copy())
        loss, state = step(model, params, chunk[:, :-1], chunk[:, 1:], repackage(state), lr,
                           clip)
        losses.append(loss.item())
    return losses


def evaluate(model, stream: np.ndarray, bptt: int) -> float:
    """Mean next-character loss over every full `bptt` window of `stream`, eval mode."""
    model.eval()
    state = model.init_state(stream.shape[0])
    total, n = 0.0, 0
    with tg.no_grad():
        for i in range(0, stream.shape[1] - bptt - 1, bptt):
            chunk = tg.from_numpy(stream[:, i:i + bptt + 1].copy())
            logits, state = model(chunk[:, :-1], state)
            total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                     chunk[:, 1:].reshape(-1)).item()
            n += 1
    model.train()
    return total / max(n, 1)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chars", type=int, default=150_000, help="characters of text to use")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--bptt", type=int, default=16, help="characters per step and column")
    p.add_argument("--emb", type=int, default=32)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--lr", type=float, default=2.0, help="SGD's initial learning rate")
    p.add_argument("--clip", type=float, default=0.25, help="gradient norm clipping")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--compile", action="store_true",
                   help="run the step under tg.compile (a slow first call: the loop is unrolled)")
    p.add_argument("--quick", action="store_true", help="a smoke run: 40K characters, tiny model")
    args = p.parse_args(argv)
    if args.quick:
        apply_quick(p, args, chars=40_000, batch=8, emb=16, hidden=32)
    return args


def main(argv=None) -> dict:
    """Train; returns the measured numbers (also printed)."""
    args = parse_args(argv)
    tg.manual_seed(args.seed)
    data = CharData(stdlib_docstrings(args.chars))
    train, val = columns(data.train, args.batch), columns(data.val, args.batch)
    baseline = data.unigram_baseline()
    model = CharLSTM(len(data.vocab), args.emb, args.hidden, args.layers, args.dropout)
    params = list(model.parameters())
    print(f"text: {len(data.text):,} characters, vocabulary {len(data.vocab)}; model "
          f"{sum(p.numel() for p in params):,} parameters; unigram baseline {baseline:.3f}")
    step = tg.compile(train_step) if args.compile else train_step
    lr, best, history, val_points = args.lr, math.inf, [], []
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        state = model.init_state(args.batch)
        for i in range(0, train.shape[1] - args.bptt - 1, args.bptt):
            chunk = tg.from_numpy(train[:, i:i + args.bptt + 1].copy())
            loss, state = step(model, params, chunk[:, :-1], chunk[:, 1:], repackage(state),
                               lr, args.clip)
            history.append(loss.item())
        val_loss = evaluate(model, val, args.bptt)
        val_points.append(val_loss)
        print(f"epoch {epoch + 1}: {len(history)} steps, last train loss {history[-1]:.3f}, "
              f"validation {val_loss:.3f} nats/char, lr {lr:g} "
              f"({time.perf_counter() - t0:.1f} s)")
        if val_loss < best:
            best = val_loss
        else:
            lr /= 4.0      # word_language_model's annealing
    elapsed = time.perf_counter() - t0
    print(f"trained {len(history)} steps in {elapsed:.1f} s"
          + (f"; compiled step traced {step.traces} times" if args.compile else " (eager)"))
    return {"baseline": baseline, "val": val_points[-1], "history": history,
            "seconds": elapsed}


if __name__ == "__main__":
    main()
