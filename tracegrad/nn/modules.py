"""torch.nn.Module and a few layers.

Parameters and submodules are registered by attribute assignment, as torch.
`tg.compile` finds parameters by identity when a step reaches them, so
modules need no special support from the compiler.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Iterator

import numpy as np

from .. import _creation
from .._ops import relu, sigmoid, tanh
from ..tensor import Parameter, Tensor


class Module:
    """Base class of layers and models (torch.nn.Module)."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() is called")
        params, modules = self.__dict__["_parameters"], self.__dict__["_modules"]
        params.pop(name, None)
        modules.pop(name, None)
        if isinstance(value, Parameter):
            params[name] = value
        elif isinstance(value, Module):
            modules[name] = value
        object.__setattr__(self, name, value)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        seen = set()
        for name, p in self._named_members(prefix, recurse):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def _named_members(self, prefix, recurse):
        for name, p in self._parameters.items():
            yield prefix + name, p
        if recurse:
            for mname, m in self._modules.items():
                yield from m._named_members(prefix + mname + ".", True)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def children(self) -> Iterator["Module"]:
        yield from self._modules.values()

    def modules(self) -> Iterator["Module"]:
        yield self
        for m in self._modules.values():
            yield from m.modules()

    def train(self, mode: bool = True) -> "Module":
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def state_dict(self) -> "OrderedDict[str, Tensor]":
        return OrderedDict((n, Tensor(p._data)) for n, p in self.named_parameters())

    def load_state_dict(self, state) -> None:
        params = dict(self.named_parameters())
        missing = set(params) - set(state)
        if missing:
            raise KeyError(f"load_state_dict: missing keys {sorted(missing)}")
        for name, value in state.items():
            p = params[name]
            arr = np.asarray(value._data if isinstance(value, Tensor) else value)
            if arr.shape != p.shape:
                raise RuntimeError(f"load_state_dict: {name} has shape {list(p.shape)}, "
                                   f"got {list(arr.shape)}")
            p._data = arr.astype(p.dtype.numpy)
            p._vc[0] += 1

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            lines.append(f"  ({name}): " + repr(m).replace("\n", "\n  "))
        return lines[0] + (")" if len(lines) == 1 else "\n" + "\n".join(lines[1:]) + "\n)")


class Linear(Module):
    """y = x @ W.T + b with W: (out_features, in_features) (torch.nn.Linear).

    Initialized as torch: uniform(-1/sqrt(in_features), 1/sqrt(in_features))
    for weight (kaiming_uniform with a=sqrt(5)) and bias.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        w = _creation.rand(out_features, in_features, dtype=dtype) * (2 * bound) - bound
        self.weight = Parameter(w)
        if bias:
            self.bias = Parameter(_creation.rand(out_features, dtype=dtype) * (2 * bound) - bound)
        else:
            self.bias = None

    def forward(self, x: Tensor) -> Tensor:
        y = x @ self.weight.T
        return y + self.bias if self.bias is not None else y

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class ReLU(Module):
    def forward(self, x):
        return relu(x)


class Tanh(Module):
    def forward(self, x):
        return tanh(x)


class Sigmoid(Module):
    def forward(self, x):
        return sigmoid(x)


class Sequential(Module):
    """Modules applied in order (torch.nn.Sequential)."""

    def __init__(self, *modules: Module):
        super().__init__()
        for i, m in enumerate(modules):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i: int) -> Module:
        return list(self._modules.values())[i]

    def __len__(self) -> int:
        return len(self._modules)
