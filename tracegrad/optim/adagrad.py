"""Adagrad (torch.optim.Adagrad; Duchi, Hazan & Singer 2011)."""
from __future__ import annotations

from .. import _creation
from ..ir.types import float32, float64
from .optimizer import Optimizer, check_hyper, check_impl, real_views


class Adagrad(Optimizer):
    """torch.optim.Adagrad.  For each parameter with a gradient, with t the step count::

        g = -grad if maximize else grad
        g = g + weight_decay * p                 (weight_decay != 0)
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, weight_decay: read as data by a compiled step (no retrace when they change).
        lr_decay, eps, maximize: baked into a compiled step (a change retraces).
        foreach: accepted and ignored; fused=True and differentiable=True are refused.
        initial_accumulator_value: the starting value of ``sum``.
    State per parameter, created at construction as in torch: ``step`` (0-d float32) and
    ``sum`` (the parameter's shape and dtype).  A complex parameter is updated as its real
    view (``tg.view_as_real``), as torch does: ``sum`` accumulates the squares of the real
    and imaginary parts separately, starting from ``complex(v, v)`` for
    ``initial_accumulator_value=v``.
    Raises:
        ValueError: a negative lr, lr_decay, weight_decay, initial_accumulator_value or eps.
        TypeError / NotImplementedError: a hyper-parameter that is not a number / a Tensor.
    """

    _data_keys = ("lr", "weight_decay")

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None):
        check_impl("Adagrad", foreach, fused, False, differentiable)
        check_hyper("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                    initial_accumulator_value=initial_accumulator_value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      maximize=maximize))
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group) -> dict:
        state = self.state[p]
        if "step" not in state:
            state["step"] = _creation.zeros((), dtype=float32)
            init = group["initial_accumulator_value"]
            state["sum"] = _creation.full(p.shape, complex(init, init) if p.dtype.is_complex
                                          else init, dtype=p.dtype)
        return state

    def _update_group(self, group: dict, hyper: dict) -> None:
        for p, grad in self._grads(group):
            state = self._init_state(p, group)
            step = state["step"].add_(1)
            if group["weight_decay"] != 0:
                grad = grad + p * hyper["weight_decay"]
            clr = hyper["lr"]
            if group["lr_decay"] != 0:
                # in float64, as torch's Python-float arithmetic
                clr = clr / (1 + (step.to(float64) - 1) * group["lr_decay"])
            total = state["sum"]
            if p.dtype.is_complex:
                p, grad, total = real_views(p, grad, total)
            total.add_(grad * grad)
            std = total.sqrt() + group["eps"]
            p.sub_(clr * grad / std)
