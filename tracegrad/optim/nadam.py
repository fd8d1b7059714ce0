"""NAdam (torch.optim.NAdam; Dozat 2016, Adam with Nesterov momentum) and RAdam
(torch.optim.RAdam; Liu et al. 2020, Adam with a rectified adaptive learning rate)."""
from __future__ import annotations

from .. import _creation
from .._ops import where
from ..ir.types import float32, float64
from .adam import check_betas
from .optimizer import Optimizer, check_hyper, check_impl, real_views


def _decay(p, grad, group: dict, hyper: dict):
    """torch's weight decay for NAdam/RAdam: decoupled (``p *= 1 - lr * wd``) or L2."""
    if group["weight_decay"] == 0:
        return grad
    if group["decoupled_weight_decay"]:
        p.mul_(1 - hyper["lr"] * hyper["weight_decay"])
        return grad
    return grad + p * hyper["weight_decay"]


def _moments(state: dict, p):
    if "step" not in state:
        state["step"] = _creation.zeros((), dtype=float32)
        state["exp_avg"] = _creation.zeros_like(p)
        state["exp_avg_sq"] = _creation.zeros_like(p)
    return state["exp_avg"], state["exp_avg_sq"]


class NAdam(Optimizer):
    """torch.optim.NAdam (its single-tensor update).  With t the step count and
    ``mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))``::

        g = -grad if maximize else grad
        weight decay as Adam (L2) or AdamW (decoupled_weight_decay)
        mu_product = mu_product * mu_t                   (a float32 state tensor, as torch)
        m = m + (1 - beta1) * (g - m);  v = beta2 * v + (1 - beta2) * g * g
        denom = sqrt(v / (1 - beta2**t)) + eps
        p = p - lr * (1 - mu_t) / (1 - mu_product) * g / denom
              - lr * mu_{t+1} / (1 - mu_product * mu_{t+1}) * m / denom

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, betas, weight_decay: read as data by a compiled step.
        eps, momentum_decay, decoupled_weight_decay, maximize: baked into a compiled step.
        foreach, capturable: accepted and ignored; differentiable=True is refused.
    State per parameter: ``step`` and ``mu_product`` (0-d float32), ``exp_avg``,
    ``exp_avg_sq``.
    Raises:
        ValueError: lr, eps, weight_decay or momentum_decay < 0, a beta outside [0, 1).
    """

    _data_keys = ("lr", "betas", "weight_decay")

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False):
        check_hyper("NAdam", lr=lr, eps=eps, weight_decay=weight_decay,
                    momentum_decay=momentum_decay)
        check_betas("NAdam", betas)
        check_impl("NAdam", foreach, None, capturable, differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        lr, (beta1, beta2), decay = hyper["lr"], hyper["betas"], group["momentum_decay"]
        for p, grad in self._grads(group):
            state = self.state[p]
            exp_avg, exp_avg_sq = _moments(state, p)
            if "mu_product" not in state:
                state["mu_product"] = _creation.ones((), dtype=float32)
            step = state["step"].add_(1).to(float64)   # torch reads it as a Python float
            grad = _decay(p, grad, group, hyper)
            if p.dtype.is_complex:
                p, grad, exp_avg, exp_avg_sq = real_views(p, grad, exp_avg, exp_avg_sq)
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * decay))
            # torch multiplies the float32 state by the Python float as float32 numbers
            mu_product = state["mu_product"].mul_(mu.to(float32)).to(float64)
            exp_avg.add_((grad - exp_avg) * (1 - beta1))
            exp_avg_sq.mul_(beta2).add_(grad * grad * (1 - beta2))
            denom = (exp_avg_sq / (1 - beta2 ** step)).sqrt() + group["eps"]
            p.add_(grad / denom * (-lr * (1.0 - mu) / (1.0 - mu_product)))
            p.add_(exp_avg / denom * (-lr * mu_next / (1.0 - mu_product * mu_next)))


class RAdam(Optimizer):
    """torch.optim.RAdam (its single-tensor update).  With t the step count,
    ``rho_inf = 2 / (1 - beta2) - 1`` and ``rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)``::

        g = -grad if maximize else grad
        weight decay as Adam (L2) or AdamW (decoupled_weight_decay)
        m = m + (1 - beta1) * (g - m);  v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1**t)
        p = p - m_hat * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t   (rho_t > 5)
        p = p - m_hat * lr                                              (otherwise)

    with the rectification ``r_t = sqrt((rho_t-4)(rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2)
    rho_t))``.  The rho_t > 5 choice is a `tg.where`, so a compiled step serves every t.

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, betas, weight_decay: read as data by a compiled step.
        eps, decoupled_weight_decay, maximize: baked into a compiled step.
        foreach, capturable: accepted and ignored; differentiable=True is refused.
    State per parameter: ``step`` (0-d float32), ``exp_avg``, ``exp_avg_sq``.
    Raises:
        ValueError: lr, eps or weight_decay < 0, a beta outside [0, 1).
    """

    _data_keys = ("lr", "betas", "weight_decay")

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False):
        check_hyper("RAdam", lr=lr, eps=eps, weight_decay=weight_decay)
        check_betas("RAdam", betas)
        check_impl("RAdam", foreach, None, capturable, differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        lr, (beta1, beta2) = hyper["lr"], hyper["betas"]
        for p, grad in self._grads(group):
            state = self.state[p]
            exp_avg, exp_avg_sq = _moments(state, p)
            step = state["step"].add_(1).to(float64)
            grad = _decay(p, grad, group, hyper)
            if p.dtype.is_complex:
                p, grad, exp_avg, exp_avg_sq = real_views(p, grad, exp_avg, exp_avg_sq)
            exp_avg.add_((grad - exp_avg) * (1 - beta1))
            exp_avg_sq.mul_(beta2).add_(grad * grad * (1 - beta2))
            bias2 = 1 - beta2 ** step
            m_hat_lr = exp_avg / (1 - beta1 ** step) * lr
            rho_inf = 2 / (1 - beta2) - 1
            rho_t = rho_inf - 2 * step * beta2 ** step / bias2
            # the rectified branch is NaN where rho_t < 4; `where` keeps the other one there
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = bias2 ** 0.5 / (exp_avg_sq.sqrt() + group["eps"])
            p.sub_(where(rho_t > 5.0, m_hat_lr * adaptive * rect, m_hat_lr))
