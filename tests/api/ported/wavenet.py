"""makemore part 5 ("building a WaveNet"): the hierarchical character MLP, written again
for a port test with torch's modules, only the imports being tracegrad's.

Same structure and ops: the dataset of `block_size` contexts built with Python lists and
`torch.tensor`, `nn.Embedding` -> (`FlattenConsecutive(2)` -> `Linear(bias=False)` ->
BatchNorm over dims (0, 1) -> `Tanh`) x 3 -> `Linear`, in an `nn.Sequential`; the
BatchNorm of the lecture (a module with its own gamma/beta and running buffers updated
under `torch.no_grad()`, unbiased `var`, a `training` branch), the last layer scaled by
0.1 under `torch.no_grad()`, minibatches by `torch.randint` index (here: a fixed NumPy
draw, since the two libraries' streams differ), `F.cross_entropy`, the manual SGD update
`p.data += -lr * p.grad` with a step-decayed lr and the `loss.log10().item()` log, then
the split losses under `torch.no_grad()` in eval mode and greedy sampling.
"""
import numpy as np

import tracegrad as torch
import tracegrad.nn as nn
import tracegrad.nn.functional as F


class FlattenConsecutive(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        B, T, C = x.shape
        x = x.view(B, T // self.n, C * self.n)
        if x.shape[1] == 1:
            x = x.squeeze(1)
        return x


class BatchNorm1d(nn.Module):
    def __init__(self, dim, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps = eps
        self.momentum = momentum
        # parameters (trained with backprop)
        self.gamma = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))
        # buffers (trained with a running 'momentum update')
        self.register_buffer('running_mean', torch.zeros(dim))
        self.register_buffer('running_var', torch.ones(dim))

    def forward(self, x):
        # calculate the forward pass
        if self.training:
            if x.ndim == 2:
                dim = 0
            elif x.ndim == 3:
                dim = (0, 1)
            xmean = x.mean(dim, keepdim=True)  # batch mean
            xvar = x.var(dim, keepdim=True)  # batch variance
        else:
            xmean = self.running_mean
            xvar = self.running_var
        xhat = (x - xmean) / torch.sqrt(xvar + self.eps)  # normalize to unit variance
        out = self.gamma * xhat + self.beta
        # update the buffers
        if self.training:
            with torch.no_grad():
                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * xmean.squeeze())
                self.running_var.mul_(1 - self.momentum).add_(self.momentum * xvar.squeeze())
        return out


def build_dataset(words, stoi, block_size):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]  # crop and append
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    return X, Y


def train(words, steps=4, batch_size=8, block_size=8, n_embd=6, n_hidden=16, init=None,
          batch_seed=0, samples=2, log=print):
    """Each step's loss, the log10 losses' sum, train/val losses in eval mode, the running
    mean's sum, then greedy samples (as strings)."""
    chars = sorted(list(set(''.join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi['.'] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)
    n1 = int(0.8 * len(words))
    Xtr, Ytr = build_dataset(words[:n1], stoi, block_size)
    Xdev, Ydev = build_dataset(words[n1:], stoi, block_size)

    torch.manual_seed(42)
    model = nn.Sequential(
        nn.Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), nn.Linear(n_embd * 2, n_hidden, bias=False),
        BatchNorm1d(n_hidden), nn.Tanh(),
        FlattenConsecutive(2), nn.Linear(n_hidden * 2, n_hidden, bias=False),
        BatchNorm1d(n_hidden), nn.Tanh(),
        FlattenConsecutive(2), nn.Linear(n_hidden * 2, n_hidden, bias=False),
        BatchNorm1d(n_hidden), nn.Tanh(),
        nn.Linear(n_hidden, vocab_size),
    )
    if init is not None:
        init(model)
    # parameter init
    with torch.no_grad():
        model[-1].weight *= 0.1  # last layer make less confident
    parameters = list(model.parameters())
    log(sum(p.nelement() for p in parameters))  # number of parameters in total
    for p in parameters:
        p.requires_grad = True

    rng = np.random.default_rng(batch_seed)
    lossi, losses = [], []
    for i in range(steps):
        # minibatch construct
        ix = torch.from_numpy(rng.integers(0, Xtr.shape[0], (batch_size,)))
        Xb, Yb = Xtr[ix], Ytr[ix]  # batch X,Y
        # forward pass
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)  # loss function
        # backward pass
        for p in parameters:
            p.grad = None
        loss.backward()
        # update: simple SGD
        lr = 0.1 if i < steps // 2 else 0.01  # step learning rate decay
        for p in parameters:
            p.data += -lr * p.grad
        log(f'{i:7d}/{steps:7d}: {loss.item():.4f}')
        lossi.append(loss.log10().item())
        losses.append(loss.item())

    # put layers into eval mode (needed for batchnorm especially)
    model.eval()

    @torch.no_grad()  # this decorator disables gradient tracking inside pytorch
    def split_loss(split):
        x, y = {'train': (Xtr, Ytr), 'val': (Xdev, Ydev)}[split]
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        log(split, loss.item())
        return loss.item()

    record = losses + [sum(lossi), split_loss('train'), split_loss('val'),
                       model[3].running_mean.sum().item()]
    names = []
    for _ in range(samples):
        out = []
        context = [0] * block_size  # initialize with all ...
        while len(out) < 10:
            # forward pass the neural net
            logits = model(torch.tensor([context]))
            probs = F.softmax(logits, dim=1)
            # greedy: torch.multinomial(probs, num_samples=1, generator=g) draws from each
            # library's own stream
            ix = torch.argmax(probs, dim=1).item()
            # shift the context window and track the samples
            context = context[1:] + [ix]
            out.append(ix)
            # if we sample the special '.' token, break
            if ix == 0:
                break
        names.append(''.join(itos[i] for i in out))
    return record + names
