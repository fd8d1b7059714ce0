"""`tg.amp.GradScaler` (torch.amp.GradScaler): dynamic loss scaling for float16 training.

    scaler = tg.amp.GradScaler("cpu")
    with tg.autocast("cpu", dtype=tg.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)        # unscales the gradients; skips the step if one is inf/NaN
    scaler.update()         # halves the scale after a skip, doubles it every growth_interval

As torch 2.13: ``device="cpu"`` really scales; the default ``device="cuda"`` warns
"torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling." and the
scaler does nothing (tracegrad never has CUDA tensors), so a ported GPU script runs
unscaled in float32 unchanged.  The scale is a 0-d float32 tensor and the growth tracker a
0-d int32 tensor, as torch's.  The optimizer is duck-typed (``param_groups`` and
``step()``), so this core-layer module imports nothing of tracegrad.optim.

Eager only: `step` reads whether a gradient is non-finite on the host (torch syncs there
too); inside `tg.compile` that read is a graph break.
"""
from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum

from . import _creation
from .dispatch.grad_mode import no_grad
from .ir.types import float16, float32, float64, int32
from .tensor import Tensor


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """torch.amp.GradScaler.

    Args:
        device: "cpu" scales; "cuda" (the default, as torch) is disabled with torch's
            warning, since tracegrad has no CUDA device.
        init_scale, growth_factor, backoff_factor, growth_interval, enabled: as torch.
    Raises:
        ValueError: growth_factor <= 1 or backoff_factor outside (0, 1) (at first use, as
            torch's asserts; here a ValueError).
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        self._device = str(device)
        self._enabled = enabled
        if self._device.split(":")[0] == "cuda" and enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ValueError("The growth factor must be > 1.0.")
            if not 0.0 < backoff_factor < 1.0:
                raise ValueError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_fresh)

    def _lazy_init(self) -> None:
        self._scale = _creation.full((), self._init_scale, dtype=float32)
        self._growth_tracker = _creation.full((), self._init_growth_tracker, dtype=int32)

    def _check_scale(self, what: str) -> None:
        if self._scale is None:
            raise RuntimeError(
                f"Attempted {what} but _scale is None.  This may indicate your script did not "
                "use scaler.scale(loss or outputs) earlier in the iteration.")

    # ---- scale / unscale ------------------------------------------------------------------
    def scale(self, outputs):
        """`outputs` (a Tensor, or nested lists/tuples of them) times the scale; returned
        unchanged when disabled.

        Raises:
            ValueError: something that is neither a Tensor nor an iterable of Tensors.
        """
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init()

        def apply(value):
            if isinstance(value, Tensor):
                return value * self._scale      # torch's promotion: a float16 loss -> float32
            if isinstance(value, (list, tuple)):
                out = [apply(v) for v in value]
                return type(value)(out) if isinstance(value, tuple) else out
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply(outputs)

    def unscale_(self, optimizer) -> None:
        """Divide `optimizer`'s gradients by the scale in place and record whether any is
        inf/NaN (call it before gradient clipping; `step` calls it if you did not).

        Raises:
            RuntimeError: called twice since the last `update`, or after `step`.
            ValueError: float16 gradients (torch's "Attempting to unscale FP16 gradients.").
        """
        if not self._enabled:
            return
        self._check_scale("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # torch: the reciprocal in float64, then float32
        inv_scale = self._scale.to(float64).reciprocal().to(float32)
        found = _creation.zeros((), dtype=float32)
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    if g.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    found = found.maximum((~g.isfinite().all()).to(float32))
                    g.mul_(inv_scale)
        state["found_inf_per_device"] = {"cpu": found}
        state["stage"] = OptState.UNSCALED

    # ---- step / update ------------------------------------------------------------------------
    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step(*args, **kwargs)`` unless a gradient was inf/NaN (then skipped);
        unscales first if `unscale_` was not called.  Returns the step's result (None when
        skipped).

        Raises:
            RuntimeError: a ``closure`` keyword (torch's), or step called twice before
                `update`.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise RuntimeError("No inf checks were recorded for this optimizer.")
        result = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            result = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Set the next scale: `new_scale` (a float or a 0-d/1-element tensor) if given,
        else back off by `backoff_factor` if any optimizer saw inf/NaN since the last
        update, or grow by `growth_factor` after `growth_interval` clean updates (torch's
        _amp_update_scale_).

        Raises:
            RuntimeError: no `scale` call yet, or no inf checks recorded since the last one.
        """
        if not self._enabled:
            return
        self._check_scale("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1:
                    raise ValueError("new_scale should be a float or a 1-element tensor")
                self._scale.copy_(new_scale.reshape(()))
            else:
                self._scale.fill_(float(new_scale))
        else:
            found = [f for s in self._per_optimizer_states.values()
                     for f in s["found_inf_per_device"].values()]
            if not found:
                raise RuntimeError("No inf checks were recorded prior to update.")
            if any(f.item() for f in found):
                self._scale.mul_(self._backoff_factor)
                self._growth_tracker.fill_(0)
            else:
                grown = int(self._growth_tracker.item()) + 1
                if grown == self._growth_interval:
                    bigger = self._scale * self._growth_factor
                    if bigger.isfinite().item():   # torch keeps the scale if it would overflow
                        self._scale.copy_(bigger)
                    grown = 0
                self._growth_tracker.fill_(grown)
        self._per_optimizer_states = defaultdict(_fresh)

    # ---- accessors ------------------------------------------------------------------------
    def get_scale(self) -> float:
        """The current scale (the init_scale before the first use; 1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else self._scale.item()

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if not self._enabled:
            return 0
        return (self._init_growth_tracker if self._growth_tracker is None
                else int(self._growth_tracker.item()))

    def is_enabled(self) -> bool:
        """Whether this scaler scales (False for device "cuda" here, as torch without CUDA)."""
        return self._enabled

    def state_dict(self) -> dict:
        """torch's format: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker (plain numbers); {} when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a `state_dict`.

        Raises:
            RuntimeError: an empty dict (saved from a disabled scaler; torch's message).
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])
