"""ParameterList and ParameterDict (torch.nn's): parameters held in a list or dict and
registered under their index or key, so ``parameters()``, ``state_dict()`` and optimizers
see them (a plain tensor is wrapped as a Parameter, as torch)."""
from __future__ import annotations

from typing import Iterable, Iterator

from ...tensor import Parameter, Tensor
from .module import Module


def _as_param(value):
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(p, legacy: bool = False) -> str:
    """torch's line for one entry: ParameterList names the dtype (``torch.float32``),
    ParameterDict the legacy type (``torch.FloatTensor``), as torch 2.13 prints them."""
    if not isinstance(p, Tensor):
        return f"Object of type: {type(p).__name__}"
    size = "x".join(str(s) for s in p.shape)
    kind = "Parameter containing" if isinstance(p, Parameter) else "Tensor"
    what = p.type() if legacy else f"torch.{p.dtype.name}"
    return f"{kind}: [{what} of size {size}]"


class ParameterList(Module):
    """A list of parameters registered as ``"0"``, ``"1"``, ... (torch.nn.ParameterList)."""

    def __init__(self, values: Iterable | None = None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ParameterList([self[i] for i in range(self._size)[idx]])
        if not -self._size <= idx < self._size:
            raise IndexError(f"index {idx} is out of range")
        return getattr(self, str(idx % self._size))

    def __setitem__(self, idx: int, value) -> None:
        idx = idx % self._size
        setattr(self, str(idx), _as_param(value))

    def __iter__(self) -> Iterator:
        return (self[i] for i in range(self._size))

    def __iadd__(self, values: Iterable) -> "ParameterList":
        return self.extend(values)

    def append(self, value) -> "ParameterList":
        setattr(self, str(self._size), _as_param(value))
        self._size += 1
        return self

    def extend(self, values: Iterable) -> "ParameterList":
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return ""

    def _child_lines(self) -> list[str]:
        return [f"({i}): {_describe(p)}" for i, p in enumerate(self)]

    def __repr__(self) -> str:
        lines = self._child_lines()
        if not lines:
            return "ParameterList()"
        return "ParameterList(\n    " + "\n    ".join(lines) + "\n)"


class ParameterDict(Module):
    """A dict of parameters registered under their keys (torch.nn.ParameterDict), in
    insertion order."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys: dict = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str):
        return getattr(self, key) if key in self._keys else self._missing(key)

    @staticmethod
    def _missing(key):
        raise KeyError(key)

    def __setitem__(self, key: str, value) -> None:
        self._keys[key] = None
        setattr(self, key, _as_param(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def __contains__(self, key) -> bool:
        return key in self._keys

    def keys(self):
        return list(self._keys)

    def values(self):
        return [self[k] for k in self._keys]

    def items(self):
        return [(k, self[k]) for k in self._keys]

    def get(self, key, default=None):
        return self[key] if key in self._keys else default

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def update(self, parameters) -> None:
        items = parameters.items() if hasattr(parameters, "items") else parameters
        for k, v in items:
            self[k] = v

    def _child_lines(self) -> list[str]:
        return [f"({k}): {_describe(p, legacy=True)}" for k, p in self.items()]

    def __repr__(self) -> str:
        lines = self._child_lines()
        if not lines:
            return "ParameterDict()"
        return "ParameterDict(\n    " + "\n    ".join(lines) + "\n)"
