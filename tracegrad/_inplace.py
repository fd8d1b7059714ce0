"""Tensor's in-place ops (``add_``, ``copy_``, ``x[i] = v`` ...), recorded functionally.

Values are immutable arrays: an in-place op computes its result out of place,
then the tensor takes it as its new value, keeping its identity; views write
through to their base (see _views.py).  Installed on `Tensor` (tensor.py
`attach`) when tracegrad is imported.
"""
from __future__ import annotations

from tracegrad.ir.errors import named, with_location
from tracegrad.ir.scalars import check_scalar

from . import _ops, _state, _views
from ._out import check_cast
from ._surface_ops import check_alpha
from .dispatch import view_meta
from .dispatch.hooks import HOOKS
from .dispatch.tape import next_mark
from .tensor import Tensor, _wrap_like, attach


@attach
class _InplaceMethods:
    # ---- in-place (recorded functionally) -------------------------------------------
    def _inplace(self, result: "Tensor", name: str, mark: int | None = None) -> "Tensor":
        """Make `result` this tensor's new value, keeping identity (torch's in-place ops).

        On a view the new value is written through to the base (see _views.py);
        every live view of the base is regenerated; the shared version counter
        is bumped once.  Tape nodes recorded since `mark` (default: the node
        that produced `result`) belong to this in-place op; their saved copies
        of the old value stay valid (see `_views.rebase_saved_versions`).
        """
        local = _state.local
        grad_on = local.grad_enabled
        if view_meta.MARKS or view_meta.PACKING:   # views torch forbids writing to (rare)
            owner = self if self._base is None else self._base
            view_meta.check_packing(self, owner)
            view_meta.check(self, owner, grad_on, result._requires_grad)
        if getattr(self, "_inference", False) and not local.inference:
            raise RuntimeError(f"{name}: Inplace update to inference tensor outside "
                               "InferenceMode is not allowed. You can make a clone to get a "
                               "normal tensor before doing inplace update.")
        _views.check_leaf_write(self, name, grad_on)
        base = self._base
        if result.shape != self.shape:
            raise RuntimeError(f"{name}: output with shape {list(self.shape)} doesn't match the "
                               f"broadcast shape {list(result.shape)}")
        if result.dtype is not self.dtype:
            # torch's rule (out= too): int_tensor.add_(1.5) raises, a float64 result goes
            # into a float32 tensor, a comparison's bool into anything
            try:
                check_cast(result.dtype, self.dtype)
            except RuntimeError as e:   # named as the op the user called (add_: ...)
                raise with_location(named(e, name), _state.user_location()) from None
            result = result.to(self.dtype)
        if mark is None and result.grad_fn is not None:
            mark = result.grad_fn.seq
        old, old_data = self._vc[0], self._data
        owner = self if base is None else base
        kept = owner.grad_fn   # the node the owner keeps when this write records none
        tracer = local.tracer
        before = tracer.value_of(owner) if tracer is not None and owner._requires_grad else None
        if base is None:
            # an overwrite (fill_, zero_, copy_ ...; copy_ also from a source with history)
            # keeps torch's node with a zero gradient to the old value (CopyBackwards: zeros)
            if grad_on and ((result.grad_fn is None and self._requires_grad)
                            or (name == "copy_" and (self._requires_grad or result._requires_grad))):
                result = _views.cut_history(self, result, name)
            self._assign(result)
        else:
            track = not any(op == "alias" for op, _ in self._view_ops)
            base_fw = None
            if local.fw_level is not None:   # forward AD: a make_dual dual's tangent is its own
                plain = HOOKS.write_view_tangent(self, result)
                if plain is not None:
                    result, base_fw = plain, (getattr(base, "_fw", None),)
            new = _views.write_through(self, result, name, mark=mark)
            if track and grad_on and new.grad_fn is None and base._requires_grad:
                new = _views.cut_history(base, new, name)
            base._assign(new, track=track, box=self._vc)
            if base_fw is not None:   # the base's own tangent (if any) is not the one written
                base._fw = base_fw[0]
        if mark is not None and owner.grad_fn is not None:
            fresh = result._vc if result._base is None and result.grad_fn is not None else None
            _views.rebase_saved_versions(owner.grad_fn, self._vc, old, self._vc[0], mark, fresh,
                                         old_data)
        if before is not None and owner.grad_fn is kept:   # tg.compile: the graph sees it too
            tracer.untracked_write(owner, before)
        if kept is not None and owner.grad_fn is kept:   # an untracked write (no_grad)
            _views.replace_output(kept, owner._out_index, owner._data)
        if owner._views:
            _views.refresh(owner)
        return self

    def _inplace_apply(self, name: str, compute) -> "Tensor":
        """Run `compute()` (the out-of-place op) and take its result in place."""
        mark = next_mark()
        if self.grad_fn.__class__ is view_meta.Refused:   # torch refuses the write itself
            view_meta.check(self, self if self._base is None else self._base,
                            _state.local.grad_enabled, False)   # before reading the history
        return self._inplace(compute(), name, mark)

    def _assign(self, value: "Tensor", track: bool = True, box: list | None = None) -> None:
        """Take `value` as this tensor's new value (and its history, when `track`).

        Bumps the version counter `box` (default: own; `.data` aliases have their own).
        """
        tracer = _state.local.tracer
        if tracer is not None:   # tg.compile: lift a tensor overwritten unread (zero_, copy_)
            tracer.overwriting(self)
        self._data = value._data
        if track and value.grad_fn is not None:
            self.grad_fn, self._out_index, self._requires_grad = value.grad_fn, value._out_index, True
        if getattr(value, "_fw", None) is not None or getattr(self, "_fw", None) is not None:
            HOOKS.copy_tangent(self, value)
        (self._vc if box is None else box)[0] += 1

    def add_(self, other, alpha=1):
        if alpha != 1:
            check_alpha("add_", self, other, alpha)
        return self._inplace_apply("add_", lambda: self + (other if alpha == 1 else other * alpha))

    def sub_(self, other, alpha=1):
        if alpha != 1:
            check_alpha("sub_", self, other, alpha)
        return self._inplace_apply("sub_", lambda: self - (other if alpha == 1 else other * alpha))

    def mul_(self, other):
        return self._inplace_apply("mul_", lambda: self * other)

    def div_(self, other):
        return self._inplace_apply("div_", lambda: self / other)

    def copy_(self, src):
        src = src if isinstance(src, Tensor) else _wrap_like(src, self)
        mark = next_mark()   # the convert and expand belong to copy_ (torch's one CopyBackwards)
        return self._inplace(_ops.expand(_ops.convert(src, self.dtype), self.shape), "copy_",
                             mark)

    def zero_(self):
        return self._inplace(_ops.full(self.shape, 0, self.dtype), "zero_")

    def fill_(self, value):
        if isinstance(value, (int, float)):   # a Scalar argument: torch's overflow check
            try:
                value = check_scalar("fill_", value, self.dtype)
            except (RuntimeError, OverflowError) as e:
                raise with_location(e, _state.user_location()) from None
        return self._inplace(_ops.full(self.shape, value, self.dtype), "fill_")

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_
