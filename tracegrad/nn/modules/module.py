"""torch.nn.Module: parameters, buffers and submodules registered by attribute assignment.

`tg.compile` finds parameters and buffers by identity when a step reaches them (and
writes back the buffers a step updates in place, like batch-norm running statistics),
so modules need no special support from the compiler.
"""
from __future__ import annotations

import functools
from collections import OrderedDict
from typing import Callable, Iterator, NamedTuple

import numpy as np

from tracegrad.ir import types as T

from ... import _state
from ...compiler.compile import register_module_type
from ..._device import placed
from ...backends.device_arrays import host, is_device_array, put
from ..._tensor_methods import parse_to_args
from ...tensor import Parameter, Tensor
from .hooks import ModuleHooks, call_with_hooks, hooks_of


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list


def _local_metadata(m) -> dict:
    return {"version": getattr(type(m), "_version", 1)}


class Module(ModuleHooks):
    """Base class of layers and models (torch.nn.Module).

    Assigning a `Parameter`, a `Module`, or a tensor to a name registered with
    `register_buffer` registers it; `state_dict()` holds the parameters and the
    persistent buffers, module by module in registration order, as torch.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__.startswith("tracegrad.nn") and (
                "device" in init.__code__.co_varnames[:init.__code__.co_argcount
                                                      + init.__code__.co_kwonlyargcount]):
            cls.__init__ = _placing(init)

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments")
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    # ---- registration ---------------------------------------------------------------------
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        if "_parameters" not in d:
            if isinstance(value, (Tensor, Module)):
                raise AttributeError(f"cannot assign {type(value).__name__} '{name}' before "
                                     "Module.__init__() is called")
            object.__setattr__(self, name, value)
            return
        params, buffers, modules = d["_parameters"], d["_buffers"], d["_modules"]
        if isinstance(value, Parameter):
            buffers.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            params.pop(name, None)
            buffers.pop(name, None)
            modules[name] = value
        elif name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(tg.nn.Parameter or None expected)")
            params[name] = None
        elif name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module "
                                f"'{name}' (tg.nn.Module or None expected)")
            modules[name] = None
        elif name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                "(tg.Tensor or None expected)")
            buffers[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for table in ("_parameters", "_buffers", "_modules"):
            self.__dict__[table].pop(name, None)
        self._non_persistent_buffers.discard(name)
        object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' as parameter '{name}' "
                            "(tg.nn.Parameter or None expected)")
        self._check_name(name, "parameter")
        self._parameters[name] = param
        object.__setattr__(self, name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that is state but not a parameter (running statistics); in state_dict
        unless ``persistent=False``."""
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' as buffer '{name}' "
                            "(tg.Tensor or None expected)")
        self._check_name(name, "buffer")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        self._modules[name] = module
        object.__setattr__(self, name, module)

    register_module = add_module

    def _check_name(self, name: str, what: str) -> None:
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"{what} name must be a non-empty string without '.', got {name!r}")
        if name in self.__dict__ and not any(name in self.__dict__[t] for t in
                                             ("_parameters", "_buffers", "_modules")):
            raise KeyError(f"attribute '{name}' already exists")

    # ---- calling --------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        tracer = _state.local.tracer
        if tracer is not None:   # tg.compile guards on the train/eval mode of modules it ran
            tracer.module_used(self)
        if "_has_hooks" in self.__dict__:     # registered hooks (hooks.py)
            return call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # ---- traversal ------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is not None:
                yield from m.named_modules(memo, prefix + ("." if prefix else "") + name,
                                           remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator["Module"]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, table: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        mods = self.named_modules(prefix=prefix) if recurse else [(prefix, self)]
        for mprefix, m in mods:
            for name, t in m.__dict__[table].items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield mprefix + ("." if mprefix else "") + name, t

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients ----------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        """Training mode (dropout active, batch norm uses and updates batch statistics)."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    # ---- dtype ----------------------------------------------------------------------------
    def to(self, *args, **kwargs) -> "Module":
        """Cast floating-point parameters and buffers to a dtype and/or move every parameter,
        buffer and ``.grad`` to a device, in place (torch.nn.Module.to: the Parameter
        objects stay, so an optimizer made before keeps them); takes `Tensor.to`'s forms
        (`parse_to_args`).  On "xla" / "cuda" their storage becomes jax arrays
        (backends/device_arrays.py), which compiled steps update on the device.

        Raises:
            TypeError: a dtype that is not floating point, or an unknown argument.
            NotImplementedError: a device tracegrad does not have.
        """
        dtype, target = parse_to_args("Module.to", args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(f"Module.to only accepts floating point dtypes, got {dtype.name}")
        for t in list(self.parameters()) + list(self.buffers()):
            if dtype is not None and t.dtype.is_floating_point and t.dtype is not dtype:
                t._data = np.asarray(host(t._data)).astype(dtype.numpy)
                t._vc[0] += 1
            if target is not None:
                for u in (t, t._grad):
                    if u is not None:
                        _move_storage(u, target)
        return self

    def cpu(self) -> "Module":
        """Every parameter and buffer on the host, in place (torch.nn.Module.cpu)."""
        return self.to("cpu")

    def cuda(self, device=None) -> "Module":
        """Every parameter and buffer on jax's GPU, in place (torch.nn.Module.cuda); raises
        NotImplementedError where jax has no GPU, as ``to("cuda")`` does."""
        return self.to("cuda" if device is None else
                       device if isinstance(device, str) else f"cuda:{device}")

    def float(self) -> "Module":
        return self.to(T.float32)

    def double(self) -> "Module":
        return self.to(T.float64)

    def half(self) -> "Module":
        return self.to(T.float16)

    def bfloat16(self) -> "Module":
        return self.to(T.bfloat16)

    # ---- state ----------------------------------------------------------------------------
    def _state_items(self, prefix: str = ""):
        """(key, tensor) for parameters and persistent buffers, module by module (torch order)."""
        for mprefix, m in self.named_modules(prefix=prefix.rstrip(".")):
            head = mprefix + "." if mprefix else ""
            for name, p in m._parameters.items():
                if p is not None:
                    yield head + name, p
            for name, b in m._buffers.items():
                if b is not None and name not in m._non_persistent_buffers:
                    yield head + name, b

    def state_dict(self, *args, destination=None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Parameters and persistent buffers by dotted name; values detached unless keep_vars."""
        if args:
            raise TypeError("state_dict() takes keyword arguments only (destination, prefix, "
                            "keep_vars)")
        out = OrderedDict() if destination is None else destination
        modules = list(self.named_modules(prefix=prefix.rstrip(".")))
        if not any("_has_hooks" in m.__dict__ for _, m in modules):
            for key, t in self._state_items(prefix):
                out[key] = t if keep_vars else Tensor(t._data)
            return out
        done = set()

        def collect(m, head):    # torch's recursion: pre hook, own entries, children, post
            done.add(id(m))
            for (hook,) in hooks_of(m, "_state_dict_pre_hooks"):
                hook(m, head, keep_vars)
            for key, t in m._state_items():
                if "." not in key:
                    out[head + key] = t if keep_vars else Tensor(t._data)
            for name, child in m._modules.items():
                if child is not None and id(child) not in done:
                    collect(child, head + name + ".")
            for (hook,) in hooks_of(m, "_state_dict_hooks"):
                if hook(m, out, head, _local_metadata(m)) is not None:
                    raise RuntimeError("state_dict post-hook must return None")
        collect(self, prefix)
        return out

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values into the existing parameters and buffers (identity and dtype kept).

        Returns:
            ``(missing_keys, unexpected_keys)`` as a named tuple.
        Raises:
            RuntimeError: with ``strict``, missing or unexpected keys (torch's message);
                always, a shape mismatch.
        """
        modules = list(self.named_modules())
        hooked = any("_has_hooks" in m.__dict__ for _, m in modules)
        errors, missing, unexpected = [], [], []
        if hooked:
            state_dict = OrderedDict(state_dict)    # pre hooks may edit it, as torch's copy
            for name, m in modules:
                head = name + "." if name else ""
                hooks = hooks_of(m, "_load_state_dict_pre_hooks")
                if not hooks:
                    continue
                own_keys = OrderedDict((k, v) for k, v in state_dict.items()
                                       if k.startswith(head))   # torch: the module's keys
                for (hook,) in hooks:
                    hook(m, own_keys, head, _local_metadata(m), strict, missing, unexpected,
                         errors)
                for k in [k for k in state_dict if k.startswith(head) and k not in own_keys]:
                    del state_dict[k]
                state_dict.update(own_keys)
        own = dict(self._state_items())
        missing += [k for k in own if k not in state_dict and k not in missing]
        unexpected += [k for k in state_dict if k not in own and k not in unexpected]
        result = _IncompatibleKeys(missing, unexpected)
        if hooked:
            for _, m in modules:
                for (hook,) in hooks_of(m, "_load_state_dict_post_hooks"):
                    if hook(m, result) is not None:
                        raise RuntimeError("load_state_dict post hook must return None")
        if strict:
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.append("Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        updates = []
        for key, t in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            arr = np.asarray(value._data if isinstance(value, Tensor) else value)
            if arr.shape != t.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape "
                              f"{list(arr.shape)} from checkpoint, the shape in current model "
                              f"is {list(t.shape)}.")
            updates.append((t, arr))
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        for t, arr in updates:   # copied into the tensor's storage, on its device
            new = np.array(arr, dtype=t.dtype.numpy)
            t._data = put(new, t._data.device) if is_device_array(t._data) else new
            t._vc[0] += 1
        return result

    # ---- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def _child_lines(self) -> list[str]:
        return [f"({name}): " + repr(m).replace("\n", "\n  ")
                for name, m in self._modules.items()]

    def __repr__(self) -> str:
        children = self._child_lines()
        extra = self.extra_repr()
        if not children:
            return f"{self._get_name()}({extra})"
        lines = ([extra] if extra else []) + children
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


register_module_type(Module)   # tg.compile(module) returns a CompiledModule


def _move_storage(t: Tensor, target) -> None:
    """`t`'s storage on `target` (`CPU` or a `jax.Device`), in place (torch's
    ``param.data = param.data.to(device)``: same object, same version)."""
    t._data = placed(t._data, target)


def _placing(init):
    """A layer's ``__init__`` taking torch's ``device=`` factory argument: its parameters and
    buffers are made on the host, then moved there (``Linear(4, 3, device="xla")``)."""
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if kwargs.get("device") is not None:   # "cpu" moves nothing
            self.to(kwargs["device"])
    return wrapper
