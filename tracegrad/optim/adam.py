"""Adam and AdamW (torch.optim.Adam / torch.optim.AdamW; Kingma & Ba 2015, Loshchilov &
Hutter 2019)."""
from __future__ import annotations

import math

from .. import _creation, _state
from ..ir.types import float32
from .optimizer import Optimizer, check_hyper, check_impl, real_views


def _check(name, lr, betas, eps, weight_decay) -> None:
    check_hyper(name, lr=lr, eps=eps, weight_decay=weight_decay)
    check_betas(name, betas)


def check_betas(name: str, betas) -> None:
    """betas a pair of numbers in [0, 1) (torch's "Invalid beta parameter" ValueError)."""
    if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
        raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
    for i, b in enumerate(betas):
        check_hyper(name, **{f"betas[{i}]": b})
        if not b < 1.0:
            raise ValueError(f"{name}: invalid beta parameter at index {i}: {b} "
                             "(must be in [0, 1))")


class Adam(Optimizer):
    """torch.optim.Adam (its single-tensor update).  For each parameter with a gradient,
    with t the step count (1 at the first step)::

        g = -grad if maximize else grad
        g = g + weight_decay * p                   (weight_decay != 0, not decoupled)
        p = p * (1 - lr * weight_decay)            (weight_decay != 0, decoupled: AdamW)
        m = m + (1 - beta1) * (g - m)              (torch's lerp)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                      (amsgrad; then used in place of v)
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    Note eps is added after the bias correction of sqrt(v), as torch does.

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, betas, weight_decay: read as data by a compiled step, so schedules (OneCycleLR
            cycling beta1) do not retrace.
        eps, amsgrad, maximize, decoupled_weight_decay: baked into a compiled step (a change
            retraces).
        foreach, capturable: accepted and ignored; fused=True and differentiable=True are
            refused with NotImplementedError (see `check_impl`).
    State per parameter: ``step`` (0-d float32 tensor, as torch), ``exp_avg``,
    ``exp_avg_sq`` and with amsgrad ``max_exp_avg_sq`` (the parameter's shape and dtype).
    A complex parameter is updated as its real view (``tg.view_as_real``), as torch does:
    the moments are per real and imaginary component.
    Raises:
        ValueError: lr, eps or weight_decay < 0, a beta outside [0, 1).
        TypeError / NotImplementedError: a hyper-parameter that is not a number / a Tensor.
    """

    _data_keys = ("lr", "betas", "weight_decay")

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, amsgrad: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused=None, decoupled_weight_decay: bool = False):
        _check(type(self).__name__, lr, betas, eps, weight_decay)
        check_impl(type(self).__name__, foreach, fused, capturable, differentiable)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update_group(self, group: dict, hyper: dict) -> None:
        # Eagerly the hyper-parameters and the bias corrections are Python floats, as in
        # torch's single-tensor Adam: each scalar expression is Python arithmetic, not a 0-d
        # tensor op and a conversion per parameter (minGPT's 41 parameters: 33 ops each,
        # 20 ms a step; docs/performance.md, "Ported programs, more").  Traced, they are the
        # group's 0-d float64 tensors, read as data, so a schedule does not retrace.  Both
        # give the same values: the scalars are float64 either way, cast to the parameter's
        # dtype where they meet it.
        eager = _state.local.tracer is None
        src = group if eager else hyper
        lr, (beta1, beta2), wd = src["lr"], src["betas"], src["weight_decay"]
        for p, grad in self._grads(group):
            state = self.state[p]
            if "step" not in state:
                state["step"] = _creation.zeros((), dtype=float32)
                state["exp_avg"] = _creation.zeros_like(p)
                state["exp_avg_sq"] = _creation.zeros_like(p)
            if group["amsgrad"] and "max_exp_avg_sq" not in state:
                state["max_exp_avg_sq"] = _creation.zeros_like(p)
            step = state["step"].add_(1)
            if group["weight_decay"] != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * wd)
                else:
                    grad = grad + p * wd
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            max_sq = state["max_exp_avg_sq"] if group["amsgrad"] else None
            if p.dtype.is_complex:
                p, grad, exp_avg, exp_avg_sq, max_sq = real_views(p, grad, exp_avg, exp_avg_sq,
                                                                  max_sq)
            exp_avg.add_((grad - exp_avg) * (1 - beta1))     # torch's lerp_
            exp_avg_sq.mul_(beta2).add_((1 - beta2) * grad * grad)
            # the bias corrections in float64, as torch's Python-float arithmetic
            if eager:
                t = float(step.item())
                step_size = lr / (1 - beta1 ** t)
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** t)
            else:
                step_size = lr / (1 - beta1 ** step)
                bias_correction2_sqrt = (1 - beta2 ** step).sqrt()
            if max_sq is not None:
                max_sq.copy_(max_sq.maximum(exp_avg_sq))
            second = exp_avg_sq if max_sq is None else max_sq
            denom = second.sqrt() / bias_correction2_sqrt + group["eps"]
            p.sub_(step_size * exp_avg / denom)


class AdamW(Adam):
    """torch.optim.AdamW: `Adam` with decoupled weight decay (``decoupled_weight_decay=True``):
    ``p = p * (1 - lr * weight_decay)`` before the moment updates instead of adding
    ``weight_decay * p`` to the gradient.  Same state as `Adam`; weight_decay defaults to
    1e-2 as in torch."""

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach=None, capturable: bool = False, differentiable: bool = False,
                 fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize,
                         foreach=foreach, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)
