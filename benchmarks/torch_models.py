"""The benchmark models in PyTorch (only with the optional ``bench`` extra: torch==2.13.0).

Same architectures and parameter names as models.py, so the tracegrad
model's initial weights copy over by name.  Written the way a PyTorch user
writes them: ``nn.Linear``, ``nn.LayerNorm`` (fused kernel; same math as the
core-op layer norm of models.py: biased variance, eps 1e-5), ``F.gelu(approximate="tanh")``,
the explicit masked-softmax attention of models.py, ``F.cross_entropy``.

torch is imported inside the functions: this module imports without it, and
no test imports torch.
"""
from __future__ import annotations

import math


def add_site(python: str) -> None:
    """Make the torch of another virtual environment importable here (its site-packages
    appended to ``sys.path``, after ours, so NumPy and jax stay our own): the reference torch
    lives in a venv of its own (``--torch-python /tmp/torch/bin/python``)."""
    import pathlib
    import sys
    v = sys.version_info
    lib = f"python{v.major}.{v.minor}"
    site = pathlib.Path(python).parent.parent / "lib" / lib / "site-packages"
    if not (site / "torch").is_dir():
        raise SystemExit(f"--torch-python: no torch for Python {v.major}.{v.minor} in {site}")
    sys.path.append(str(site))


def available() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def mlp():
    import torch.nn as nn
    return nn.Sequential(nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                         nn.Linear(1024, 10))


def cnn():
    import torch.nn as nn
    return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 8 * 8, 10))


def mlp_loss(model, x, y):
    import torch.nn.functional as F
    return F.cross_entropy(model(x), y)


def _block_class():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, d, heads, hidden, seq):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
            self.register_buffer("mask", torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1),
                                 persistent=False)

        def forward(self, x):
            b, t, d = x.shape
            h, hd = self.heads, d // self.heads
            qkv = self.qkv(self.ln1(x)).reshape(b, t, 3, h, hd).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = torch.where(self.mask[:t, :t], -1e9, att)
            y = att.softmax(-1) @ v
            x = x + self.proj(y.permute(0, 2, 1, 3).reshape(b, t, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    return Block


def transformer(vocab=1000, d=256, heads=4, hidden=1024, seq=128, layers=2):
    import torch
    import torch.nn as nn
    Block = _block_class()

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Parameter(torch.zeros(vocab, d))
            self.pos = nn.Parameter(torch.zeros(seq, d))
            self.blocks = nn.Sequential(*[Block(d, heads, hidden, seq) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            b, t = idx.shape
            x = self.tok[idx] + self.pos[:t]
            return self.head(self.ln(self.blocks(x)))

    return Transformer()


def transformer_loss(model, idx, targets):
    import torch.nn.functional as F
    logits = model(idx)
    b, t, v = logits.shape
    return F.cross_entropy(logits.reshape(b * t, v), targets.reshape(b * t))


def transformer_loss_bf16(model, idx, targets):
    """`transformer_loss` under ``torch.autocast("cpu", dtype=torch.bfloat16)``: linear layers
    and matmuls in bfloat16, cross-entropy in float32 (torch's CPU autocast lists)."""
    import torch
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return transformer_loss(model, idx, targets)


def lstm(vocab=1000, d=256, hidden=256, layers=2):
    import torch.nn as nn

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.rnn = nn.LSTM(d, hidden, layers)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, idx):
            out, _ = self.rnn(self.emb(idx))
            return self.head(out)

    return LSTMLM()


def lstm_loss(model, idx, targets):
    import torch.nn.functional as F
    logits = model(idx)
    t, b, v = logits.shape
    return F.cross_entropy(logits.reshape(t * b, v), targets.reshape(t * b))


def load_params(model, params: dict) -> None:
    """Copy NumPy arrays (jax_models.params_of of the tracegrad model) into `model` by name."""
    import torch
    own = dict(model.named_parameters())
    if set(own) != set(params):
        raise ValueError(f"torch model parameters {sorted(set(own) ^ set(params))} do not "
                         "match the tracegrad model's")
    with torch.no_grad():
        for name, p in own.items():
            p.copy_(torch.from_numpy(params[name]))


def as_torch(arrays) -> list:
    import torch
    return [torch.from_numpy(a.copy()) for a in arrays]


def saved_bytes(model, loss_fn, batch) -> int:
    """Bytes of the tensors PyTorch eager saves for backward (counted with
    ``torch.autograd.graph.saved_tensors_hooks``): each storage once, leaving out
    parameters and the batch, as tracegrad's ``saved_bytes`` leaves out program inputs."""
    import torch
    skip = {p.untyped_storage().data_ptr() for p in model.parameters()}
    skip |= {t.untyped_storage().data_ptr() for t in batch}
    seen: dict[int, int] = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in skip:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss_fn(model, *batch)
    return sum(seen.values())


def compiled_saved_bytes(model, loss_fn, batch) -> int:
    """`saved_bytes` of ``torch.compile(loss_fn)``: the tensors AOTAutograd's compiled
    forward returns for backward (the partitioner's choice), counted the same way.  Its
    ``CompiledFunction.forward`` saves them with ``ctx.save_for_backward`` outside the
    compiled graph, so the pack hook sees each one; plain-function hooks are not inlined
    into the graph and do not recompile it (dynamo's guard only tracks ``fx.GraphModule``
    hooks), so what is counted is the code compiled here, without hooks."""
    import torch
    fn = torch.compile(loss_fn)
    fn(model, *batch)   # compiles (forward; the backward compiles at its first call)
    return saved_bytes(model, fn, batch)
