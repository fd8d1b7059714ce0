"""Custom `tg.autograd.Function`s with their own backward, checked and used in a compiled step.

Two Functions, written as in torch:

- `LogSumExp`: log(sum(exp(x), dim)), computed stably as m + log(sum(exp(x - m))) with
  m = max(x, dim); its backward is softmax(x) * grad, from the saved input and output.
  Checked with `gradcheck` in float64 and against the built-in `tg.logsumexp`, including
  inputs where the naive formula overflows to inf.
- `SignSTE`: the sign function with a straight-through estimator (Bengio et al., 2013):
  the forward is sign(x), the backward passes the gradient through where |x| <= 1 (the
  derivative of hardtanh).  Not the true derivative (which is zero almost everywhere), so
  `gradcheck` does not apply; the check is that its gradient equals hardtanh's.

Then a `@tg.compile`d SGD step trains an MLP with binarized (sign) hidden units on
scikit-learn's digits, with the cross-entropy written as LogSumExp(logits) - logit[y].
Inside `tg.compile` the Functions' `backward` methods run on traced tensors, so they are
inlined into the one program.  The script prints each check; every check raises on failure.
Run with `python examples/custom_function.py` or `make demo-function` (8 s on the shared
2-core machine, 4 s of it CPU, mostly compilation).
"""
from __future__ import annotations

import os
import sys

import numpy as np

import tracegrad as tg
import tracegrad.nn as nn
import tracegrad.nn.functional as F
from tracegrad.autograd import Function, gradcheck

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # digits_common: next to this file
import digits_common  # noqa: E402


class LogSumExp(Function):
    """log(sum(exp(x), dim)) for a float tensor x; the result drops `dim` (torch.logsumexp)."""

    @staticmethod
    def forward(ctx, x, dim):
        m = x.amax(dim, keepdim=True)
        # rows that are all -inf would give (-inf) - (-inf) = nan: shift those by 0 instead
        m = tg.where(m.abs() == float("inf"), tg.zeros_like(m), m)
        out = (m + (x - m).exp().sum(dim, keepdim=True).log()).squeeze(dim)
        ctx.dim = dim
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        softmax = (x - out.unsqueeze(ctx.dim)).exp()       # d out / d x
        return grad.unsqueeze(ctx.dim) * softmax, None     # no gradient for `dim`


class SignSTE(Function):
    """sign(x) forward; straight-through gradient grad * (|x| <= 1) backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (x.abs() <= 1).to(grad.dtype)


def check_logsumexp(rng: np.random.Generator) -> None:
    x = tg.tensor(rng.standard_normal((3, 5)), dtype=tg.float64, requires_grad=True)
    ok = gradcheck(lambda t: LogSumExp.apply(t, 1), (x,))
    print(f"gradcheck LogSumExp (float64, 3x5, dim=1): {ok}")
    ok = gradcheck(lambda t: LogSumExp.apply(t, 0), (x,))
    print(f"gradcheck LogSumExp (float64, 3x5, dim=0): {ok}")

    # against the built-in op: values and gradients, with a row the naive formula overflows on
    big = rng.standard_normal((4, 6)) * 3.0
    big[0] += 1000.0
    a = tg.tensor(big, dtype=tg.float64, requires_grad=True)
    b = tg.tensor(big, dtype=tg.float64, requires_grad=True)
    w = tg.tensor(rng.standard_normal(4), dtype=tg.float64)
    ours, builtin = LogSumExp.apply(a, 1), tg.logsumexp(b, 1)
    (ours * w).sum().backward()
    (builtin * w).sum().backward()
    d_val = np.abs(ours.detach().numpy() - builtin.detach().numpy()).max()
    d_grad = np.abs(a.grad.numpy() - b.grad.numpy()).max()
    with np.errstate(over="ignore"):
        naive = np.log(np.exp(big).sum(axis=1))
    print(f"LogSumExp vs tg.logsumexp: max |value diff| {d_val:.1e}, max |grad diff| "
          f"{d_grad:.1e} (the naive log(sum(exp(x))) gives {naive[0]} on the +1000 row)")
    if not (d_val < 1e-12 and d_grad < 1e-12 and np.isinf(naive[0])):
        raise AssertionError("LogSumExp disagrees with tg.logsumexp")


def check_ste(rng: np.random.Generator) -> None:
    v = rng.uniform(-2.0, 2.0, 16)
    a = tg.tensor(v, requires_grad=True)
    b = tg.tensor(v, requires_grad=True)
    w = tg.tensor(rng.standard_normal(16))
    y = SignSTE.apply(a)
    (y * w).sum().backward()
    (F.hardtanh(b) * w).sum().backward()
    same_fwd = np.array_equal(y.detach().numpy(), np.sign(v))
    same_grad = np.allclose(a.grad.numpy(), b.grad.numpy())
    print(f"SignSTE: forward equals sign(x): {same_fwd}; gradient equals hardtanh's: "
          f"{same_grad}")
    if not (same_fwd and same_grad):
        raise AssertionError("SignSTE: wrong forward or straight-through gradient")


def make_model():
    tg.manual_seed(0)
    return nn.Linear(64, 64), nn.Linear(64, 10)


def forward(layers, x):
    """x f32[B, 64] -> logits f32[B, 10], through binarized hidden units."""
    l1, l2 = layers
    return l2(SignSTE.apply(l1(x)))


def lse_cross_entropy(logits, y):
    """Mean cross-entropy as LogSumExp(logits) - logits[y] (equals F.cross_entropy)."""
    return (LogSumExp.apply(logits, 1) - logits.gather(1, y.unsqueeze(1)).squeeze(1)).mean()


def train(epochs: int = 15, batch: int = 64, lr: float = 0.1) -> dict:
    """Train the binarized MLP with a compiled step; returns losses and accuracies."""
    x_train, y_train, x_test, y_test = digits_common.load_digits(0)
    layers = make_model()
    params = [p for layer in layers for p in layer.parameters()]
    opt = tg.optim.SGD(params, lr=lr, momentum=0.9)

    @tg.compile
    def step(x, y):
        opt.zero_grad()
        logits = forward(layers, x)
        loss = lse_cross_entropy(logits, y)
        loss.backward()
        opt.step()
        return loss, F.cross_entropy(logits, y)    # the built-in loss, to compare

    # the first compiled step against the same step run eagerly from the same weights
    x0, y0 = tg.from_numpy(x_train[:batch]), tg.from_numpy(y_train[:batch])
    eager_layers = make_model()
    eager_params = [p for layer in eager_layers for p in layer.parameters()]
    eager_loss = lse_cross_entropy(forward(eager_layers, x0), y0)
    eager_loss.backward()
    eager_grads = [p.grad.numpy().copy() for p in eager_params]

    rng = np.random.default_rng(0)
    losses, diffs = [], []
    n_steps = len(x_train) // batch
    for epoch in range(epochs):
        order = rng.permutation(len(x_train))
        for i in range(n_steps):
            idx = order[i * batch:(i + 1) * batch]
            if epoch == 0 and i == 0:
                idx = np.arange(batch)     # the batch the eager step saw
            ours, builtin = step(tg.from_numpy(x_train[idx]), tg.from_numpy(y_train[idx]))
            losses.append(ours.item())
            diffs.append(abs(ours.item() - builtin.item()))
            if epoch == 0 and i == 0:
                grad_diff = max(np.abs(p.grad.numpy() - g).max()
                                for p, g in zip(params, eager_grads))
                print(f"compiled step vs eager: loss {losses[0]:.6f} vs "
                      f"{eager_loss.item():.6f}, max |grad diff| {grad_diff:.1e}")
                if abs(losses[0] - eager_loss.item()) > 1e-5 or grad_diff > 1e-5:
                    raise AssertionError("the compiled step disagrees with the eager one")

    def accuracy(x, y):
        with tg.no_grad():
            return float((forward(layers, tg.from_numpy(x)).numpy().argmax(1) == y).mean())

    result = {"losses": losses, "max_loss_diff": max(diffs), "traces": step.traces,
              "train_acc": accuracy(x_train, y_train), "test_acc": accuracy(x_test, y_test)}
    print(f"compiled training: {len(losses)} steps, traced {step.traces} time(s); loss "
          f"{np.mean(losses[:n_steps]):.3f} (epoch 1) -> {np.mean(losses[-n_steps:]):.3f} "
          f"(epoch {epochs}); LogSumExp loss vs F.cross_entropy: max |diff| "
          f"{result['max_loss_diff']:.1e}")
    print(f"binarized MLP accuracy: train {result['train_acc']:.3f}, "
          f"test {result['test_acc']:.3f}")
    if result["max_loss_diff"] > 1e-5:
        raise AssertionError("the LogSumExp cross-entropy disagrees with F.cross_entropy")
    return result


def main() -> dict:
    rng = np.random.default_rng(0)
    check_logsumexp(rng)
    check_ste(rng)
    return train()


if __name__ == "__main__":
    main()
