"""ASGD, averaged stochastic gradient descent (torch.optim.ASGD; Polyak & Juditsky 1992)."""
from __future__ import annotations

from .. import _creation
from .._ops import where
from ..ir.types import float32, float64
from .optimizer import Optimizer, check_hyper, check_impl, real_views


class ASGD(Optimizer):
    """torch.optim.ASGD (its single-tensor update).  With t the step count after its
    increment, and eta, mu the values from the previous step::

        g = -grad if maximize else grad
        g = g + weight_decay * p                       (weight_decay != 0)
        p = p * (1 - lambd * eta) - eta * g
        ax = p if mu == 1 else ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, weight_decay: read as data by a compiled step.
        lambd, alpha, t0, maximize: baked into a compiled step.
        foreach, capturable: accepted and ignored; differentiable=True is refused.
    State per parameter: ``step``, ``eta`` (starts at lr) and ``mu`` (starts at 1), 0-d
    float32 as torch's; ``ax``, the running average of the parameter (its shape and dtype).
    Raises:
        ValueError: lr or weight_decay < 0.
    """

    _data_keys = ("lr", "weight_decay")

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0.0, foreach=None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False):
        check_hyper("ASGD", lr=lr, weight_decay=weight_decay)
        check_impl("ASGD", foreach, None, capturable, differentiable)
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        lr, lambd = hyper["lr"], group["lambd"]
        for p, grad in self._grads(group):
            state = self.state[p]
            if "step" not in state:
                state["step"] = _creation.zeros((), dtype=float32)
                state["eta"] = lr.to(float32).clone()
                state["mu"] = _creation.ones((), dtype=float32)
                state["ax"] = _creation.zeros_like(p)
            step = state["step"].add_(1).to(float64)
            eta, mu, ax = state["eta"], state["mu"], state["ax"]
            if group["weight_decay"] != 0:
                grad = grad + p * hyper["weight_decay"]
            if p.dtype.is_complex:
                p, grad, ax = real_views(p, grad, ax)
            eta64 = eta.to(float64)                    # torch reads eta as a Python float
            p.mul_(1 - lambd * eta64)
            p.sub_(grad * eta64)
            ax.copy_(where(mu == 1, p, ax + (p - ax) * mu))
            eta.copy_(lr / (1 + lambd * lr * step) ** group["alpha"])
            mu.copy_(1 / (step - group["t0"]).clamp(min=1.0))
