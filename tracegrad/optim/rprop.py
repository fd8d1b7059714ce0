"""Rprop, resilient backpropagation (torch.optim.Rprop; Riedmiller & Braun 1993)."""
from __future__ import annotations

from .. import _creation
from .._ops import where
from ..ir.types import float32
from .optimizer import Optimizer, check_hyper, check_impl, real_views


class Rprop(Optimizer):
    """torch.optim.Rprop (its single-tensor update).  Element-wise, with s = sign(g * prev)::

        g = -grad if maximize else grad
        step_size = clamp(step_size * (etaplus if s > 0, etaminus if s < 0, else 1),
                          step_size_min, step_size_max)
        g = 0 where s < 0
        p = p - sign(g) * step_size;  prev = g

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr: the initial step size of every element (read when the state is created).
        etas: (etaminus, etaplus) with 0 < etaminus < 1 < etaplus.
        step_sizes: (step_size_min, step_size_max).
        foreach, capturable: accepted and ignored; differentiable=True is refused.
    State per parameter: ``step`` (0-d float32), ``prev`` and ``step_size`` (the
    parameter's shape and dtype; for a complex parameter complex(lr, lr)).
    Raises:
        ValueError: lr < 0, or etas not 0 < etaminus < 1 < etaplus (torch's message).
    """

    _data_keys = ("lr",)

    def __init__(self, params, lr: float = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        check_hyper("Rprop", lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: invalid eta values: {etas[0]}, {etas[1]} (need "
                             "0 < etaminus < 1 < etaplus)")
        check_impl("Rprop", foreach, None, capturable, differentiable)
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        (etaminus, etaplus), (lo, hi) = group["etas"], group["step_sizes"]
        for p, grad in self._grads(group):
            state = self.state[p]
            if "step" not in state:
                state["step"] = _creation.zeros((), dtype=float32)
                state["prev"] = _creation.zeros_like(p)
                # (lr, lr) on a complex parameter: its parts are two independent reals
                state["step_size"] = _creation.zeros_like(p) + hyper["lr"] * (
                    (1 + 1j) if p.dtype.is_complex else 1)
            state["step"].add_(1)
            prev, step_size = state["prev"], state["step_size"]
            if p.dtype.is_complex:
                p, grad, prev, step_size = real_views(p, grad, prev, step_size)
            sign = (grad * prev).sign()
            one = _creation.ones_like(sign)              # the factors in the parameter's dtype
            factor = where(sign > 0, one * etaplus, where(sign < 0, one * etaminus, one))
            step_size.copy_((step_size * factor).clamp(lo, hi))
            grad = where(sign < 0, 0.0, grad)
            p.sub_(grad.sign() * step_size)
            prev.copy_(grad)
