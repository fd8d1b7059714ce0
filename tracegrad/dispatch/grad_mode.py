"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, as torch).

Part of the dispatch core (the dispatcher reads the flags these set on every op);
``tracegrad.autograd`` re-exports them under torch's names."""
from __future__ import annotations

import functools

from .. import _state


def _set_mode(mode: bool) -> None:
    """Grad mode as the user set it (`is_grad_enabled`), and whether ops record: never inside
    inference mode, where torch keeps even ``enable_grad`` blocks from recording."""
    local = _state.local
    local.grad_mode = mode
    local.grad_enabled = mode and not local.inference


class _GradMode:
    """Context manager and decorator that sets grad mode to `self.mode` inside."""

    mode = True

    def __enter__(self):
        self._prev = _state.local.grad_mode
        _set_mode(self.mode)
        return self

    def __exit__(self, *exc):
        _set_mode(self._prev)
        return False

    def __call__(self, fn):
        mode = self.mode
        if isinstance(self, set_grad_enabled):  # as a decorator it must not switch the mode now
            _set_mode(self._prev)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = _state.local.grad_mode
            _set_mode(mode)
            try:
                return fn(*args, **kwargs)
            finally:
                _set_mode(prev)
        return wrapper


class no_grad(_GradMode):
    """Disable recording inside the block (torch.no_grad)."""

    mode = False


class enable_grad(_GradMode):
    """Enable recording inside the block (torch.enable_grad); inside inference mode
    ops still do not record, as in torch."""

    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode to `mode`: immediately as a function, restored by a `with` block."""

    def __init__(self, mode: bool):
        self._prev = _state.local.grad_mode
        self.mode = bool(mode)
        _set_mode(self.mode)

    def __enter__(self):
        return self


def is_grad_enabled() -> bool:
    return _state.local.grad_mode


class inference_mode:
    """Inference mode (torch.inference_mode): no recording, and tensors made inside are
    *inference tensors*, which autograd refuses to save later.

    A context manager and a decorator (``@inference_mode`` or ``@inference_mode()``).
    ``inference_mode(False)`` inside it restores normal mode.  Outside the block,
    recording an op that must save an inference tensor raises torch's "Inference
    tensors cannot be saved for backward" error; ``clone()`` one to use it in autograd.
    """

    def __new__(cls, mode_or_fn=True):
        if callable(mode_or_fn) and not isinstance(mode_or_fn, bool):   # bare @inference_mode
            return cls(True)(mode_or_fn)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self):
        local = _state.local
        self._prev = (local.grad_mode, local.inference)
        local.inference = self.mode
        _set_mode(not self.mode)   # torch: inference_mode(m) sets grad mode to (not m)
        if self.mode and not local.inference_seen:
            local.inference_seen = True
            _state.refresh_record_extras()
        return self

    def __exit__(self, *exc):
        _state.local.inference = self._prev[1]
        _set_mode(self._prev[0])
        return False

    def __call__(self, fn):
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper

    def clone(self) -> "inference_mode":
        return inference_mode(self.mode)


def is_inference_mode_enabled() -> bool:
    return _state.local.inference
