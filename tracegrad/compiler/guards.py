"""Guards of `tg.compile` in words: why a call did not reuse a compiled program.

A compiled program is looked up by a key of the call (argument shapes, dtypes,
requires_grad and aliasing, static arguments, grad mode; `compile._arg_key`)
and then checked against the tensors it lifted (identity, type, hooks), the
train/eval mode of the modules it ran and which ``.grad`` attributes were
None.  The functions here turn a failed check into the one-line reason that
``TRACEGRAD_LOG=recompiles`` prints and ``TRACEGRAD_DUMP`` writes, as a typed
`GuardFailure`: the cache decides by its ``gone`` flag, never by the words.
"""
from __future__ import annotations

import inspect
import weakref
from dataclasses import dataclass
from typing import NamedTuple

from tracegrad.ir import types as T

from ..tensor import Tensor


@dataclass(frozen=True, slots=True)
class GuardFailure:
    """Why a cached program does not fit a call.

    Attributes:
        reason: one line for the log and the dump (``str(failure)``).
        gone: something the program is bound to (a lifted tensor, an optimizer) was freed,
            so the program can never run again: the cache drops it.
    """

    reason: str
    gone: bool = False

    def __str__(self) -> str:
        return self.reason

    @classmethod
    def of(cls, check_result) -> GuardFailure | None:
        """A guard check's result (None, a reason string or a GuardFailure) as a failure."""
        if check_result is None or isinstance(check_result, GuardFailure):
            return check_result
        return cls(str(check_result))


class LiftedGuard(NamedTuple):
    """What a program assumes of one lifted tensor (parameter, state): the same object
    (`ref`), with the same type, requires_grad and leaf hooks."""

    ref: weakref.ref
    type: object
    requires_grad: bool
    hooks: tuple
    shape: tuple       # the type's shape and NumPy dtype, compared with the storage's own
    dtype: object      # (cheaper than building the tensor's type on every call)


def hook_signature(t: Tensor) -> tuple:
    """Which leaf hooks a tensor has (a traced program bakes in the hooks it saw)."""
    h = getattr(t, "_hooks", None)
    return () if h is None else (tuple(h.pre), tuple(h.post_acc))


def lifted_guard(t: Tensor, requires_grad: bool) -> LiftedGuard:
    typ = t._type
    return LiftedGuard(weakref.ref(t), typ, requires_grad, hook_signature(t), typ.shape,
                       typ.dtype.numpy)


def lifted_failure(lifted: list[LiftedGuard],
                   module_guards: list[tuple]) -> GuardFailure | None:
    """Why the lifted tensors or the modules' modes no longer match, or None."""
    for ref, typ, rg, hooks, shape, dtype in lifted:
        t = ref()
        if t is None:
            return GuardFailure("a lifted tensor (parameter or state) was freed", gone=True)
        d = t._data
        if d.shape != shape or d.dtype != dtype or t._requires_grad != rg:
            return GuardFailure(f"lifted tensor changed type: {typ} -> {t._type}")
        if (hooks or getattr(t, "_hooks", None) is not None) and hook_signature(t) != hooks:
            return GuardFailure("hooks were added to or removed from a lifted tensor")
    for ref, training in module_guards:
        m = ref()
        if m is not None and m.training != training:
            return GuardFailure(f"{type(m).__name__}.training changed to {m.training} "
                                "(train()/eval())")
    return None


def describe_key_change(fn, old, new) -> str:
    """The first difference between two call keys, naming the argument as `fn` calls it:
    ``"argument x: shape (32, 8) -> (20, 8)"``."""
    if old is None:
        return "first call"
    if old == new:
        return "the program for these arguments was dropped from the cache (cache_size)"
    if old[2] != new[2]:
        return f"grad mode changed to {'enabled' if new[2] else 'disabled'}"
    if old[3] != new[3]:
        return f"tg.autocast changed: {old[3] or 'off'} -> {new[3] or 'off'}"
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    (_, a_old), (_, a_new) = old[0], new[0]
    if len(a_old) != len(a_new):
        return f"number of positional arguments changed: {len(a_old)} -> {len(a_new)}"
    for i, (x, y) in enumerate(zip(a_old, a_new)):
        found = _diff(x, y, params[i] if i < len(params) else f"args[{i}]")
        if found:
            return f"argument {found}"
    found = _diff(old[1], new[1], "**kwargs")
    return f"argument {found}" if found else "arguments changed"


def _diff(a, b, path: str) -> str | None:
    if a == b:
        return None
    if a[0] == "T" and b[0] == "T":
        parts = []
        if a[1] != b[1]:
            parts.append(f"shape {tuple(a[1])} -> {tuple(b[1])}")
        if a[2] != b[2]:
            parts.append(f"dtype {T.from_numpy(a[2]).name} -> "
                         f"{T.from_numpy(b[2]).name}")
        if a[3] != b[3]:
            parts.append(f"requires_grad {a[3]} -> {b[3]}")
        if a[4] != b[4]:
            parts.append("aliasing with another argument changed")
        return f"{path}: " + ", ".join(parts)
    if a[0] == b[0] and a[0] in ("tuple", "list") and len(a[1]) == len(b[1]):
        for i, (x, y) in enumerate(zip(a[1], b[1])):
            found = _diff(x, y, f"{path}[{i}]")
            if found:
                return found
    if a[0] == b[0] == "dict" and [k for k, _ in a[1]] == [k for k, _ in b[1]]:
        for (k, x), (_, y) in zip(a[1], b[1]):
            found = _diff(x, y, k if path == "**kwargs" else f"{path}[{k!r}]")
            if found:
                return found
    if a[0] == b[0] == "S":
        return f"{path}: static value {a[2]!r} -> {b[2]!r}"
    return f"{path}: {_kind(a)} -> {_kind(b)}"


def _kind(k) -> str:
    if k[0] == "T":
        return f"tensor {T.from_numpy(k[2]).name}{list(k[1])}"
    if k[0] == "S":
        return f"{k[1]} {k[2]!r}"
    return f"{k[0]} of {len(k[1])}"
