"""Parametrizations of module tensors (torch.nn.utils.parametrize): after
``register_parametrization(module, "weight", P())`` reading ``module.weight`` computes
``P()(module.parametrizations.weight.original)``; the original is the parameter the
optimizer trains, and gradients flow through P to it.

As torch, the module's class is swapped for a generated subclass holding a property per
parametrized name (``type_before_parametrizations`` gives the old class), the originals live
in ``module.parametrizations[name]`` (a `ParametrizationList`, so state_dict keys are
``parametrizations.weight.original`` or ``.original0``/``.original1`` when a
``right_inverse`` returns a tuple), and assigning ``module.weight = value`` stores
``right_inverse(value)`` into the originals.  `cached()` computes each parametrized tensor
once inside its block.
"""
from __future__ import annotations

import contextlib

from ...autograd import no_grad
from ...tensor import Parameter, Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params",
           "type_before_parametrizations"]

_CACHE: dict = {}
_caching = [0]


@contextlib.contextmanager
def cached():
    """Inside this block each parametrized tensor is computed once, on first read, and the
    value reused (torch's parametrize.cached: one computation of a weight that a module
    reads several times, e.g. in an RNN's time loop)."""
    _caching[0] += 1
    try:
        yield
    finally:
        _caching[0] -= 1
        if not _caching[0]:
            _CACHE.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, and its original(s): ``original``, or
    ``original0``, ``original1`` ... when the first ``right_inverse`` returns a tuple."""

    def __init__(self, modules, original: Tensor, unsafe: bool = False):
        if not modules:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        with no_grad():
            value = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
        self.is_tensor = isinstance(value, Tensor)
        self.ntensors = 1 if self.is_tensor else len(value)
        if self.is_tensor:
            if not unsafe and (value.dtype is not original.dtype
                               or tuple(value.shape) != tuple(original.shape)):
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype or shape. original: {original.dtype} "
                                 f"{tuple(original.shape)}, right_inverse: {value.dtype} "
                                 f"{tuple(value.shape)}")
            self.register_parameter("original", _as_parameter(value, original))
        else:
            for i, v in enumerate(value):
                if not isinstance(v, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(v).__name__}.")
                self.register_parameter(f"original{i}", _as_parameter(v, original))
        if not unsafe:
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(z).__name__}.")
            if z.dtype is not original.dtype or tuple(z.shape) != tuple(original.shape):
                raise ValueError(f"Registering a parametrization may not change the shape or "
                                 f"dtype of the tensor, unless `unsafe` flag is enabled.\n"
                                 f"unparametrized dtype: {original.dtype}\n"
                                 f"unparametrized shape: {tuple(original.shape)}\n"
                                 f"parametrized dtype: {z.dtype}\n"
                                 f"parametrized shape: {tuple(z.shape)}")

    def right_inverse(self, value: Tensor) -> None:
        """Store `value` (the new parametrized tensor) into the originals, through each
        parametrization's ``right_inverse`` in reverse order."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
                elif not self.unsafe:
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse.")
            values = [value] if self.is_tensor else list(value)
            for i, v in enumerate(values):
                orig = self.original if self.is_tensor else getattr(self, f"original{i}")
                if tuple(v.shape) != tuple(orig.shape):
                    raise ValueError(f"right_inverse gave shape {tuple(v.shape)} for an "
                                     f"original of shape {tuple(orig.shape)}; tracegrad "
                                     f"copies into the original, so the shape must stay")
                orig.copy_(v)

    def forward(self):
        mods = list(self)
        if self.is_tensor:
            x = mods[0](self.original)
        else:
            x = mods[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in mods[1:]:
            x = module(x)
        return x


def _as_parameter(value: Tensor, like: Tensor) -> Tensor:
    """An original keeps the kind of the tensor it replaces: a Parameter with its
    requires_grad, or a buffer's plain tensor."""
    if isinstance(like, Parameter):
        return Parameter(value.detach().clone(), requires_grad=like.requires_grad)
    return value.detach().clone()


def _get(module: Module, name: str):
    plist = module.parametrizations[name]
    if _caching[0]:
        key = (id(module), name)
        if key not in _CACHE:
            _CACHE[key] = plist()
        return _CACHE[key]
    return plist()


def _inject_property(module: Module, name: str) -> None:
    def getter(self):
        return _get(self, name)

    def setter(self, value):
        if _caching[0]:
            raise RuntimeError("Cannot set the value of a parametrized tensor inside "
                               "parametrize.cached()")
        self.parametrizations[name].right_inverse(value)

    setattr(type(module), name, property(getter, setter))


def _inject_new_class(module: Module) -> None:
    """Swap `module`'s class for a subclass to hold the properties (torch does the same)."""
    cls = type(module)

    def __setattr__(self, key, value):
        if key in type(self).__dict__ and isinstance(type(self).__dict__[key], property):
            type(self).__dict__[key].__set__(self, value)   # a Parameter too: right_inverse
            return
        cls.__setattr__(self, key, value)

    new = type(f"Parametrized{cls.__name__}", (cls,),
               {"__setattr__": __setattr__, "_tg_original_class": cls})
    module.__class__ = new


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrization (on `tensor_name`, when given)."""
    plists = module.__dict__.get("_modules", {}).get("parametrizations")
    if not isinstance(plists, ModuleDict):
        return False
    return len(plists) > 0 if tensor_name is None else tensor_name in plists


def type_before_parametrizations(module: Module) -> type:
    """The class `module` had before its first parametrization."""
    return type(module).__dict__.get("_tg_original_class", type(module)) \
        if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Parametrize ``module.<tensor_name>`` (a parameter or buffer) by the module
    `parametrization` (torch.nn.utils.parametrize.register_parametrization); a second call
    on the same name appends to its list.  With `unsafe` the shape and dtype checks are
    skipped.

    Raises:
        ValueError: `module` has no parameter or buffer `tensor_name`, or the
        parametrization changes its shape or dtype without `unsafe` (torch's messages).
    """
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be an "
                        f"nn.Module, got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor) or x.dtype is not y.dtype or \
                    tuple(x.shape) != tuple(y.shape):
                raise ValueError(f"Registering a parametrization may not change the shape "
                                 f"or dtype of the tensor, unless `unsafe` flag is enabled. "
                                 f"unparametrized {y.dtype} {tuple(y.shape)}")
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.add_module("parametrizations", ModuleDict())
        module.parametrizations[tensor_name] = plist
        _inject_property(module, tensor_name)
        return module
    raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                     f"parametrized element with name '{tensor_name}'")


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo `register_parametrization` on `tensor_name`: with `leave_parametrized` the
    tensor keeps its current parametrized value as a plain parameter, otherwise its
    original comes back (which needs a single original).

    Raises:
        ValueError: nothing registered on `tensor_name`, or ``leave_parametrized=False``
        with several originals (torch's messages).
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            with no_grad():
                if tuple(value.shape) == tuple(original.shape):
                    original.copy_(value)
                else:
                    original = Parameter(value.detach().clone(),
                                         requires_grad=original.requires_grad)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        requires = any(getattr(plist, f"original{i}").requires_grad
                       for i in range(plist.ntensors))
        original = Parameter(value.detach().clone(), requires_grad=requires) \
            if isinstance(plist.original0, Parameter) else value.detach().clone()
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__dict__["_tg_original_class"]
    return module


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Not built: refused with what to do instead."""
    raise NotImplementedError("transfer_parametrizations_and_params is not built in "
                              "tracegrad; call register_parametrization on `to_module` with "
                              "the same parametrization modules and load the originals with "
                              "load_state_dict")

