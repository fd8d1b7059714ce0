"""Train a small GPT-style character model on the standard library's own docstrings.

The text: every docstring (module, class, function) of the pure-Python modules of the
running interpreter's standard library, read with `ast` (nothing is imported), files in
sorted order, non-ASCII characters dropped; the first `--chars` characters (default 1 MB),
split by position: the first 90% train, the last 10% validation.  Nothing is downloaded.

The model: token embedding plus learned positions, pre-LN blocks (LayerNorm, causal
`F.scaled_dot_product_attention`, dropout; LayerNorm, GELU MLP, dropout), a final
LayerNorm and Linear head.  The training step is one `@tg.compile` program (forward,
backward, AdamW update, dropout's generator key); the OneCycleLR schedule changes the
learning rate every step as data, without a retrace.  Validation loss and sampling run
compiled too, in eval mode (one program each: the sampler always feeds a full window).

Outputs in `--out` (default `out/char_transformer`): `ckpt.tg` (model, optimizer,
scheduler, generator key, loss history; `tg.save`), `loss.png` (matplotlib) and
`samples.txt`.  `--resume` continues from `ckpt.tg` to the same `--steps`.

Measured (Python 3.11.7's stdlib: 1,000,000 characters, 96-character vocabulary; the
default settings: 3 blocks, d_model 128, 4 heads, context 64, batch 32, 627K parameters,
1000 steps, seed 0): unigram baseline (cross-entropy of the train split's character
frequencies on the validation split) 3.277 nats/char; validation loss 2.467 / 1.986 /
1.776 / 1.733 after 250 / 500 / 750 / 1000 steps.  394 s of training (2m37s user + 47 s
system CPU) on 2 cores shared with other jobs (load average 5-8), so expect it faster on
an idle machine.  The validation loss is measured on 20 batches of non-overlapping
windows spread evenly over the validation split (41% of it).  `--quick` is a smoke run
(a 20K-parameter model, 30 steps, about 15 s; loss 4.7 -> 3.5): it checks the plumbing, not the
learning.
Run with `make demo-char`.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad.optim.lr_scheduler import OneCycleLR

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # char_data: next to this file
from char_data import CharData, apply_quick, stdlib_docstrings  # noqa: E402,F401  (the tests read both here)

# ---- model -----------------------------------------------------------------------------------
class Block(nn.Module):
    """Pre-LN transformer block: x + attn(ln(x)), then x + mlp(ln(x)); x f32[B, T, D]."""

    def __init__(self, d: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d, bias=False)   # a key bias cannot change the softmax
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, h, d // h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)  # B,H,T,D/H
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.mlp(self.ln2(x)))


class CharGPT(nn.Module):
    """Character language model: i64[B, T] ids (T <= block) -> f32[B, T, vocab] logits."""

    def __init__(self, vocab: int, block: int, d: int, heads: int, layers: int,
                 dropout: float):
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(d, heads, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        for p in (self.tok.weight, self.pos.weight):    # GPT-2's small embedding init
            nn.init.normal_(p, std=0.02)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.drop(self.tok(idx) + self.pos(tg.arange(t)))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def next_char_loss(model, x, y):
    logits = model(x)
    b, t, v = logits.shape
    return F.cross_entropy(logits.reshape(b * t, v), y.reshape(b * t))


# ---- training --------------------------------------------------------------------------------
def build(args, vocab: int):
    """Model, optimizer, scheduler and the three compiled functions for these settings."""
    tg.manual_seed(args.seed)
    model = CharGPT(vocab, args.block, args.d_model, args.heads, args.layers, args.dropout)
    opt = tg.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.1)
    sched = OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.1)

    @tg.compile
    def train_step(x, y):
        """x, y i64[B, T]: one AdamW step on the next-character loss; returns the loss."""
        opt.zero_grad()
        loss = next_char_loss(model, x, y)
        loss.backward()
        opt.step()
        return loss

    @tg.compile
    def eval_loss(x, y):
        """Mean next-character loss of one batch (called in eval mode, under no_grad)."""
        return next_char_loss(model, x, y)

    @tg.compile
    def last_logits(window, pos):
        """window i64[1, block]; pos i64[1]: logits f32[1, vocab] at position pos."""
        return model(window)[0].index_select(0, pos)

    return model, opt, sched, train_step, eval_loss, last_logits


def validation_loss(model, eval_loss, data: CharData, batch: int, block: int,
                    max_batches: int) -> float:
    """Mean loss over non-overlapping validation windows (the same windows every time)."""
    n_windows = (len(data.val) - 1) // block
    starts = np.arange(n_windows) * block
    n_batches = max(1, min(max_batches, n_windows // batch))
    starts = starts[np.linspace(0, n_windows - batch, n_batches).astype(int)[:, None]
                    + np.arange(batch)]
    model.eval()
    total = 0.0
    with tg.no_grad():
        for s in starts:
            rows = s[:, None] + np.arange(block + 1)
            w = data.val[rows]
            total += eval_loss(tg.from_numpy(w[:, :-1]), tg.from_numpy(w[:, 1:])).item()
    model.train()
    return total / len(starts)


def sample(model, last_logits, data: CharData, prompt: str, n: int, temperature: float,
           rng: np.random.Generator) -> str:
    """`n` characters after `prompt`, drawn from softmax(logits / temperature) with NumPy.

    Every call of the compiled sampler feeds a full window of `block` ids: the context,
    left-aligned and zero-padded (causal attention: the padding cannot affect the position
    read), or its last `block` characters once it is longer.
    """
    block = model.block
    ids = [data.index[c] for c in prompt if c in data.index] or [0]
    model.eval()
    with tg.no_grad():
        for _ in range(n):
            ctx = ids[-block:]
            window = np.zeros((1, block), dtype=np.int64)
            window[0, :len(ctx)] = ctx
            logits = last_logits(tg.from_numpy(window),
                                 tg.tensor([len(ctx) - 1])).numpy()[0].astype(np.float64)
            z = logits / temperature
            p = np.exp(z - z.max())
            ids.append(int(rng.choice(len(p), p=p / p.sum())))
    model.train()
    return data.decode(ids)


def save_plot(history: list, val_points: list, baseline: float, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")           # no display needed
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(np.arange(1, len(history) + 1), history, lw=0.8, alpha=0.7, label="train (batch)")
    if val_points:
        steps, losses = zip(*val_points)
        ax.plot(steps, losses, "o-", label="validation")
    ax.axhline(baseline, color="gray", ls="--", label=f"unigram baseline {baseline:.2f}")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats/char)")
    ax.set_title("char transformer on stdlib docstrings")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=1000, help="total training steps")
    p.add_argument("--out", default="out/char_transformer", help="output directory")
    p.add_argument("--resume", action="store_true", help="continue from OUT/ckpt.tg")
    p.add_argument("--stop-after", type=int, default=None, metavar="N",
                   help="stop after step N with a checkpoint, as an interrupted run would "
                        "(continue it with --resume)")
    p.add_argument("--quick", action="store_true",
                   help="a tiny smoke run: small model, 100 KB of text, 30 steps")
    p.add_argument("--device", default=None, help="ignored (jax picks the device)")
    p.add_argument("--chars", type=int, default=1_000_000, help="characters of text to use")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--block", type=int, default=64, help="context length")
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=3e-3, help="OneCycleLR's max_lr")
    p.add_argument("--eval-every", type=int, default=250)
    p.add_argument("--eval-batches", type=int, default=20)
    p.add_argument("--sample-chars", type=int, default=200)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.quick:
        apply_quick(p, args, steps=30, chars=100_000, batch=8, block=32, d_model=32, heads=2,
                    layers=1, eval_every=30, eval_batches=4, sample_chars=16)
    if args.d_model % args.heads:
        p.error(f"--d-model {args.d_model} must be divisible by --heads {args.heads}")
    return args


def main(argv=None) -> dict:
    """Train; returns the measured numbers (also printed) and the trained objects."""
    from tqdm import tqdm

    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "ckpt.tg")

    t0 = time.perf_counter()
    data = CharData(stdlib_docstrings(args.chars))
    if len(data.val) <= args.batch * args.block:
        raise SystemExit(f"--chars {args.chars}: the validation split ({len(data.val)} "
                         f"characters) needs more than --batch x --block = "
                         f"{args.batch * args.block}")
    baseline = data.unigram_baseline()
    print(f"text: {len(data.text):,} characters of stdlib docstrings, vocabulary "
          f"{len(data.vocab)}, train {len(data.train):,} / validation {len(data.val):,} "
          f"({time.perf_counter() - t0:.1f} s)")
    print(f"unigram baseline (validation): {baseline:.3f} nats/char")

    model, opt, sched, train_step, eval_loss, last_logits = build(args, len(data.vocab))
    print(f"model: {sum(p.numel() for p in model.parameters()):,} parameters")
    start, history, val_points = 0, [], []
    if args.resume:
        ckpt = tg.load(ckpt_path)
        if ckpt["total_steps"] != args.steps:
            raise SystemExit(f"--resume: {ckpt_path} is a run of {ckpt['total_steps']} steps "
                             f"(its lr schedule depends on it); pass --steps "
                             f"{ckpt['total_steps']}")
        model.load_state_dict(ckpt["model"])
        opt.load_state_dict(ckpt["optim"])
        sched.load_state_dict(ckpt["sched"])
        # the dropout generator's key, so a resumed run draws what an uninterrupted one would
        tg.set_rng_state(ckpt["rng_key"])
        start, history = ckpt["step"], list(ckpt["history"])
        val_points = [tuple(v) for v in ckpt["val"]]
        print(f"resumed from {ckpt_path} at step {start}")

    def checkpoint(step: int) -> None:
        tg.save({"model": model.state_dict(), "optim": opt.state_dict(),
                 "sched": sched.state_dict(), "rng_key": tg.get_rng_state(),
                 "step": step, "total_steps": args.steps, "history": history,
                 "val": [list(v) for v in val_points]}, ckpt_path)

    sample_rng = np.random.default_rng(args.seed)
    samples = []
    model.train()
    t_train = time.perf_counter()
    stop = args.steps if args.stop_after is None else min(args.stop_after, args.steps)
    bar = tqdm(range(start, stop), desc="training", unit="step", initial=start,
               total=args.steps)
    for step in bar:
        # each step's batch depends only on (seed, step): a resumed run sees the same data
        x, y = data.batch(data.train, args.batch, args.block,
                          np.random.default_rng([args.seed, step]))
        lr = sched.get_last_lr()[0]
        loss = train_step(tg.from_numpy(x), tg.from_numpy(y)).item()
        sched.step()
        history.append(loss)
        bar.set_postfix(loss=f"{loss:.3f}", lr=f"{lr:.1e}")
        done = step + 1
        if done % args.eval_every == 0 or done == stop:
            val = validation_loss(model, eval_loss, data, args.batch, args.block,
                                  args.eval_batches)
            val_points.append((done, val))
            text = sample(model, last_logits, data, "Return the ", args.sample_chars,
                          args.temperature, sample_rng)
            samples.append(f"--- step {done}, validation loss {val:.3f} ---\n{text}\n")
            bar.write(f"step {done}: validation loss {val:.3f} nats/char\n  sample: "
                      + text.replace("\n", "\n          "))
            checkpoint(done)
    elapsed = time.perf_counter() - t_train

    final_val = val_points[-1][1] if val_points else float("nan")
    with open(os.path.join(args.out, "samples.txt"), "a", encoding="utf-8") as fh:
        fh.writelines(samples)
    save_plot(history, val_points, baseline, os.path.join(args.out, "loss.png"))
    print(f"trained steps {start}..{stop} in {elapsed:.1f} s; compiled step traced "
          f"{train_step.traces} times")
    print(f"unigram baseline {baseline:.3f} nats/char; final validation loss {final_val:.3f}")
    print(f"wrote {ckpt_path}, {os.path.join(args.out, 'loss.png')}, "
          f"{os.path.join(args.out, 'samples.txt')}")
    return {"baseline": baseline, "val": final_val, "history": history,
            "val_points": val_points, "traces": train_step.traces, "seconds": elapsed,
            "model": model, "data": data, "last_logits": last_logits, "args": args}


if __name__ == "__main__":
    main()
