"""Adamax (torch.optim.Adamax; the infinity-norm variant of Adam, Kingma & Ba 2015)."""
from __future__ import annotations

from .. import _creation
from ..ir.types import float32
from .adam import check_betas
from .optimizer import Optimizer, check_hyper, check_impl, real_views


class Adamax(Optimizer):
    """torch.optim.Adamax (its single-tensor update).  With t the step count::

        g = -grad if maximize else grad
        g = g + weight_decay * p                        (weight_decay != 0)
        m = m + (1 - beta1) * (g - m)                   (torch's lerp)
        u = max(beta2 * u, |g| + eps)
        p = p - lr / (1 - beta1**t) * m / u

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, betas, weight_decay: read as data by a compiled step.
        eps, maximize: baked into a compiled step.
        foreach, capturable: accepted and ignored; differentiable=True is refused.
    State per parameter: ``step`` (0-d float32), ``exp_avg``, ``exp_inf``.
    Raises:
        ValueError: lr, eps or weight_decay < 0, a beta outside [0, 1).
    """

    _data_keys = ("lr", "betas", "weight_decay")

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False):
        check_hyper("Adamax", lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas("Adamax", betas)
        check_impl("Adamax", foreach, None, capturable, differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        lr, (beta1, beta2) = hyper["lr"], hyper["betas"]
        for p, grad in self._grads(group):
            state = self.state[p]
            if "step" not in state:
                state["step"] = _creation.zeros((), dtype=float32)
                state["exp_avg"] = _creation.zeros_like(p)
                state["exp_inf"] = _creation.zeros_like(p)
            step = state["step"].add_(1)
            if group["weight_decay"] != 0:
                grad = grad + p * hyper["weight_decay"]
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            if p.dtype.is_complex:
                p, grad, exp_avg, exp_inf = real_views(p, grad, exp_avg, exp_inf)
            exp_avg.add_((grad - exp_avg) * (1 - beta1))
            exp_inf.copy_((exp_inf * beta2).maximum(grad.abs() + group["eps"]))
            clr = lr / (1 - beta1 ** step)           # float64, as torch's Python floats
            p.sub_(exp_avg / exp_inf * clr)
