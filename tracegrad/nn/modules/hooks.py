"""Module hooks (torch.nn.Module's register_*_hook): forward, forward-pre, full backward,
backward-pre and state-dict hooks.

`ModuleHooks` is a base of `Module`; `Module.__call__` takes the plain path unless the
module holds a hook (one dict lookup).  Full backward hooks follow torch's design: the
module's tensor inputs and outputs pass through identity `Function`s, whose backward
calls see the gradients with respect to the outputs (backward-pre hooks, which may
replace them) and then the inputs (backward hooks, which may replace those), so they
run inside the ordinary backward pass (and are traced by `tg.compile` like any custom
Function).  Each ``register_*`` returns a `RemovableHandle`.
"""
from __future__ import annotations

import warnings
from collections import OrderedDict

from ...autograd.function import Function
from ...autograd.grad_mode import is_grad_enabled
from ...dispatch.tape import RemovableHandle
from ...tensor import Tensor

_TABLES = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
           "_state_dict_pre_hooks", "_state_dict_hooks", "_load_state_dict_pre_hooks",
           "_load_state_dict_post_hooks")


def _add(module, table: str, entry, prepend: bool = False) -> RemovableHandle:
    if not callable(entry[0]):
        raise TypeError(f"{table[1:-1]}: expected a callable hook, got "
                        f"{type(entry[0]).__name__}")
    hooks = module.__dict__.get(table)
    if hooks is None:
        hooks = OrderedDict()
        object.__setattr__(module, table, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = entry
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    object.__setattr__(module, "_has_hooks", True)
    return handle


def hooks_of(module, table: str) -> list:
    hooks = module.__dict__.get(table)
    return list(hooks.values()) if hooks else []


def _as_tuple(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


class _BackwardHookState:
    """The gradients one call's backward hooks share (grad_output is seen first)."""

    def __init__(self, module, n_inputs_with_grad: int):
        self.module, self.grad_output = module, None
        self.inputs_with_grad = n_inputs_with_grad


def _checked(new, old: tuple, what: str) -> tuple:
    new = _as_tuple(new)
    if len(new) != len(old):
        raise RuntimeError(f"backward hook returned an invalid number of {what} - got "
                           f"{len(new)}, but expected {len(old)}")
    return new


class _IdentityHook(Function):
    """The identity on a module's tensors, carrying the hook state to its backward."""

    # what tg.compile's graph-break warning calls it (compiler/fallbacks.py)
    _described_as = "a module backward hook (register_full_backward_hook / _pre_hook)"

    @staticmethod
    def forward(ctx, state, *tensors):
        ctx.state = state
        return tuple(t.clone() for t in tensors)



class _OutputsHook(_IdentityHook):
    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        for (hook,) in hooks_of(state.module, "_backward_pre_hooks"):
            result = hook(state.module, grads)
            if result is not None:
                grads = _checked(result, grads, "grad_output")
        state.grad_output = grads
        if not state.inputs_with_grad:   # torch: the hooks run here, with grad_input None
            hooks = hooks_of(state.module, "_backward_hooks")
            if hooks:
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. "
                              "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                              "Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", stacklevel=2)
            for (hook,) in hooks:
                hook(state.module, (None,), grads)
        return (None,) + tuple(grads)


class _InputsHook(_IdentityHook):
    @staticmethod
    def backward(ctx, *grads):
        state = ctx.state
        for (hook,) in hooks_of(state.module, "_backward_hooks"):
            result = hook(state.module, grads, state.grad_output)
            if result is not None:
                grads = _checked(result, grads, "grad_input")
        return (None,) + tuple(grads)


def _wrap(fn, state, values, only_grad: bool):
    """Pass the tensors among `values` (a tuple) through `fn`; the rest unchanged."""
    picks = [i for i, v in enumerate(values) if isinstance(v, Tensor)
             and (v.requires_grad or not only_grad)]
    if not picks:
        return values
    wrapped = fn.apply(state, *(values[i] for i in picks))
    out = list(values)
    for i, w in zip(picks, wrapped):
        out[i] = w
    return tuple(out)


def call_with_hooks(module, args: tuple, kwargs: dict):
    """`Module.__call__` when the module has hooks: torch's order (pre hooks, backward
    wrapping of the inputs, forward, forward hooks, backward wrapping of the outputs)."""
    for hook, with_kwargs in hooks_of(module, "_forward_pre_hooks"):
        if with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {result}.")
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = _as_tuple(result)
    backward = (hooks_of(module, "_backward_hooks") or hooks_of(module, "_backward_pre_hooks"))
    state = None
    if backward and is_grad_enabled():
        state = _BackwardHookState(module, sum(isinstance(a, Tensor) and a.requires_grad
                                               for a in args))
        args = _wrap(_InputsHook, state, args, only_grad=True)
    try:
        output = module.forward(*args, **kwargs)
    except Exception:
        for hook, with_kwargs, always in hooks_of(module, "_forward_hooks"):
            if always:
                (hook(module, args, kwargs, None) if with_kwargs else hook(module, args, None))
        raise
    for hook, with_kwargs, _ in hooks_of(module, "_forward_hooks"):
        result = (hook(module, args, kwargs, output) if with_kwargs
                  else hook(module, args, output))
        if result is not None:
            output = result
    if state is not None:
        if isinstance(output, Tensor):
            output = _wrap(_OutputsHook, state, (output,), only_grad=True)[0]
        elif isinstance(output, tuple):
            output = type(output)(*_wrap(_OutputsHook, state, output, True)) \
                if hasattr(output, "_fields") else _wrap(_OutputsHook, state, output, True)
    return output


class ModuleHooks:
    """The hook registration methods of `Module` (torch.nn.Module's names and signatures)."""

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args) -> None or new args`` before forward; with ``with_kwargs``
        ``hook(module, args, kwargs) -> None or (args, kwargs)``."""
        return _add(self, "_forward_pre_hooks", (hook, with_kwargs), prepend)

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output) -> None or new output`` after forward (``with_kwargs``:
        ``hook(module, args, kwargs, output)``); ``always_call``: also when forward raised
        (output None)."""
        return _add(self, "_forward_hooks", (hook, with_kwargs, always_call), prepend)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output) -> None or new grad_output``, when the gradients
        with respect to the module's outputs are computed."""
        return _add(self, "_backward_pre_hooks", (hook,), prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output) -> None or new grad_input``, when the
        gradients with respect to the module's tensor inputs are computed."""
        return _add(self, "_backward_hooks", (hook,), prepend)

    def register_backward_hook(self, hook):
        """torch's deprecated non-full backward hook: raises, use
        `register_full_backward_hook` (the same hook signature)."""
        raise NotImplementedError("Module.register_backward_hook (deprecated in torch) is not "
                                  "supported; use register_full_backward_hook")

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, prefix, keep_vars)`` before `state_dict` collects this module."""
        return _add(self, "_state_dict_pre_hooks", (hook,))

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata)`` after; may edit state_dict
        in place (a returned value is an error, as torch)."""
        return _add(self, "_state_dict_hooks", (hook,))

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before `load_state_dict` reads this module's keys."""
        return _add(self, "_load_state_dict_pre_hooks", (hook,))

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """``hook(module, incompatible_keys)`` after `load_state_dict`; may edit the key
        lists in place."""
        return _add(self, "_load_state_dict_post_hooks", (hook,))
