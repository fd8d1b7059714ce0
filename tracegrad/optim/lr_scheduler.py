"""Learning-rate schedulers (torch.optim.lr_scheduler): `StepLR`, `CosineAnnealingLR`,
`LambdaLR`, `OneCycleLR` here; `MultiplicativeLR`, `MultiStepLR`, `ConstantLR`, `LinearLR`,
`ExponentialLR`, `PolynomialLR`, `CosineAnnealingWarmRestarts` (_schedulers_simple.py);
`SequentialLR`, `ChainedScheduler`, `CyclicLR`, `ReduceLROnPlateau`
(_schedulers_combined.py); all on the `LRScheduler` base (_scheduler_base.py).

The update rules, ``last_epoch`` numbering, ``get_last_lr()`` and the ``state_dict()``
contents follow torch 2.13 (the recursive forms, e.g. CosineAnnealingLR's, are torch's, so
the floats match).  A scheduler writes ``group["lr"]`` (and, for OneCycleLR, ``group["momentum"]`` or
``group["betas"]``) as a Python float; the optimizer feeds it to a compiled step as data,
so calling ``scheduler.step()`` between calls of a ``tg.compile``d training step never
retraces.  Call ``scheduler.step()`` outside the compiled function: inside, it would run
only while tracing (tracegrad raises a TraceError there).

Cut: torch's SWALR (torch.optim.swa_utils) is not implemented; subclass `LRScheduler` and
define ``get_lr()`` for your own schedule.
"""
from __future__ import annotations

import math

from ._scheduler_base import LambdaScheduler, LRScheduler, per_group
from ._schedulers_combined import ChainedScheduler, CyclicLR, ReduceLROnPlateau, SequentialLR
from ._schedulers_simple import (ConstantLR, CosineAnnealingWarmRestarts, ExponentialLR,
                                 LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR)
from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR", "LambdaLR", "OneCycleLR",
           "MultiplicativeLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "PolynomialLR", "CosineAnnealingWarmRestarts", "SequentialLR", "ChainedScheduler",
           "CyclicLR", "ReduceLROnPlateau"]


class StepLR(LRScheduler):
    """Multiply each group's lr by `gamma` every `step_size` steps (torch's StepLR):
    ``lr = initial_lr * gamma ** (last_epoch // step_size)``, applied to the current lr so
    it composes with other changes."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_get_lr_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [group["lr"] for group in self.optimizer.param_groups]
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial lr to `eta_min` over `T_max` steps, without restarts
    (torch's CosineAnnealingLR; SGDR, Loshchilov & Hutter 2017)::

        lr_t = eta_min + (initial_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2

    computed, as torch does, by the recursive form from the previous lr (so it composes
    with other changes and past T_max it rises again along the cosine)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1):
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_get_lr_outside_step()
        groups, t, T, lo = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [group["lr"] for group in groups]
        if self._step_count == 1 and t > 0:
            return [lo + (base - lo) * (1 + math.cos(t * math.pi / T)) / 2
                    for base in self.base_lrs]
        if (t - 1 - T) % (2 * T) == 0:
            return [group["lr"] + (base - lo) * (1 - math.cos(math.pi / T)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (group["lr"] - lo) + lo for group in groups]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


class LambdaLR(LambdaScheduler):
    """``lr = initial_lr * lr_lambda(last_epoch)`` (torch's LambdaLR).

    Args:
        lr_lambda: a function of the step index, or one per param group.
    Raises:
        ValueError: a list of lambdas whose length is not the number of groups.

    ``state_dict()`` saves a lambda's attributes only when it is a callable object (not a
    plain function or lambda), as torch does.
    """

    def get_lr(self) -> list[float]:
        self._warn_get_lr_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class OneCycleLR(LRScheduler):
    """The 1cycle policy (torch's OneCycleLR; Smith & Topin 2017): the lr rises from
    ``max_lr / div_factor`` to `max_lr` over the first `pct_start` of `total_steps`, then
    anneals to ``initial_lr / final_div_factor``; with `cycle_momentum` the momentum
    (SGD/RMSprop ``momentum``, Adam's beta1) moves inversely between `max_momentum` and
    `base_momentum`.  `three_phase` adds torch's symmetric third phase.  Step it once per
    batch.

    Raises:
        ValueError: neither total_steps nor epochs and steps_per_epoch given, a bad
            pct_start or anneal_strategy, cycle_momentum with an optimizer that has no
            momentum or betas, or stepping past total_steps.
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for name, v in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(v, int) or v <= 0:
                    raise ValueError(f"Expected positive integer {name}, but got {v}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        n = self.total_steps
        phase = lambda end, lr0, lr1, m0, m1: {  # noqa: E731
            "end_step": end, "start_lr": lr0, "end_lr": lr1, "start_momentum": m0,
            "end_momentum": m1}
        if three_phase:
            self._schedule_phases = [
                phase(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum",
                      "base_momentum"),
                phase(float(2 * pct_start * n) - 2, "max_lr", "initial_lr", "base_momentum",
                      "max_momentum"),
                phase(n - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._schedule_phases = [
                phase(float(pct_start * n) - 1, "initial_lr", "max_lr", "max_momentum",
                      "base_momentum"),
                phase(n - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            maxs = per_group("max_momentum", optimizer, max_momentum)
            bases = per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m, b, group in zip(maxs, bases, optimizer.param_groups):
                    self._set_momentum(group, m)
                    group["max_momentum"] = m
                    group["base_momentum"] = b
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        self._warn_get_lr_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[ph["start_lr"]], group[ph["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(
                            group[ph["start_momentum"]], group[ph["end_momentum"]], pct))
                    break
                start = end
        return lrs
