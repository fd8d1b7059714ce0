"""The learning-rate scheduler base class (torch.optim.lr_scheduler.LRScheduler); the
schedulers are in lr_scheduler.py, _schedulers_simple.py and _schedulers_combined.py."""
from __future__ import annotations

import functools
import types
import warnings

from tracegrad.ir.errors import TraceError

from .. import _state
from .optimizer import Optimizer


def outside_trace(step):
    """Wraps a scheduler's ``step``: inside a function being traced by tg.compile it raises
    before the schedule changes anything.  The assignment of the new lr would raise there
    anyway (optimizer.py), but only after ``last_epoch`` had moved, and the eager re-run
    of a graph break would then step the schedule a second time (StepLR's ``last_epoch``
    2 after one call)."""
    @functools.wraps(step)
    def checked(self, *args, **kwargs):
        if _state.local.tracer is not None:
            raise TraceError(
                f"{type(self).__name__}.step() was called inside a function being compiled by "
                "tg.compile; it would change the learning rate only while tracing. Call "
                "scheduler.step() outside the compiled function: the compiled step reads the "
                "new value as data, without retracing")
        return step(self, *args, **kwargs)
    return checked


def per_group(name: str, optimizer: Optimizer, value) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(value)
    return [value] * len(optimizer.param_groups)


class LRScheduler:
    """Base class (torch.optim.lr_scheduler.LRScheduler).

    Args:
        optimizer: the optimizer whose ``param_groups[i]["lr"]`` it sets.
        last_epoch: index of the last step taken; -1 (default) starts the schedule and
            records each group's ``initial_lr``; a value >= 0 resumes (every group must
            then have ``initial_lr``, as restored by ``optimizer.load_state_dict``).
    Raises:
        TypeError: `optimizer` is not an `Optimizer`.
        KeyError: resuming (last_epoch >= 0) without ``initial_lr`` in the groups.

    Construction performs step 0 (sets the lr for ``last_epoch + 1``).  Subclasses
    define ``get_lr()``: the lrs for ``self.last_epoch``.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming a scheduler with last_epoch >= 0; load the "
                                   "optimizer's state_dict first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._get_lr_called_within_step = False
        self._is_initial = False
        self._initial_step()

    def state_dict(self) -> dict:
        """Every attribute except the optimizer (torch's format; plain Python data, so
        `tg.save` can write it)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore attributes saved by `state_dict` (the optimizer's lrs come from the
        optimizer's own state_dict)."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[float]:
        """The lrs the last `step` set, one per param group."""
        return self._last_lr

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr()")

    def _warn_get_lr_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)

    def _initial_step(self) -> None:
        """Step 0 at construction (torch's _initial_step; SequentialLR re-runs it)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    @outside_trace
    def step(self, epoch: int | None = None) -> None:
        """Advance the schedule by one (call after ``optimizer.step()``).

        Args:
            epoch: deprecated in torch; sets ``last_epoch`` and uses the closed form where
                the scheduler has one.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", True):
            warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                          "You should call them in the opposite order: `optimizer.step()` "
                          "before `lr_scheduler.step()`.  Failure to do this will result in "
                          "skipping the first value of the learning rate schedule.",
                          UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn("The epoch parameter in `scheduler.step()` is deprecated (as in "
                          "torch); call `scheduler.step()` without it.", UserWarning,
                          stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class LambdaScheduler(LRScheduler):
    """A scheduler driven by one ``lr_lambda`` per param group (LambdaLR, MultiplicativeLR):
    the list check, and torch's ``state_dict`` convention, which saves a lambda's
    attributes only when it is a callable object (not a plain function or lambda)."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1, *,
                 check_callable: bool = False):
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got "
                                 f"{len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        if check_callable:
            for fn in self.lr_lambdas:
                if not callable(fn):
                    raise TypeError(f"lr_lambda should be a function, but got "
                                    f"{type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        out["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                             for fn in self.lr_lambdas]
        return out

    def load_state_dict(self, state_dict: dict) -> None:
        state_dict = dict(state_dict)
        lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lambdas):
            if saved is not None:
                fn.__dict__.update(saved)
