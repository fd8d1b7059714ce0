"""Adadelta (torch.optim.Adadelta; Zeiler 2012)."""
from __future__ import annotations

from .. import _creation
from ..ir.types import float32
from .optimizer import Optimizer, check_hyper, check_impl, real_views


class Adadelta(Optimizer):
    """torch.optim.Adadelta (its single-tensor update).  For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                       (weight_decay != 0)
        v = rho * v + (1 - rho) * g * g
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta * delta
        p = p - lr * delta

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, weight_decay: read as data by a compiled step (a schedule does not retrace).
        rho, eps, maximize: baked into a compiled step (a change retraces).
        foreach, capturable: accepted and ignored; differentiable=True is refused
            (see `check_impl`).
    State per parameter: ``step`` (0-d float32), ``square_avg`` (v) and ``acc_delta`` (u),
    the parameter's shape and dtype.  A complex parameter is updated as its real view.
    Raises:
        ValueError: lr, eps or weight_decay < 0, rho outside [0, 1] (torch's messages).
    """

    _data_keys = ("lr", "weight_decay")

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0.0, foreach=None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False):
        check_hyper("Adadelta", lr=lr, rho=rho, eps=eps, weight_decay=weight_decay)
        if not rho <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value: {rho} (must be in [0, 1])")
        check_impl("Adadelta", foreach, None, capturable, differentiable)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        rho, eps = group["rho"], group["eps"]
        for p, grad in self._grads(group):
            state = self.state[p]
            if "step" not in state:
                state["step"] = _creation.zeros((), dtype=float32)
                state["square_avg"] = _creation.zeros_like(p)
                state["acc_delta"] = _creation.zeros_like(p)
            state["step"].add_(1)
            if group["weight_decay"] != 0:
                grad = grad + p * hyper["weight_decay"]
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            if p.dtype.is_complex:
                p, grad, square_avg, acc_delta = real_views(p, grad, square_avg, acc_delta)
            square_avg.mul_(rho).add_(grad * grad * (1 - rho))
            delta = (acc_delta + eps).sqrt() / (square_avg + eps).sqrt() * grad
            acc_delta.mul_(rho).add_(delta * delta * (1 - rho))
            p.sub_(delta * hyper["lr"])
