"""More ported PyTorch programs (issue 17): six well-known architectures, one training step
each, written once against a torch-shaped namespace ``lib`` (``tracegrad`` or ``torch``).

Our own code, from each architecture's well-known structure, at its usual small config:

- ``resnet``: a CIFAR ResNet of BasicBlocks, layers [1, 1, 1, 1] (widths 16-32-64-128,
  strides 1-2-2-2, projection shortcuts), BatchNorm, global average pool, Linear -> 10;
  batch 32 of 3x32x32, cross-entropy, SGD lr 0.1 momentum 0.9 weight decay 5e-4.
- ``mingpt``: minGPT's gpt-nano (n_layer 3, n_head 3, n_embd 48), block 32, vocab 65,
  dropout 0.1, hand-written causal attention (masked_fill of a tril buffer) and tanh GELU;
  batch 32; AdamW lr 5e-4 betas (0.9, 0.95), weight decay 0.1 on Linear weights only,
  grad-norm clip 1.0.
- ``vae``: pytorch/examples' VAE 784-400-20-400-784, BCE (sum) + KL; batch 128 of [0, 1)
  pixels; Adam lr 1e-3.
- ``makemore``: the makemore MLP language model: block 3, embedding 10, hidden 200 tanh,
  vocab 27; batch 32; cross-entropy; SGD lr 0.1.
- ``word_lm``: pytorch/examples' word_language_model LSTM: embedding = hidden = 200,
  2 layers, dropout 0.2, vocab 1000, bptt 35, batch 20, log_softmax + nll_loss,
  clip_grad_norm_ 0.25, the example's hand-written update ``p.data.add_(p.grad, alpha=-lr)``
  (lr 20).  Each step starts from a zero hidden state (the example carries the detached
  state across batches; a fixed batch makes that a fixed point of no interest).
- ``nanogpt``: nanoGPT at a tiny config (n_layer 4, n_head 4, n_embd 128, block 64,
  vocab 65, dropout 0, no biases, tied embedding / head weights, GPT-2 init),
  ``F.scaled_dot_product_attention(is_causal=True)``, exact GELU; batch 12; AdamW lr 1e-3
  betas (0.9, 0.99), weight decay 0.1 on 2-d parameters, grad-norm clip 1.0.

Each entry of `MORE` is the runner's program spec (benchmarks/programs.py, `run`).
"""
from __future__ import annotations

import math

import numpy as np


# ---- ResNet ---------------------------------------------------------------------------------
def _resnet_net(lib, layers=(1, 1, 1, 1), width=16, classes=10):
    nn, F = lib.nn, lib.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:   # the projection shortcut where shapes change
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            return F.relu(self.bn2(self.conv2(out)) + self.shortcut(x))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, width, 3, 1, 1, bias=False)   # CIFAR stem: no pool
            self.bn1 = nn.BatchNorm2d(width)
            blocks, cin = [], width
            for i, n in enumerate(layers):
                cout = width * 2 ** i
                for j in range(n):
                    blocks.append(BasicBlock(cin, cout, 2 if i and not j else 1))
                    cin = cout
            self.layers = nn.Sequential(*blocks)
            self.fc = nn.Linear(cin, classes)

        def forward(self, x):
            out = self.layers(F.relu(self.bn1(self.conv1(x))))
            return self.fc(lib.flatten(F.adaptive_avg_pool2d(out, 1), 1))
    return ResNet()


def _resnet(lib, batch):
    model = _resnet_net(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)

    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return model, step


def _image_data(rng, batch, shape=(3, 32, 32), classes=10):
    return [rng.standard_normal((batch, *shape)).astype(np.float32),
            rng.integers(0, classes, batch)]


# ---- minGPT ---------------------------------------------------------------------------------
def _mingpt_net(lib, n_layer=3, n_head=3, n_embd=48, block=32, vocab=65, pdrop=0.1):
    nn, F = lib.nn, lib.nn.functional

    class NewGELU(nn.Module):
        def forward(self, x):   # GPT-2's tanh approximation, written out
            return 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) *
                                             (x + 0.044715 * lib.pow(x, 3.0))))

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.attn_dropout = nn.Dropout(pdrop)
            self.resid_dropout = nn.Dropout(pdrop)
            self.register_buffer("bias", lib.tril(lib.ones(block, block)).view(1, 1, block,
                                                                                  block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), NewGELU(),
                                     nn.Linear(4 * n_embd, n_embd), nn.Dropout(pdrop))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(block, n_embd)
            self.drop = nn.Dropout(pdrop)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            for m in self.modules():   # GPT-2's init
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, mean=0.0, std=0.02)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)

        def forward(self, idx):
            pos = lib.arange(0, idx.size(1), dtype=lib.long).unsqueeze(0)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for blk in self.h:
                x = blk(x)
            return self.lm_head(self.ln_f(x))
    return GPT()


def _mingpt(lib, batch):
    model = _mingpt_net(lib)
    nn = lib.nn
    # minGPT's groups: weight decay on Linear weights; biases, LayerNorm, Embedding none
    decay = {id(m.weight) for m in model.modules() if isinstance(m, nn.Linear)}
    params = list(model.parameters())
    groups = [{"params": [p for p in params if id(p) in decay], "weight_decay": 0.1},
              {"params": [p for p in params if id(p) not in decay], "weight_decay": 0.0}]
    opt = lib.optim.AdamW(groups, lr=5e-4, betas=(0.9, 0.95))

    def step(idx, targets):
        logits = model(idx)
        loss = lib.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)),
                                               targets.view(-1), ignore_index=-1)
        model.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss
    return model, step


def _tokens(block, vocab):
    def data(rng, batch):
        idx = rng.integers(0, vocab, (batch, block + 1))
        return [idx[:, :-1].copy(), idx[:, 1:].copy()]
    return data


# ---- VAE ------------------------------------------------------------------------------------
def _vae_net(lib):
    nn, F = lib.nn, lib.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(784, 400)
            self.fc21 = nn.Linear(400, 20)
            self.fc22 = nn.Linear(400, 20)
            self.fc3 = nn.Linear(20, 400)
            self.fc4 = nn.Linear(400, 784)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar):
            if not self.training:   # the mean in eval: a deterministic forward to compare
                return mu
            std = lib.exp(0.5 * logvar)
            return mu + lib.randn_like(std) * std

        def decode(self, z):
            return lib.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x):
            mu, logvar = self.encode(x.view(-1, 784))
            return self.decode(self.reparameterize(mu, logvar)), mu, logvar
    return VAE()


def _vae(lib, batch):
    model = _vae_net(lib)
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    F = lib.nn.functional

    def step(x):
        opt.zero_grad()
        recon, mu, logvar = model(x)
        bce = F.binary_cross_entropy(recon, x.view(-1, 784), reduction="sum")
        kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = bce + kld
        loss.backward()
        opt.step()
        return loss
    return model, step


def _vae_data(rng, batch):
    return [rng.uniform(0, 1, (batch, 1, 28, 28)).astype(np.float32)]


# ---- makemore MLP ---------------------------------------------------------------------------
def _makemore_net(lib, block=3, n_embd=10, hidden=200, vocab=27):
    nn = lib.nn

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.mlp = nn.Sequential(nn.Linear(block * n_embd, hidden), nn.Tanh(),
                                     nn.Linear(hidden, vocab))

        def forward(self, idx):
            return self.mlp(self.wte(idx).view(idx.shape[0], -1))
    return MLP()


def _makemore(lib, batch):
    model = _makemore_net(lib)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        loss = lib.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return model, step


def _makemore_data(rng, batch):
    return [rng.integers(0, 27, (batch, 3)), rng.integers(0, 27, batch)]


# ---- word_language_model LSTM ---------------------------------------------------------------
def _word_lm_net(lib, ntoken=1000, ninp=200, nhid=200, nlayers=2, dropout=0.2):
    nn, F = lib.nn, lib.nn.functional

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            nn.init.uniform_(self.encoder.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.drop(self.encoder(input)), hidden)
            decoded = self.decoder(self.drop(output)).view(-1, ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(nlayers, bsz, nhid), weight.new_zeros(nlayers, bsz, nhid))
    return RNNModel()


def _word_lm(lib, batch, lr=20.0, clip=0.25):
    model = _word_lm_net(lib)

    def step(data, targets):
        hidden = model.init_hidden(data.shape[1])
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = lib.nn.functional.nll_loss(output, targets.view(-1))
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        return loss
    return model, step


def _word_lm_data(rng, batch, bptt=35, ntoken=1000):
    seq = rng.integers(0, ntoken, (bptt + 1, batch))   # (time, batch): the example's layout
    return [seq[:-1].copy(), seq[1:].copy()]


# ---- nanoGPT --------------------------------------------------------------------------------
def _nanogpt_net(lib, n_layer=4, n_head=4, n_embd=128, block=64, vocab=65):
    nn, F = lib.nn, lib.nn.functional

    class LayerNorm(nn.Module):   # nanoGPT's: LayerNorm with an optional bias (here none)
        def __init__(self, ndim):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(ndim))

        def forward(self, x):
            return F.layer_norm(x, self.weight.shape, self.weight, None, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=False)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
                                               is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd, bias=False), nn.GELU(),
                                     nn.Linear(4 * n_embd, n_embd, bias=False))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                h=nn.ModuleList([Block() for _ in range(n_layer)]), ln_f=LayerNorm(n_embd)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight   # weight tying
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, mean=0.0, std=0.02)
            for name, p in self.named_parameters():   # GPT-2's scaled residual projections
                if name.endswith("c_proj.weight") or name.endswith("mlp.2.weight"):
                    nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

        def forward(self, idx):
            t = self.transformer
            pos = lib.arange(0, idx.size(1), dtype=lib.long)
            x = t.wte(idx) + t.wpe(pos)
            for blk in t.h:
                x = blk(x)
            return self.lm_head(t.ln_f(x))
    return GPT()


def _nanogpt(lib, batch):
    model = _nanogpt_net(lib)
    params = list(model.parameters())   # the tied weight once
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = lib.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.99))

    def step(idx, targets):
        logits = model(idx)
        loss = lib.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)),
                                               targets.view(-1), ignore_index=-1)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss
    return model, step


def _first_input(model, data):
    return model(data[0])


def _vae_probe(model, data):
    return model(data[0])[0]


def _word_lm_probe(model, data):
    return model(data[0], model.init_hidden(data[0].shape[1]))[0]


# name: build(lib, batch) -> (model, step(*data) -> loss), data(rng, batch), batch,
# probe(model, data) -> a forward value in eval mode, whether the first losses must agree
# (no dropout or sampling in the step), and a batch for --quick
MORE = {
    "resnet": dict(build=_resnet, data=_image_data, batch=32, probe=_first_input,
                   same_loss=True, quick_batch=4),
    "mingpt": dict(build=_mingpt, data=_tokens(32, 65), batch=32, probe=_first_input,
                   same_loss=False, quick_batch=4),
    "vae": dict(build=_vae, data=_vae_data, batch=128, probe=_vae_probe, same_loss=False,
                quick_batch=8),
    "makemore": dict(build=_makemore, data=_makemore_data, batch=32, probe=_first_input,
                     same_loss=True, quick_batch=8),
    "word_lm": dict(build=_word_lm, data=_word_lm_data, batch=20, probe=_word_lm_probe,
                    same_loss=False, quick_batch=4),
    "nanogpt": dict(build=_nanogpt, data=_tokens(64, 65), batch=12, probe=_first_input,
                    same_loss=True, quick_batch=2),
}
