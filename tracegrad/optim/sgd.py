"""Stochastic gradient descent with momentum and weight decay (torch.optim.SGD)."""
from __future__ import annotations

from .. import _state
from .optimizer import Optimizer, check_hyper, check_impl


class SGD(Optimizer):
    """torch.optim.SGD.  For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                         (weight_decay != 0)
        buf = g (first step), else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf      (momentum != 0)
        p = p - lr * g

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, momentum, weight_decay: read as data by a compiled step (see optimizer.py),
            so schedules that change them do not retrace.
        dampening, nesterov, maximize: baked into a compiled step (a change retraces).
        foreach: accepted and ignored; fused=True and differentiable=True are refused with
            NotImplementedError (see `check_impl`).
    State: ``momentum_buffer`` (shape and dtype of the parameter) when momentum != 0.
    Raises:
        ValueError: a negative lr, momentum, dampening or weight_decay; nesterov without
            momentum or with dampening.
        TypeError / NotImplementedError: a hyper-parameter that is not a number / a Tensor.
    """

    _data_keys = ("lr", "momentum", "weight_decay")

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0.0, dampening: float = 0.0,
                 weight_decay: float = 0.0, nesterov: bool = False, *, maximize: bool = False,
                 foreach=None, differentiable: bool = False, fused=None):
        check_impl("SGD", foreach, fused, False, differentiable)
        check_hyper("SGD", lr=lr, momentum=momentum, dampening=dampening,
                    weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        # eagerly the group's Python floats (as torch): a 0-d float64 operand costs a
        # conversion op per use; traced, the 0-d tensors read as data (see optimizer.py)
        src = group if _state.local.tracer is None else hyper
        for p, g in self._grads(group):
            if group["weight_decay"] != 0:
                g = g + p * src["weight_decay"]
            if group["momentum"] != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.detach().clone()
                else:
                    buf.mul_(src["momentum"]).add_(g, alpha=1 - group["dampening"])
                g = g + buf * src["momentum"] if group["nesterov"] else buf
            p.sub_(g * src["lr"])
