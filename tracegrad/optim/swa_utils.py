"""Stochastic weight averaging and EMA models (torch.optim.swa_utils): `AveragedModel`, the
`SWALR` schedule, `update_bn`, and the averaging functions ``get_ema_multi_avg_fn``,
``get_swa_multi_avg_fn``, ``get_ema_avg_fn``, ``get_swa_avg_fn``.

The averages follow torch 2.13's CPU arithmetic: the default (SWA) update is the per-tensor
``avg + (p - avg) / (n + 1)`` torch runs on CPU, and the EMA multi-tensor update is a lerp
of each float average towards the model's value by ``1 - decay``.  Every update runs under
``no_grad`` and writes the averaged model's tensors in place, as torch's ``copy_`` does.
"""
from __future__ import annotations

import copy
import itertools
import math

from ..autograd import no_grad
from ..nn.modules.module import Module
from ..nn.modules.norm import _BatchNorm
from ..tensor import Tensor
from .._creation import tensor
from ..ir import types as T
from ._scheduler_base import LRScheduler, per_group

__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]


def _is_float(t: Tensor) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def get_ema_multi_avg_fn(decay: float = 0.999):
    """An exponential moving average over lists of tensors: ``ema.lerp_(p, 1 - decay)`` for
    float tensors, ``ema * decay + p * (1 - decay)`` written back for the others (torch's)."""
    @no_grad()
    def ema_update(ema_param_list, current_param_list, _num_averaged):
        if _is_float(ema_param_list[0]):
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The running (equal-weight) average over lists of tensors: each average moves
    ``1 / (n + 1)`` of the way to the model's value (torch's)."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = _count(num_averaged)
        if _is_float(averaged_param_list[0]):
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.lerp_(p_model, 1.0 / (n + 1))
        else:
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                p_avg.copy_(p_avg + (p_model - p_avg) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay: float = 0.999):
    """``decay * ema + (1 - decay) * p`` for one tensor (torch's get_ema_avg_fn)."""
    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg + (p - avg) / (n + 1)`` for one tensor (torch's get_swa_avg_fn)."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


def _count(n) -> int:
    return int(n.item()) if isinstance(n, Tensor) else int(n)


def _by_dtype(pairs):
    """[(averaged, model)] grouped by dtype, first occurrence first (torch groups by device
    and dtype; tracegrad has one device)."""
    groups: dict = {}
    for a, m in pairs:
        groups.setdefault(a.dtype, ([], []))
        groups[a.dtype][0].append(a)
        groups[a.dtype][1].append(m)
    return list(groups.values())


class AveragedModel(Module):
    """A copy of `model` whose parameters (and with `use_buffers` its buffers) are the
    average of the models passed to `update_parameters` (torch.optim.swa_utils.
    AveragedModel): the equal-weight SWA average by default, or what `avg_fn(avg, p, n)`
    (one tensor) or `multi_avg_fn(avgs, ps, n)` (lists, in place) computes, e.g.
    ``multi_avg_fn=get_ema_multi_avg_fn(0.999)`` for an EMA model.

    Args:
        model: the module to average (deep-copied).
        device: where the averaged copy lives (``module.to(device)``), as torch.
        avg_fn, multi_avg_fn: at most one of them.
        use_buffers: average the buffers too (BatchNorm statistics); otherwise they are
            copied from `model` at each update.
    Attributes:
        n_averaged: int64 buffer, how many models have been averaged.
    """

    def __init__(self, model: Module, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers: bool = False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:   # torch: the averaged copy lives on `device`
            self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=T.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model: Module) -> None:
        """Fold `model`'s current values into the average (the first call copies them)."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        pairs = [(a, m.detach()) for a, m in zip(mine, theirs)]
        n = _count(self.n_averaged)
        if n == 0:
            for a, m in pairs:
                a.copy_(m)
        elif self.multi_avg_fn is not None:
            for avgs, models in _by_dtype(pairs):
                self.multi_avg_fn(avgs, models, self.n_averaged)
        else:
            avg_fn = self.avg_fn if self.avg_fn is not None else get_swa_avg_fn()
            for a, m in pairs:
                a.copy_(avg_fn(a.detach(), m, self.n_averaged))
        if not self.use_buffers:   # keep the buffers in step with the source model
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.copy_(b_model.detach())
        self.n_averaged.add_(1)


@no_grad()
def update_bn(loader, model: Module, device=None) -> None:
    """Recompute the BatchNorm running statistics of `model` with one pass over `loader`
    (torch.optim.swa_utils.update_bn): each BatchNorm's statistics are reset and averaged
    over every batch (momentum None), then the momenta and the train/eval mode restored.
    A batch that is a list or tuple contributes its first element.  Nothing happens
    without BatchNorm layers."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, (list, tuple)):
            batch = batch[0]
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr to its `swa_lr` over `anneal_epochs` steps, then holds it
    (torch.optim.swa_utils.SWALR); `anneal_strategy` "cos" or "linear".

    Raises:
        ValueError: an unknown strategy, a negative or non-int anneal_epochs, a list of
        swa_lr of the wrong length (torch's messages).
    """

    def __init__(self, optimizer, swa_lr, anneal_epochs: int = 10, anneal_strategy: str = "cos",
                 last_epoch: int = -1):
        for lr, group in zip(per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self.anneal_func = _cosine_anneal if anneal_strategy == "cos" else _linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        self._warn_get_lr_outside_step()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        groups = self.optimizer.param_groups
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev)]


def _linear_anneal(t):
    return t


def _cosine_anneal(t):
    return (1 - math.cos(math.pi * t)) / 2

