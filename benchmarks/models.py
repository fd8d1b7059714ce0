"""The benchmark models, in tracegrad (the same architectures are built in jax/torch by the runner).

- MLP 784-1024-1024-10, ReLU, softmax cross-entropy, batch 256.
- CNN: the digits CNN's shape (examples/train_digits_cnn.py, without batch norm and dropout)
  on 32x32 inputs: conv 3x3 (1->16, pad 1), ReLU, max pool 2, conv 3x3 (16->32, pad 1),
  ReLU, max pool 2, Linear 2048->10, softmax cross-entropy, batch 128.
- LSTM language model: embedding 256, 2-layer nn.LSTM hidden 256, seq 64, batch 32,
  vocab 1000, next-token cross-entropy (the time loop traces unrolled).
- Transformer: 2 pre-LN blocks, d_model 256, 4 heads, MLP 1024, GELU (tanh),
  causal attention, seq 128, batch 8, vocab 1000, learned positions,
  next-token cross-entropy.
"""
from __future__ import annotations

import math

import numpy as np

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def mlp_batch(seed: int = 0, batch: int = 256):
    rng = np.random.default_rng(seed)
    return (tg.tensor(rng.standard_normal((batch, 784)).astype(np.float32)),
            tg.tensor(rng.integers(0, 10, batch)))


def cnn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 8 * 8, 10))


def cnn_batch(seed: int = 0, batch: int = 128):
    rng = np.random.default_rng(seed)
    return (tg.tensor(rng.standard_normal((batch, 1, 32, 32)).astype(np.float32)),
            tg.tensor(rng.integers(0, 10, batch)))


class LayerNorm(nn.Module):
    """Layer norm over the last dim, written with core ops (biased variance, eps 1e-5)."""

    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(tg.ones(d))
        self.bias = nn.Parameter(tg.zeros(d))

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        xc = x - mu
        var = (xc * xc).mean(-1, keepdim=True)
        return xc / (var + 1e-5).sqrt() * self.weight + self.bias


class Block(nn.Module):
    def __init__(self, d: int, heads: int, hidden: int, seq: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = LayerNorm(d), LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self._mask = np.triu(np.ones((seq, seq), dtype=bool), 1)

    def forward(self, x):
        b, t, d = x.shape
        h, hd = self.heads, d // self.heads
        qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, h, hd).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = tg.where(tg.tensor(self._mask[:t, :t]), -1e9, att)
        y = att.softmax(-1) @ v
        x = x + self.proj(y.permute(0, 2, 1, 3).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class Transformer(nn.Module):
    def __init__(self, vocab=1000, d=256, heads=4, hidden=1024, seq=128, layers=2):
        super().__init__()
        self.tok = nn.Parameter(tg.randn(vocab, d) * 0.02)
        self.pos = nn.Parameter(tg.randn(seq, d) * 0.02)
        self.blocks = nn.Sequential(*[Block(d, heads, hidden, seq) for _ in range(layers)])
        self.ln = LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        b, t = idx.shape
        x = self.tok[idx] + self.pos[:t]
        return self.head(self.ln(self.blocks(x)))


def transformer_batch(seed: int = 0, batch=8, seq=128, vocab=1000):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, (batch, seq + 1))
    return tg.tensor(tokens[:, :-1]), tg.tensor(tokens[:, 1:])


def transformer_loss(model, idx, targets):
    logits = model(idx)
    b, t, v = logits.shape
    return F.cross_entropy(logits.reshape(b * t, v), targets.reshape(b * t))


def transformer_loss_bf16(model, idx, targets):
    """`transformer_loss` under ``tg.autocast("cpu", dtype=tg.bfloat16)`` (torch's CPU autocast
    classes: linear and matmul in bfloat16, cross-entropy in float32)."""
    with tg.autocast("cpu", dtype=tg.bfloat16):
        return transformer_loss(model, idx, targets)


class LSTMLM(nn.Module):
    """Embedding -> nn.LSTM (time-major) -> Linear, as word_language_model's RNNModel."""

    def __init__(self, vocab=1000, d=256, hidden=256, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.rnn = nn.LSTM(d, hidden, layers)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx):
        out, _ = self.rnn(self.emb(idx))
        return self.head(out)


def lstm_batch(seed: int = 0, batch=32, seq=64, vocab=1000):
    """(seq, batch) token ids and their next tokens (time-major, nn.LSTM's default)."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, (seq + 1, batch))
    return tg.tensor(tokens[:-1]), tg.tensor(tokens[1:])


def lstm_loss(model, idx, targets):
    logits = model(idx)
    t, b, v = logits.shape
    return F.cross_entropy(logits.reshape(t * b, v), targets.reshape(t * b))
