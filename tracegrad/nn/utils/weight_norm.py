"""The hook form of weight normalization (torch.nn.utils.weight_norm / remove_weight_norm):
``module.<name>`` is replaced by the parameters ``<name>_g`` (magnitude) and ``<name>_v``
(direction), and a forward pre-hook recomputes ``<name> = g * v / ||v||`` before each call.
torch deprecates it for nn.utils.parametrizations.weight_norm; both are built.  The
``spectral_norm`` hook form is refused in favour of the parametrization.
"""
from __future__ import annotations

from ...autograd import no_grad
from ...tensor import Parameter
from ..modules.module import Module
from .parametrizations import norm_except_dim

__all__ = ["remove_spectral_norm", "remove_weight_norm", "spectral_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes the weight (torch's WeightNorm)."""

    def __init__(self, name: str, dim: int):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module: Module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, self.dim))

    @staticmethod
    def apply(module: Module, name: str, dim: int) -> "WeightNorm":
        for hook in module.__dict__.get("_forward_pre_hooks", {}).values():
            fn = hook[0] if isinstance(hook, tuple) else hook
            if isinstance(fn, WeightNorm) and fn.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name, None)
        if not isinstance(weight, Parameter):
            raise ValueError(f"weight_norm: module {type(module).__name__} has no parameter "
                             f"'{name}'")
        del module._parameters[name]
        object.__delattr__(module, name)
        with no_grad():
            g = norm_except_dim(weight, fn.dim).detach().clone()
        module.register_parameter(name + "_g", Parameter(g))
        module.register_parameter(name + "_v", Parameter(weight.detach().clone()))
        setattr(module, name, fn.compute_weight(module))
        fn.handle = module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module)
        object.__delattr__(module, self.name)
        for suffix in ("_g", "_v"):
            del module._parameters[self.name + suffix]
            object.__delattr__(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach().clone()))
        self.handle.remove()

    def __call__(self, module: Module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Split ``module.<name>`` into ``<name>_g`` = its norm over every dim but `dim` (all
    dims for None) and ``<name>_v`` = its value, recomputed into ``<name>`` before every
    forward (torch.nn.utils.weight_norm).

    Raises:
        RuntimeError: `name` is weight-normed already (torch's message).
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Fold the weight norm of `name` back into one parameter (its current value).

    Raises:
        ValueError: no weight_norm on `name` (torch's message).
    """
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for hook in list(hooks.values()):
        fn = hook[0] if isinstance(hook, tuple) else hook
        if isinstance(fn, WeightNorm) and fn.name == name:
            fn.remove(module)
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Not built: refused with what to do instead."""
    raise NotImplementedError(
        "nn.utils.spectral_norm (the hook form torch deprecates) is not built in tracegrad; "
        "use nn.utils.parametrizations.spectral_norm(module) (the same normalization, the "
        "weight read through module.parametrizations.weight.original)")


def remove_spectral_norm(module, name="weight"):
    """Not built: see `spectral_norm`."""
    raise NotImplementedError(
        "nn.utils.remove_spectral_norm is not built in tracegrad; with "
        "nn.utils.parametrizations.spectral_norm use "
        "nn.utils.parametrize.remove_parametrizations(module, 'weight')")
