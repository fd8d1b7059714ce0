"""Optimizer base class (torch.optim.Optimizer): param groups, state, zero_grad."""
from __future__ import annotations

from collections import defaultdict

from ..tensor import Tensor


class Optimizer:
    def __init__(self, params, defaults: dict):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        self.defaults = defaults
        self.param_groups = []
        for group in params:
            group = dict(group)
            group["params"] = list(group["params"])
            for p in group["params"]:
                if not isinstance(p, Tensor) or not p.is_leaf:
                    raise ValueError("optimizer can only optimize leaf Tensors")
            for k, v in defaults.items():
                group.setdefault(k, v)
            self.param_groups.append(group)
        self.state: dict = defaultdict(dict)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset gradients; by default to None, as torch >= 2.0."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def step(self):
        raise NotImplementedError
