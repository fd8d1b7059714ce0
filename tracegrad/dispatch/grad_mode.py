"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local, as torch).

Part of the dispatch core (the dispatcher reads the flags these set on every op);
``tracegrad.autograd`` re-exports them under torch's names."""
from __future__ import annotations

import functools
import inspect
import sys
import warnings

from .. import _state


def _set_mode(mode: bool) -> None:
    """Grad mode as the user set it (`is_grad_enabled`), and whether ops record: never inside
    inference mode, where torch keeps even ``enable_grad`` blocks from recording."""
    local = _state.local
    local.grad_mode = mode
    local.grad_enabled = mode and not local.inference


def _wrap(factory, fn):
    """`fn` run inside ``factory()``'s mode, as torch's ``_DecoratorContextManager``: a
    generator function gets the mode around each step (``send``/``throw``/``close``),
    so the mode holds inside it across yields and the caller's mode outside; a
    coroutine function, as in torch, only while it is created (torch wraps the call)."""
    if inspect.isclass(fn):
        warnings.warn("Decorating classes is deprecated and will be disabled in future versions. "
                      "You should only decorate functions or methods. To preserve the current "
                      "behavior of class decoration, you can directly decorate the `__init__` "
                      "method and nothing else.", FutureWarning, stacklevel=3)
        cls = fn
        fn = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731  (torch's wrapper)
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with factory():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with factory():
                            gen.close()
                        raise
                    except BaseException:
                        with factory():
                            response = gen.throw(sys.exc_info()[1])
                    else:
                        with factory():
                            response = gen.send(request)
            except StopIteration as e:
                return e.value
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with factory():
            return fn(*args, **kwargs)
    return wrapper


class _GradMode:
    """Context manager and decorator that sets grad mode to `self.mode` inside; usable
    without parentheses (``@tg.no_grad``), as torch's no_grad/enable_grad."""

    mode = True

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments (got {type(orig_func).__name__})")
        return cls()(orig_func)

    def __enter__(self):
        self._prev = _state.local.grad_mode
        _set_mode(self.mode)
        return self

    def __exit__(self, *exc):
        _set_mode(self._prev)
        return False

    def clone(self):
        return self.__class__()

    def __call__(self, fn):
        return _wrap(self.clone, fn)


class no_grad(_GradMode):
    """Disable recording inside the block (torch.no_grad)."""

    mode = False


class enable_grad(_GradMode):
    """Enable recording inside the block (torch.enable_grad); inside inference mode
    ops still do not record, as in torch."""

    mode = True


class set_grad_enabled(_GradMode):
    """Set grad mode to `mode`: immediately as a function, restored by a `with` block; as a
    decorator it leaves the mode as it was and sets it inside each call (torch's)."""

    def __new__(cls, mode: bool):
        return object.__new__(cls)

    def __init__(self, mode: bool):
        self._prev = _state.local.grad_mode
        self.mode = bool(mode)
        _set_mode(self.mode)

    def __enter__(self):
        return self

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, fn):
        _set_mode(self._prev)   # as a decorator it must not switch the mode now
        return _wrap(self.clone, fn)


def is_grad_enabled() -> bool:
    return _state.local.grad_mode


class inference_mode:
    """Inference mode (torch.inference_mode): no recording, and tensors made inside are
    *inference tensors*, which autograd refuses to save later.

    A context manager and a decorator (``@inference_mode``, ``@inference_mode()``,
    ``inference_mode(mode=False)``; generators keep the mode across yields).
    ``inference_mode(False)`` inside it restores normal mode.  Outside the block,
    recording an op that must save an inference tensor raises torch's "Inference
    tensors cannot be saved for backward" error; ``clone()`` one to use it in autograd.
    """

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):   # bare @inference_mode
            return cls(True)(mode)
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
        return _wrap(self.clone, fn)

    def clone(self) -> "inference_mode":
        return inference_mode(self.mode)


def is_inference_mode_enabled() -> bool:
    return _state.local.inference


def is_inference(input) -> bool:
    """True for an inference tensor (torch.is_inference).

    Raises:
        TypeError: `input` is not a tensor (torch's message).
    """
    if not hasattr(input, "is_inference"):
        raise TypeError(f"is_inference(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input.is_inference()
