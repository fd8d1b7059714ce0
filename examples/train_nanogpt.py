"""Train a small nanoGPT-shaped character model: AdamW parameter groups, warm-up then cosine lr.

The program follows Karpathy's nanoGPT (`model.py`, `train.py`), written for tracegrad:
the module names (`transformer.wte`, `h.0.attn.c_attn`, `lm_head` ...), tied input and
output embeddings, GPT-2's initialisation (normal 0.02, the residual projections scaled
by 1/sqrt(2 * n_layer)), `configure_optimizers` (weight decay on every parameter of two
or more dims, none on biases and LayerNorm weights, two AdamW parameter groups) and
`get_lr` (linear warm-up, cosine decay to `min_lr`, written into every parameter group
before each step, as nanoGPT does).  The text is the standard library's docstrings
(`char_data.py`).  The training step is one `tg.compile` program; the learning rate is
a value in the optimizer's state, so changing it every step does not retrace.

`GPT`, `configure_optimizers`, `get_lr` and `first_losses` are the torch API unchanged:
`tools/torch_example_losses.py` runs them under torch 2.13 to record the first losses that
tests/api/test_examples_match_torch.py checks.  Measured: README ("Examples").
Run with `make demo-gpt`.
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


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention over x f32[B, T, n_embd] (nanoGPT's, flash path)."""

    def __init__(self, n_embd: int, n_head: int, dropout: float):
        super().__init__()
        self.n_head, self.dropout = n_head, dropout
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0,
                                           is_causal=True)
        return self.resid_dropout(self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c)))


class MLP(nn.Module):
    def __init__(self, n_embd: int, dropout: float):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """ids i64[B, T] (T <= block_size) -> logits f32[B, T, vocab], and the loss with targets."""

    def __init__(self, vocab_size: int, block_size: int, n_layer: int, n_head: int,
                 n_embd: int, dropout: float):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight   # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        pos = tg.arange(0, t, dtype=tg.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay: float, learning_rate: float, betas):
        """AdamW over two groups: decay for parameters of >= 2 dims, none for the rest."""
        params = {n: p for n, p in self.named_parameters() if p.requires_grad}
        decay = [p for p in params.values() if p.dim() >= 2]
        no_decay = [p for p in params.values() if p.dim() < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return tg.optim.AdamW(groups, lr=learning_rate, betas=betas)


def get_lr(it: int, learning_rate: float, min_lr: float, warmup_iters: int,
           lr_decay_iters: int) -> float:
    """nanoGPT's schedule: linear warm-up, then cosine decay to `min_lr`, then `min_lr`."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


def train_step(model, optimizer, x, y):
    """x, y i64[B, T]: one AdamW step; returns the loss (nanoGPT's loop, one micro-step)."""
    _, loss = model(x, y)
    loss.backward()
    tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss


def first_losses(model, optimizer, batches, lr_args: dict, step=train_step) -> list:
    """The losses of one step per (x, y) i64[B, T] NumPy pair, lr set by `get_lr` first
    (the test's and the torch twin's common code)."""
    losses = []
    for it, (x, y) in enumerate(batches):
        set_lr(optimizer, get_lr(it, **lr_args))
        losses.append(step(model, optimizer, tg.from_numpy(x), tg.from_numpy(y)).item())
    return losses


def set_lr(optimizer, lr: float) -> None:
    """nanoGPT's way: the lr written into every parameter group before the step."""
    for group in optimizer.param_groups:
        group["lr"] = lr


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--chars", type=int, default=300_000, help="characters of text to use")
    p.add_argument("--max-iters", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--learning-rate", type=float, default=3e-3)
    p.add_argument("--min-lr", type=float, default=3e-4)
    p.add_argument("--warmup-iters", type=int, default=30)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--eval-batches", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="a smoke run: 20 steps, tiny model")
    args = p.parse_args(argv)
    if args.quick:
        apply_quick(p, args, chars=40_000, max_iters=20, batch_size=4, block_size=16, n_embd=16,
                    n_layer=1, n_head=2, warmup_iters=5, eval_batches=2)
    return args


def main(argv=None) -> dict:
    """Train; returns the measured numbers (also printed)."""
    args = parse_args(argv)
    tg.manual_seed(args.seed)
    data = CharData(stdlib_docstrings(args.chars))
    model = GPT(len(data.vocab), args.block_size, args.n_layer, args.n_head, args.n_embd,
                args.dropout)
    optimizer = model.configure_optimizers(args.weight_decay, args.learning_rate, (0.9, 0.99))
    print(f"text: {len(data.text):,} characters, vocabulary {len(data.vocab)}; model "
          f"{sum(p.numel() for p in model.parameters()):,} parameters; unigram baseline "
          f"{data.unigram_baseline():.3f} nats/char")
    step = tg.compile(train_step)

    @tg.compile
    def eval_loss(x, y):
        return model(x, y)[1]

    lr_args = dict(learning_rate=args.learning_rate, min_lr=args.min_lr,
                   warmup_iters=args.warmup_iters, lr_decay_iters=args.max_iters)
    t0 = time.perf_counter()
    history = []
    for it in range(args.max_iters):
        x, y = data.batch(data.train, args.batch_size, args.block_size,
                          np.random.default_rng([args.seed, it]))
        set_lr(optimizer, get_lr(it, **lr_args))
        history.append(step(model, optimizer, tg.from_numpy(x), tg.from_numpy(y)).item())
        if (it + 1) % 100 == 0 or it + 1 == args.max_iters:
            print(f"iter {it + 1}: loss {history[-1]:.3f} ({time.perf_counter() - t0:.1f} s)")
    model.eval()
    rng = np.random.default_rng(args.seed + 1)
    with tg.no_grad():
        val = float(np.mean([eval_loss(*map(tg.from_numpy, data.batch(
            data.val, args.batch_size, args.block_size, rng))).item()
            for _ in range(args.eval_batches)]))
    elapsed = time.perf_counter() - t0
    print(f"trained {args.max_iters} steps in {elapsed:.1f} s (step traced {step.traces} "
          f"times); validation loss {val:.3f} nats/char")
    return {"history": history, "val": val, "seconds": elapsed, "traces": step.traces,
            "baseline": data.unigram_baseline()}


if __name__ == "__main__":
    main()
