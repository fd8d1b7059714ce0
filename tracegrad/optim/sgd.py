"""Stochastic gradient descent with momentum and weight decay (torch.optim.SGD)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


class SGD(Optimizer):
    """torch.optim.SGD: for each param with a grad,

        g = grad + weight_decay * p
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf     (when momentum != 0)
        p -= lr * g
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: invalid hyper-parameter lr={lr}, momentum={momentum}, "
                             f"weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    @no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                if wd != 0:
                    g = g + p * wd
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = Tensor(g._data)
                    else:
                        buf.mul_(momentum).add_(g, alpha=1 - group["dampening"])
                    g = g + buf * momentum if group["nesterov"] else buf
                p.sub_(g * lr)
