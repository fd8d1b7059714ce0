"""Grad modes: no_grad, enable_grad, set_grad_enabled (thread-local, as torch)."""
from __future__ import annotations

import functools

from .. import _state


class _GradMode:
    """Context manager and decorator that sets grad mode to `self.mode` inside."""

    mode = True

    def __enter__(self):
        self._prev = _state.local.grad_enabled
        _state.local.grad_enabled = self.mode
        return self

    def __exit__(self, *exc):
        _state.local.grad_enabled = self._prev
        return False

    def __call__(self, fn):
        mode = self.mode
        if isinstance(self, set_grad_enabled):  # as a decorator it must not switch the mode now
            _state.local.grad_enabled = self._prev

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _state.local.grad_enabled
            _state.local.grad_enabled = mode
            try:
                return fn(*args, **kwargs)
            finally:
                _state.local.grad_enabled = prev
        return wrapper


class no_grad(_GradMode):
    """Disable recording inside the block (torch.no_grad)."""

    mode = False


class enable_grad(_GradMode):
    """Enable recording inside the block (torch.enable_grad)."""

    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode to `mode`: immediately as a function, restored by a `with` block."""

    def __init__(self, mode: bool):
        self._prev = _state.local.grad_enabled
        self.mode = bool(mode)
        _state.local.grad_enabled = self.mode

    def __enter__(self):
        return self


def is_grad_enabled() -> bool:
    return _state.local.grad_enabled
