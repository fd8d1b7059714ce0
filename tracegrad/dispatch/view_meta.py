"""How a view was made, where torch forbids modifying it in place (torch's ``CreationMeta``).

torch refuses an in-place op, with grad mode on, on a view that requires grad when the
view is

- an output of a function returning several views (``unbind``, ``split``, ``chunk``), or a
  view of one: ``MULTI``;
- made in ``no_grad`` mode from a base that requires grad: ``NO_GRAD``;
- made in inference mode from a normal tensor: ``INFERENCE``;
- an output of a custom ``Function`` that was a view or an input returned as is:
  ``CUSTOM`` (the message names the Function).

Tensors have fixed slots, and such views are rare, so the marks live in a table keyed by
``id`` holding a weak reference (an entry goes with its tensor); the common path checks
only that the table is empty.  `check` raises torch's message; `inherit` passes a mark on
to views of a marked view, as torch does.
"""
from __future__ import annotations

import weakref

MULTI, NO_GRAD, INFERENCE, CUSTOM = "multi", "no_grad", "inference", "custom"

MARKS: dict = {}   # id(tensor) -> (weakref to it, kind, name, output index)
PACKING: list = []   # the tensors saved-tensor pack hooks are running on (innermost last)


def _drop(key: int, ref) -> None:
    entry = MARKS.get(key)
    if entry is not None and entry[0] is ref:
        del MARKS[key]


def mark(t, kind: str, name: str = "", index: int = 0) -> None:
    """Record that view `t` was made the `kind` way (`name`: the op or Function, `index`:
    which of its outputs `t` is)."""
    key = id(t)
    MARKS[key] = (weakref.ref(t, lambda r, key=key: _drop(key, r)), kind, name, index)


def mark_of(t):
    """``(kind, name, index)`` of `t`'s mark, or None."""
    entry = MARKS.get(id(t))
    if entry is None or entry[0]() is not t:
        return None
    return entry[1:]


def inherit(src, outs, op_name: str) -> None:
    """Views `outs` of `src` take a multi-view or custom-Function mark `src` has (torch
    names the newest view's op in the message)."""
    m = mark_of(src)
    if m is not None and m[0] in (MULTI, CUSTOM):
        for o in outs:
            mark(o, m[0], _camel(op_name) if m[0] == MULTI else m[1], 0)


def _camel(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


def check(t, owner, grad_on: bool, inference: bool) -> None:
    """Raise torch's error when an in-place op on `t` (whose storage `owner` holds) is one
    torch forbids for the way `t` was made (grad mode `grad_on`, inference mode `inference`)."""
    m = mark_of(t)
    if m is None:
        return
    kind, name, index = m
    if kind == INFERENCE:
        if inference:
            return
    elif not grad_on or not (owner if kind == NO_GRAD else t)._requires_grad:
        return
    if kind == MULTI:
        raise RuntimeError(
            f"Output {index} of {name} is a view and is being modified inplace. This view is the "
            "output of a function that returns multiple views. Such functions do not allow the "
            "output views to be modified inplace. You should replace the inplace operation by an "
            "out-of-place one.")
    if kind == CUSTOM:
        raise RuntimeError(
            f"Output {index} of {name} is a view and is being modified inplace. This view was "
            "created inside a custom Function (or because an input was returned as-is) and the "
            "autograd logic to handle view+inplace would override the custom backward associated "
            "with the custom Function, leading to incorrect gradients. This behavior is "
            "forbidden. You can fix this by cloning the output of the custom Function.")
    if kind == NO_GRAD:
        raise RuntimeError(
            "A view was created in no_grad mode and is being modified inplace with grad mode "
            "enabled. Given that this use case is ambiguous and error-prone, it is forbidden. "
            "You can clarify your code by moving both the view and the inplace either both "
            "inside the no_grad block (if you don't want the inplace to be tracked) or both "
            "outside (if you want the inplace to be tracked).")
    raise RuntimeError(
        "A view was created in inference mode and is being modified inplace in normal mode. "
        "Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside "
        "(if you want the inplace to be tracked).")


def check_packing(t, owner) -> None:
    """Raise torch's error when a pack hook modifies its input (or a view of it) in place."""
    for p in PACKING:
        if p is t or p is owner:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")
