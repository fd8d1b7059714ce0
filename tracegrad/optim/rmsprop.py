"""RMSprop (torch.optim.RMSprop; Hinton's lecture 6e, centered variant from Graves 2013)."""
from __future__ import annotations

from .. import _creation
from ..ir.types import float32
from .optimizer import Optimizer, check_hyper, check_impl, real_views


class RMSprop(Optimizer):
    """torch.optim.RMSprop.  For each parameter with a gradient::

        g = -grad if maximize else grad
        g = g + weight_decay * p                        (weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g
        a = alpha-average of g, avg = sqrt(v - a * a)   (centered)
        avg = sqrt(v)                                    (otherwise)
        avg = avg + eps
        buf = momentum * buf + g / avg; p = p - lr * buf (momentum > 0)
        p = p - lr * g / avg                             (otherwise)

    Args:
        params: tensors or param groups (see `Optimizer`).
        lr, momentum, weight_decay: read as data by a compiled step (no retrace when a
            schedule changes them).
        alpha, eps, centered, maximize: baked into a compiled step (a change retraces).
        foreach, capturable: accepted and ignored; differentiable=True is refused.
    State per parameter: ``step`` (0-d float32), ``square_avg``, ``momentum_buffer``
    (momentum > 0), ``grad_avg`` (centered).  A complex parameter is updated as its real
    view (``tg.view_as_real``), as torch does: the averages are per real and imaginary part.
    Raises:
        ValueError: a negative lr, alpha, eps, momentum or weight_decay.
        TypeError / NotImplementedError: a hyper-parameter that is not a number / a Tensor.
    """

    _data_keys = ("lr", "momentum", "weight_decay")

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0.0, momentum: float = 0.0, centered: bool = False,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False):
        check_impl("RMSprop", foreach, None, capturable, differentiable)
        check_hyper("RMSprop", lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                    momentum=momentum)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def _update_group(self, group: dict, hyper: dict) -> None:
        alpha = group["alpha"]
        for p, grad in self._grads(group):
            state = self.state[p]
            if "step" not in state:
                state["step"] = _creation.zeros((), dtype=float32)
                state["square_avg"] = _creation.zeros_like(p)
            if group["momentum"] > 0 and "momentum_buffer" not in state:
                state["momentum_buffer"] = _creation.zeros_like(p)
            if group["centered"] and "grad_avg" not in state:
                state["grad_avg"] = _creation.zeros_like(p)
            state["step"].add_(1)
            if group["weight_decay"] != 0:
                grad = grad + p * hyper["weight_decay"]
            square_avg = state["square_avg"]
            grad_avg = state["grad_avg"] if group["centered"] else None
            buf = state["momentum_buffer"] if group["momentum"] > 0 else None
            if p.dtype.is_complex:
                p, grad, square_avg, grad_avg, buf = real_views(p, grad, square_avg, grad_avg,
                                                                buf)
            square_avg.mul_(alpha).add_((1 - alpha) * grad * grad)
            if group["centered"]:
                grad_avg.add_((grad - grad_avg) * (1 - alpha))     # torch's lerp_
                avg = (square_avg - grad_avg * grad_avg).sqrt()
            else:
                avg = square_avg.sqrt()
            avg = avg + group["eps"]
            if group["momentum"] > 0:
                buf.mul_(hyper["momentum"]).add_(grad / avg)
                p.sub_(buf * hyper["lr"])
            else:
                p.sub_(hyper["lr"] * grad / avg)
