"""torch.autograd.grad_mode's names; the modes live in the dispatch core
(tracegrad/dispatch/grad_mode.py), which reads them per op.

`set_multithreading_enabled` / `is_multithreading_enabled` are torch's switch for running
backward on device worker threads: tracegrad runs every backward on the calling thread, so
the flag is only recorded (thread-local, as torch) and read back."""
from __future__ import annotations

import threading

from ..dispatch.grad_mode import (  # noqa: F401
    _set_mode, _wrap, enable_grad, inference_mode, is_grad_enabled, is_inference,
    is_inference_mode_enabled, no_grad, set_grad_enabled)


class _Multithreading(threading.local):
    enabled = True


_MULTITHREADING = _Multithreading()


def is_multithreading_enabled() -> bool:
    """torch.autograd.is_multithreading_enabled: the flag `set_multithreading_enabled` set
    on this thread (True by default); backward here is always single-threaded."""
    return _MULTITHREADING.enabled


def _set_multithreading(mode) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"set_multithreading_enabled(): argument 'enabled' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _MULTITHREADING.enabled = mode


class set_multithreading_enabled:
    """Context manager and function enabling or disabling multithreaded backward
    (torch.autograd.set_multithreading_enabled): as in torch the flag is set when the object
    is made and restored when a ``with`` block exits; a decorator sets it inside each call.
    Thread-local.  tracegrad's backward always runs on the calling thread, so the flag
    changes nothing but what `is_multithreading_enabled` returns."""

    def __init__(self, mode: bool) -> None:
        self.prev = _MULTITHREADING.enabled
        _set_multithreading(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _MULTITHREADING.enabled = self.prev

    def clone(self) -> "set_multithreading_enabled":
        """A copy of this object (torch's ``clone``): the mode, set again."""
        return self.__class__(self.mode)

    def __call__(self, fn):
        return _wrap(self.clone, fn)
